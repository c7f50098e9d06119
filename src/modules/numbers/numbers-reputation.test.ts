import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, errorBody, signUp, type SignedUp, type TestApp } from '../../../test/helpers.js';
import { insertCall, type SeedCall } from '../../../test/factories/calls.js';
import { scoreReputation } from './reputation.js';

let t: TestApp;
let ticks = 0;
let shiftMs = 0;
before(async () => (t = await buildTestApp({ clock: { now: () => new Date(Date.now() + shiftMs + ticks++) } })));
after(() => t.close());

const HOUR_MS = 3_600_000;
type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';
async function ok(who: SignedUp, method: Method, url: string, payload?: unknown) {
  const response = await t.app.inject({
    method,
    url: `/api/v1${url}`,
    headers: who.headers,
    ...(payload === undefined ? {} : { payload: payload as object }),
  });
  assert.equal(response.statusCode, 200, `${method} ${url}: ${response.body}`);
  return response.json();
}

/** `count` outbound calls from `fromNumber`, created within the last hour unless told otherwise. */
async function calls(who: SignedUp, fromNumber: string, count: number, seed: SeedCall = {}) {
  for (let i = 0; i < count; i++) {
    await insertCall(t.infra.database.db, who.accountId, {
      fromNumber,
      createdAt: new Date(Date.now() - HOUR_MS + i * 1000),
      ...seed,
    });
  }
}

type Reputation = {
  phoneNumberId: string;
  number: string;
  score: number;
  label: string;
  calls24h: number;
  answeredCalls24h: number;
  shortCalls24h: number;
  answerRate: number | null;
  checkedAt: string;
};
/** The list's reputations, looked up by number. */
const byNumber =
  (list: { reputations: Reputation[] }) =>
  (number: string): Reputation => {
    const found = list.reputations.find((r) => r.number === number);
    assert.ok(found, `${number} is in the reputation list`);
    return found;
  };
const summary = (r: Reputation) => [r.score, r.label, r.calls24h, r.answeredCalls24h, r.shortCalls24h, r.answerRate];

test('the score follows the README formula', () => {
  assert.deepEqual(scoreReputation({ calls: 0, answered: 0, short: 0 }), { score: 100, label: 'clean' });
  assert.deepEqual(scoreReputation({ calls: 10, answered: 10, short: 0 }), { score: 100, label: 'clean' });
  // A few unanswered calls say little: the penalties grow to full weight at 20 calls.
  assert.deepEqual(scoreReputation({ calls: 4, answered: 0, short: 0 }), { score: 90, label: 'clean' });
  assert.deepEqual(scoreReputation({ calls: 20, answered: 0, short: 0 }), { score: 50, label: 'at_risk' });
  assert.deepEqual(scoreReputation({ calls: 20, answered: 12, short: 0 }), { score: 100, label: 'clean' });
  assert.deepEqual(scoreReputation({ calls: 20, answered: 20, short: 20 }), { score: 65, label: 'at_risk' });
  assert.deepEqual(scoreReputation({ calls: 30, answered: 6, short: 4 }), { score: 43, label: 'at_risk' });
  assert.deepEqual(scoreReputation({ calls: 90, answered: 0, short: 0 }), { score: 38, label: 'spam_likely' });
  assert.deepEqual(scoreReputation({ calls: 500, answered: 0, short: 0 }), { score: 20, label: 'spam_likely' });
  assert.deepEqual(scoreReputation({ calls: 500, answered: 100, short: 100 }), { score: 2, label: 'spam_likely' });
});

test("reputation is computed from each number's own outbound calls of the last 24 hours, and shown in the list", async () => {
  const user = await signUp(t.app);
  const other = await signUp(t.app);
  const quiet = await ok(user, 'POST', '/phone-numbers', { number: '+14155550201' });
  const healthy = await ok(user, 'POST', '/phone-numbers', { number: '+14155550202' });
  const risky = await ok(user, 'POST', '/phone-numbers', { number: '+14155550203' });
  const spammy = await ok(user, 'POST', '/phone-numbers', { number: '+14155550204' });

  await calls(user, healthy.number, 10, { status: 'completed' });
  await calls(user, risky.number, 2, { status: 'completed' });
  await calls(user, risky.number, 4, { status: 'completed', durationSeconds: 5 });
  await calls(user, risky.number, 24, { status: 'no_answer' });
  await calls(user, spammy.number, 90, { status: 'no_answer' });
  // None of these count: inbound, not yet placed, older than 24 hours, another account's.
  await calls(user, risky.number, 5, { direction: 'inbound', status: 'no_answer' });
  await calls(user, risky.number, 5, { status: 'queued' });
  await calls(user, risky.number, 5, { status: 'no_answer', createdAt: new Date(Date.now() - 25 * HOUR_MS) });
  await calls(other, risky.number, 5, { status: 'no_answer' });

  const list = await ok(user, 'GET', '/phone-numbers/reputation');
  assert.equal(list.total, 4);
  const reputations = byNumber(list);
  assert.deepEqual(summary(reputations(quiet.number)), [100, 'clean', 0, 0, 0, null]);
  assert.deepEqual(summary(reputations(healthy.number)), [100, 'clean', 10, 10, 0, 1]);
  assert.deepEqual(summary(reputations(risky.number)), [43, 'at_risk', 30, 6, 4, 0.2]);
  assert.deepEqual(summary(reputations(spammy.number)), [38, 'spam_likely', 90, 0, 0, 0]);
  assert.equal(reputations(risky.number).phoneNumberId, risky.id);

  // The list of numbers shows the stored check.
  const numbers = await ok(user, 'GET', '/phone-numbers?limit=10');
  const shown = Object.fromEntries(
    numbers.phoneNumbers.map((n: { number: string; reputation: unknown }) => [n.number, n.reputation]),
  );
  const { phoneNumberId: _id, number: _number, ...stored } = reputations(risky.number);
  assert.deepEqual(shown[risky.number], stored);

  // What the call engine calls from when no number is named: the best reputation, then the oldest.
  assert.deepEqual(await t.services.numbers.callerNumber(user.accountId), { id: quiet.id, number: quiet.number });
  assert.deepEqual(await t.services.numbers.callerNumber(user.accountId, spammy.id), {
    id: spammy.id,
    number: spammy.number,
  });
  await assert.rejects(t.services.numbers.callerNumber(other.accountId, spammy.id), /Phone number not found/);
  assert.equal(await t.services.numbers.callerNumber(other.accountId), null);
});

test('a check is kept for an hour when read; a recheck redoes it at once', async () => {
  const user = await signUp(t.app);
  const number = await ok(user, 'POST', '/phone-numbers', { number: '+14155550211' });
  const first = byNumber(await ok(user, 'GET', '/phone-numbers/reputation'))(number.number);
  assert.deepEqual(summary(first), [100, 'clean', 0, 0, 0, null]);

  await calls(user, number.number, 20, { status: 'no_answer' });
  const cached = byNumber(await ok(user, 'GET', '/phone-numbers/reputation'))(number.number);
  assert.deepEqual(cached, first, 'read again within the hour: the same check');

  const rechecked: Reputation = await ok(user, 'POST', `/phone-numbers/${number.id}/recheck-reputation`);
  assert.deepEqual(summary(rechecked), [50, 'at_risk', 20, 0, 0, 0]);
  assert.ok(rechecked.checkedAt > first.checkedAt);
  assert.deepEqual(byNumber(await ok(user, 'GET', '/phone-numbers/reputation'))(number.number), rechecked);
  assert.deepEqual((await ok(user, 'GET', '/phone-numbers')).phoneNumbers[0].reputation.score, 50);

  // Past the hour, reading checks again: the calls have aged out of the 24-hour window by then.
  shiftMs = 25 * HOUR_MS;
  try {
    const later = byNumber(await ok(user, 'GET', '/phone-numbers/reputation'))(number.number);
    assert.deepEqual(summary(later), [100, 'clean', 0, 0, 0, null]);
  } finally {
    shiftMs = 0;
  }

  const missing = await t.app.inject({
    method: 'POST',
    url: '/api/v1/phone-numbers/00000000-0000-4000-8000-000000000009/recheck-reputation',
    headers: user.headers,
  });
  assert.equal(missing.statusCode, 404);
  assert.equal(errorBody(missing).error, 'not_found');
});
