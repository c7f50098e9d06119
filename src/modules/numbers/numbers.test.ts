import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { pino } from 'pino';
import { buildTestApp, errorBody, signUp, type SignedUp, type TestApp } from '../../../test/helpers.js';
import { insertCall, type SeedCall } from '../../../test/factories/calls.js';
import { startJobWorkers } from '../../background.js';
import { newId } from '../../lib/ids.js';

let t: TestApp;
// Each reading of the clock is a millisecond later than the last, so "newest first" never ties; shiftMs moves it on.
let ticks = 0;
let shiftMs = 0;
before(async () => (t = await buildTestApp({ clock: { now: () => new Date(Date.now() + shiftMs + ticks++) } })));
after(() => t.close());

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';
const call = (who: SignedUp, method: Method, url: string, payload?: unknown) =>
  t.app.inject({
    method,
    url: `/api/v1${url}`,
    headers: who.headers,
    ...(payload === undefined ? {} : { payload: payload as object }),
  });

async function ok(who: SignedUp, method: Method, url: string, payload?: unknown) {
  const response = await call(who, method, url, payload);
  assert.equal(response.statusCode, 200, `${method} ${url}: ${response.body}`);
  return response.json();
}

const addNumber = (who: SignedUp, number: string) => ok(who, 'POST', '/phone-numbers', { number });
const createAgent = (who: SignedUp, name = 'Receptionist') => ok(who, 'POST', '/agents', { name });
const agentOf = async (who: SignedUp, id: string) =>
  (await ok(who, 'GET', `/agents/${id}`)) as { inboundDid: string | null };
const numberRows = (accountId: string) =>
  t.infra.database.db.selectFrom('phone_numbers').selectAll().where('account_id', '=', accountId).execute();
const eventTypes = async (accountId: string) =>
  (
    await t.infra.database.db
      .selectFrom('domain_events')
      .select(['type', 'data'])
      .where('account_id', '=', accountId)
      .orderBy('occurred_at')
      .execute()
  ).filter((e) => e.type.startsWith('phone_number.'));

test('adding a number the account owns: normalized to E.164, listed with its country and area code', async () => {
  const user = await signUp(t.app);
  const added = await addNumber(user, '(415) 555-2671');
  assert.deepEqual(
    { ...added, id: undefined, createdAt: undefined, updatedAt: undefined },
    {
      id: undefined,
      number: '+14155552671',
      country: 'US',
      areaCode: '415',
      capabilities: ['voice'],
      agentId: null,
      source: 'byo',
      monthlyFeeUsd: '0.00',
      reputation: null,
      createdAt: undefined,
      updatedAt: undefined,
    },
  );
  const london = await addNumber(user, '+44 20 7946 0958');
  assert.equal(london.number, '+442079460958');
  assert.equal(london.country, 'GB');
  assert.equal(london.areaCode, null, 'outside +1 the area code of a brought number is not known');

  const list = await ok(user, 'GET', '/phone-numbers');
  assert.equal(list.total, 2);
  assert.deepEqual(
    list.phoneNumbers.map((n: { number: string }) => n.number),
    ['+442079460958', '+14155552671'],
  );
  const page = await ok(user, 'GET', '/phone-numbers?limit=1&offset=1');
  assert.deepEqual([page.phoneNumbers.length, page.total, page.limit, page.offset], [1, 2, 1, 1]);
  assert.equal(page.phoneNumbers[0].number, '+14155552671');
  assert.deepEqual(
    (await eventTypes(user.accountId)).map((e) => e.type),
    ['phone_number.added', 'phone_number.added'],
  );
});

test('bad numbers are a 400 naming the field, and write nothing', async () => {
  const user = await signUp(t.app);
  const bad: unknown[] = [
    { number: '+1415555' },
    { number: '+999123456789' },
    { number: 'not a phone' },
    { number: '+1 415 555\u00002671' },
    { number: 'tel:+14155552671' },
    { number: '+1 (415) 555-2671 x12' },
    { number: '' },
    { number: '+8008001234' },
    { number: 14155552671 },
    { number: '+14155552671', agentId: null },
    {},
  ];
  for (const payload of bad) {
    const response = await call(user, 'POST', '/phone-numbers', payload);
    assert.equal(response.statusCode, 400, `${JSON.stringify(payload)}: ${response.body}`);
    const body = errorBody(response);
    assert.equal(body.error, 'validation_failed');
    assert.ok((body.details.fields as Array<{ field: string }>)[0]!.field.startsWith('body'), JSON.stringify(body));
  }
  const tooShort = errorBody(await call(user, 'POST', '/phone-numbers', { number: '+1415555' }));
  assert.match(tooShort.message, /body\/number is not a valid phone number/);
  const global = errorBody(await call(user, 'POST', '/phone-numbers', { number: '+80012345678' }));
  assert.match(global.message, /belongs to no country/);
  assert.deepEqual(await numberRows(user.accountId), []);
  assert.deepEqual(await eventTypes(user.accountId), []);
});

test('a number belongs to one account on the whole platform: a second one adding it gets 409', async () => {
  const alice = await signUp(t.app);
  const bob = await signUp(t.app);
  const added = await addNumber(alice, '+12125550147');
  const again = await call(alice, 'POST', '/phone-numbers', { number: '212-555-0147' });
  assert.equal(again.statusCode, 409);
  assert.deepEqual(errorBody(again), {
    error: 'conflict',
    message: "+12125550147 is already one of this account's numbers",
    details: { number: '+12125550147', id: added.id },
  });
  const theirs = await call(bob, 'POST', '/phone-numbers', { number: '+1 212 555 0147' });
  assert.equal(theirs.statusCode, 409);
  assert.deepEqual(errorBody(theirs), {
    error: 'conflict',
    message: '+12125550147 is already registered to another account',
    details: { number: '+12125550147' },
  });
  assert.equal((await numberRows(bob.accountId)).length, 0);
  assert.equal((await ok(bob, 'GET', '/phone-numbers')).total, 0);
});

test("assigning routes the number to the agent; the agent's inboundDid follows", async () => {
  const user = await signUp(t.app);
  const number = await addNumber(user, '+14155550111');
  const agent = await createAgent(user);
  const assigned = await ok(user, 'PATCH', `/phone-numbers/${number.id}`, { agentId: agent.id });
  assert.equal(assigned.agentId, agent.id);
  assert.equal((await agentOf(user, agent.id)).inboundDid, '+14155550111');
  const listed = (await ok(user, 'GET', '/agents')).agents[0];
  assert.equal(listed.inboundDid, '+14155550111');

  const same = await ok(user, 'PATCH', `/phone-numbers/${number.id}`, { agentId: agent.id });
  assert.equal(same.updatedAt, assigned.updatedAt, 'assigning the same agent again changes nothing');

  const cleared = await ok(user, 'PATCH', `/phone-numbers/${number.id}`, { agentId: null });
  assert.equal(cleared.agentId, null);
  assert.equal((await agentOf(user, agent.id)).inboundDid, null);

  const events = await eventTypes(user.accountId);
  assert.deepEqual(
    events.map((e) => [e.type, e.data.agentId ?? null, e.data.previousAgentId ?? null]),
    [
      ['phone_number.added', null, null],
      ['phone_number.assigned', agent.id, null],
      ['phone_number.assigned', null, agent.id],
    ],
  );
});

test('an agent has one inbound number: assigning it a second moves it; moving a number moves its agent', async () => {
  const user = await signUp(t.app);
  const first = await addNumber(user, '+14155550121');
  const second = await addNumber(user, '+14155550122');
  const sally = await createAgent(user, 'Sally');
  const tom = await createAgent(user, 'Tom');

  await ok(user, 'PATCH', `/phone-numbers/${first.id}`, { agentId: sally.id });
  await ok(user, 'PATCH', `/phone-numbers/${second.id}`, { agentId: sally.id });
  const byNumber = async () =>
    Object.fromEntries(
      (await ok(user, 'GET', '/phone-numbers')).phoneNumbers.map((n: { number: string; agentId: string | null }) => [
        n.number,
        n.agentId,
      ]),
    );
  assert.deepEqual(await byNumber(), { '+14155550121': null, '+14155550122': sally.id });
  assert.equal((await agentOf(user, sally.id)).inboundDid, '+14155550122');
  const unassigned = await ok(user, 'GET', '/phone-numbers/unassigned');
  assert.deepEqual([unassigned.total, unassigned.phoneNumbers[0].number], [1, '+14155550121']);

  // Sally's number goes to Tom: Sally has none left.
  await ok(user, 'PATCH', `/phone-numbers/${second.id}`, { agentId: tom.id });
  assert.deepEqual(await byNumber(), { '+14155550121': null, '+14155550122': tom.id });
  assert.equal((await agentOf(user, sally.id)).inboundDid, null);
  assert.equal((await agentOf(user, tom.id)).inboundDid, '+14155550122');

  // Tom takes the first number: his second one is freed.
  await ok(user, 'PATCH', `/phone-numbers/${first.id}`, { agentId: tom.id });
  assert.deepEqual(await byNumber(), { '+14155550121': tom.id, '+14155550122': null });
  assert.equal((await agentOf(user, tom.id)).inboundDid, '+14155550121');
  assert.equal((await ok(user, 'GET', '/phone-numbers/unassigned')).phoneNumbers[0].number, '+14155550122');
});

test('assignment refuses bad bodies and unknown agents, and changes nothing', async () => {
  const user = await signUp(t.app);
  const number = await addNumber(user, '+14155550131');
  const agent = await createAgent(user);
  await ok(user, 'PATCH', `/phone-numbers/${number.id}`, { agentId: agent.id });
  for (const payload of [{}, { agentId: 'nope' }, { agentId: 5 }, { agentId: agent.id, number: '+1' }]) {
    const response = await call(user, 'PATCH', `/phone-numbers/${number.id}`, payload);
    assert.equal(response.statusCode, 400, `${JSON.stringify(payload)}: ${response.body}`);
    assert.equal(errorBody(response).error, 'validation_failed');
  }
  const missing = await call(user, 'PATCH', `/phone-numbers/${number.id}`, {
    agentId: '00000000-0000-4000-8000-000000000009',
  });
  assert.equal(missing.statusCode, 404);
  assert.equal(errorBody(missing).message, 'Agent not found');
  assert.equal((await agentOf(user, agent.id)).inboundDid, '+14155550131', 'the failed move left the old agent routed');
  assert.equal((await numberRows(user.accountId))[0]!.agent_id, agent.id);
  assert.equal((await call(user, 'PATCH', '/phone-numbers/not-a-uuid', { agentId: null })).statusCode, 400);
});

test("deleting a number releases its agent's inboundDid; the number can then be added again", async () => {
  const alice = await signUp(t.app);
  const bob = await signUp(t.app);
  const number = await addNumber(alice, '+14155550141');
  const agent = await createAgent(alice);
  await ok(alice, 'PATCH', `/phone-numbers/${number.id}`, { agentId: agent.id });
  assert.deepEqual(await ok(alice, 'DELETE', `/phone-numbers/${number.id}`), { id: number.id, deleted: true });
  assert.equal((await agentOf(alice, agent.id)).inboundDid, null);
  assert.equal((await ok(alice, 'GET', '/phone-numbers')).total, 0);
  assert.equal((await call(alice, 'DELETE', `/phone-numbers/${number.id}`)).statusCode, 404);
  const released = (await eventTypes(alice.accountId)).at(-1)!;
  assert.deepEqual(released, {
    type: 'phone_number.released',
    data: { number: '+14155550141', source: 'byo', agentId: agent.id },
  });
  // Released, it is free for anyone.
  assert.equal((await addNumber(bob, '+14155550141')).number, '+14155550141');
});

test('the inbound route names the agent that takes calls to a number of the account', async () => {
  const user = await signUp(t.app);
  const other = await signUp(t.app);
  const number = await addNumber(user, '+14155550151');
  const route = (who: SignedUp, to: string) => call(who, 'GET', `/inbound/route?to=${encodeURIComponent(to)}`);

  const unrouted = await route(user, '+14155550151');
  assert.equal(unrouted.statusCode, 404);
  assert.match(errorBody(unrouted).message, /No agent takes calls to \+14155550151/);

  const agent = await createAgent(user, 'Front desk');
  await ok(user, 'PATCH', `/phone-numbers/${number.id}`, { agentId: agent.id });
  for (const to of ['+14155550151', '(415) 555-0151', '415.555.0151']) {
    const found = await route(user, to);
    assert.equal(found.statusCode, 200, `${to}: ${found.body}`);
    assert.deepEqual(found.json(), {
      number: '+14155550151',
      phoneNumberId: number.id,
      agentId: agent.id,
      agentName: 'Front desk',
      agentStatus: 'draft',
      accountId: user.accountId,
    });
  }
  // Only within the caller's account: another account's number is not found.
  const elsewhere = await route(other, '+14155550151');
  assert.equal(elsewhere.statusCode, 404);
  assert.equal(errorBody(elsewhere).message, "+14155550151 is not one of this account's numbers");
  assert.equal((await route(user, '+14155550199')).statusCode, 404);
  for (const bad of ['', 'abc', '+1415', '\u0000+14155550151'])
    assert.equal((await route(user, bad)).statusCode, 400, JSON.stringify(bad));
  assert.equal((await call(user, 'GET', '/inbound/route')).statusCode, 400);

  // What the call engine uses: the same lookup across accounts, by E.164 alone.
  assert.deepEqual(await t.services.numbers.routeInbound('+14155550151'), {
    accountId: user.accountId,
    phoneNumberId: number.id,
    number: '+14155550151',
    agentId: agent.id,
    agentName: 'Front desk',
    agentStatus: 'draft',
  });
  assert.equal(await t.services.numbers.routeInbound('+14155550199'), null);
});

test("another account's number answers 404 on every id route and is never changed", async () => {
  const alice = await signUp(t.app);
  const bob = await signUp(t.app);
  const number = await addNumber(alice, '+14155550161');
  const bobsAgent = await createAgent(bob);
  for (const [method, url, payload] of [
    ['PATCH', `/phone-numbers/${number.id}`, { agentId: bobsAgent.id }],
    ['PATCH', `/phone-numbers/${number.id}`, { agentId: null }],
    ['DELETE', `/phone-numbers/${number.id}`],
    ['POST', `/phone-numbers/${number.id}/recheck-reputation`],
  ] as Array<[Method, string, object?]>) {
    const response = await call(bob, method, url, payload);
    assert.equal(response.statusCode, 404, `${method} ${url}`);
    assert.deepEqual(errorBody(response), { error: 'not_found', message: 'Phone number not found', details: {} });
  }
  // Nor can Alice route her number to Bob's agent.
  const foreignAgent = await call(alice, 'PATCH', `/phone-numbers/${number.id}`, { agentId: bobsAgent.id });
  assert.equal(foreignAgent.statusCode, 404);
  assert.equal(errorBody(foreignAgent).message, 'Agent not found');
  assert.equal((await agentOf(bob, bobsAgent.id)).inboundDid, null);
  assert.equal((await ok(bob, 'GET', '/phone-numbers')).total, 0);
  assert.equal((await ok(bob, 'GET', '/phone-numbers/unassigned')).total, 0);
  assert.equal((await ok(bob, 'GET', '/phone-numbers/reputation')).total, 0);
  const [row] = await numberRows(alice.accountId);
  assert.equal(row!.agent_id, null);
  assert.equal(row!.reputation_checked_at, null);
});

test('numbers: anyone reads, members route, admins add, buy and release', async () => {
  const owner = await signUp(t.app);
  const number = await addNumber(owner, '+14155550171');
  const agent = await createAgent(owner);
  const asRole = async (role: 'viewer' | 'member' | 'admin') => {
    const user = await signUp(t.app);
    await t.infra.database.db
      .insertInto('memberships')
      .values({ account_id: owner.accountId, user_id: user.userId, role })
      .execute();
    const cookie = { cookie: user.cookie };
    const switched = await t.app.inject({
      method: 'POST',
      url: '/api/v1/auth/switch-account',
      headers: cookie,
      payload: { accountId: owner.accountId },
    });
    assert.equal(switched.statusCode, 200);
    return (method: Method, url: string, payload?: object) =>
      t.app.inject({ method, url: `/api/v1${url}`, headers: cookie, ...(payload ? { payload } : {}) });
  };
  const viewer = await asRole('viewer');
  const member = await asRole('member');
  assert.equal((await viewer('GET', '/phone-numbers')).statusCode, 200);
  assert.equal((await viewer('PATCH', `/phone-numbers/${number.id}`, { agentId: agent.id })).statusCode, 403);
  assert.equal((await member('PATCH', `/phone-numbers/${number.id}`, { agentId: agent.id })).statusCode, 200);
  assert.equal((await member('POST', `/phone-numbers/${number.id}/recheck-reputation`)).statusCode, 200);
  const buying = await member('POST', '/phone-numbers/inventory/purchase', { country: 'US', areaCode: '415' });
  assert.equal(buying.statusCode, 403);
  assert.equal(errorBody(buying).error, 'forbidden');
  assert.equal((await member('POST', '/phone-numbers', { number: '+14155550172' })).statusCode, 403);
  assert.equal((await member('DELETE', `/phone-numbers/${number.id}`)).statusCode, 403);
  assert.equal((await numberRows(owner.accountId)).length, 1);
});

test("deleting an agent frees its number a moment later (the agent's inboundDid is cleared at once)", async () => {
  const user = await signUp(t.app);
  const number = await addNumber(user, '+14155550181');
  const agent = await createAgent(user);
  await ok(user, 'PATCH', `/phone-numbers/${number.id}`, { agentId: agent.id });
  const workers = await startJobWorkers({
    db: t.infra.database.db,
    services: t.services,
    log: pino({ level: 'silent' }),
    pollingIntervalSeconds: 0.5,
  });
  try {
    await ok(user, 'DELETE', `/agents/${agent.id}`);
    // Routing stops at once: the number's agent is gone.
    assert.equal((await call(user, 'GET', `/inbound/route?to=${encodeURIComponent('+14155550181')}`)).statusCode, 404);
    assert.equal((await t.services.numbers.routeInbound('+14155550181'))!.agentId, null);
    let unassigned = await ok(user, 'GET', '/phone-numbers/unassigned');
    for (let i = 0; i < 300 && unassigned.total === 0; i++) {
      await sleep(100);
      unassigned = await ok(user, 'GET', '/phone-numbers/unassigned');
    }
    assert.equal(unassigned.total, 1);
    assert.equal(unassigned.phoneNumbers[0].agentId, null);
    const last = (await eventTypes(user.accountId)).at(-1)!;
    assert.deepEqual(last, {
      type: 'phone_number.assigned',
      data: { number: '+14155550181', agentId: null, previousAgentId: agent.id, reason: 'agent_deleted' },
    });
    // Delivered twice, the second delivery frees nothing.
    const event = await t.infra.database.db
      .selectFrom('domain_events')
      .select('id')
      .where('type', '=', 'agent.deleted')
      .where('subject_id', '=', agent.id)
      .executeTakeFirstOrThrow();
    assert.equal(await t.services.numbers.releaseDeletedAgent((await t.services.events.find(event.id))!), 0);
  } finally {
    await workers.stop(5_000);
  }
});

const HOUR_MS = 3_600_000;

/** `count` outbound calls from `fromNumber` ending, as the numbers module hears of them (their end events). */
async function callsEnded(
  who: SignedUp,
  fromNumber: string,
  count: number,
  call: { answered?: boolean; durationSeconds?: number; endedHoursAgo?: number } = {},
) {
  for (let i = 0; i < count; i++) {
    await t.services.numbers.recordCallEnded({
      accountId: who.accountId,
      subject: { id: newId() },
      occurredAt: new Date(Date.now() - (call.endedHoursAgo ?? 1) * HOUR_MS + i * 1000),
      data: {
        direction: 'outbound',
        fromNumber,
        answeredAt: call.answered ? new Date().toISOString() : null,
        durationSeconds: call.durationSeconds ?? (call.answered ? 60 : null),
      },
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
const reputationIn =
  (list: { reputations: Reputation[] }) =>
  (number: string): Reputation => {
    const found = list.reputations.find((r) => r.number === number);
    assert.ok(found, `${number} is in the reputation list`);
    return found;
  };
const summary = (r: Reputation) => [r.score, r.label, r.calls24h, r.answeredCalls24h, r.shortCalls24h, r.answerRate];

test("reputation is computed from each number's own outbound calls that ended in the last 24 hours, and listed", async () => {
  const user = await signUp(t.app);
  const other = await signUp(t.app);
  const quiet = await addNumber(user, '+14155550201');
  const healthy = await addNumber(user, '+14155550202');
  const risky = await addNumber(user, '+14155550203');
  const spammy = await addNumber(user, '+14155550204');

  await callsEnded(user, healthy.number, 10, { answered: true });
  await callsEnded(user, risky.number, 2, { answered: true });
  await callsEnded(user, risky.number, 4, { answered: true, durationSeconds: 5 });
  await callsEnded(user, risky.number, 24);
  await callsEnded(user, spammy.number, 90);
  // None of these count: ended over 24 hours ago, another account's.
  await callsEnded(user, risky.number, 5, { endedHoursAgo: 25 });
  await callsEnded(other, risky.number, 5);

  const list = await ok(user, 'GET', '/phone-numbers/reputation');
  assert.equal(list.total, 4);
  const reputations = reputationIn(list);
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
  const number = await addNumber(user, '+14155550211');
  const first = reputationIn(await ok(user, 'GET', '/phone-numbers/reputation'))(number.number);
  assert.deepEqual(summary(first), [100, 'clean', 0, 0, 0, null]);

  await callsEnded(user, number.number, 20);
  const cached = reputationIn(await ok(user, 'GET', '/phone-numbers/reputation'))(number.number);
  assert.deepEqual(cached, first, 'read again within the hour: the same check');

  const rechecked: Reputation = await ok(user, 'POST', `/phone-numbers/${number.id}/recheck-reputation`);
  assert.deepEqual(summary(rechecked), [50, 'at_risk', 20, 0, 0, 0]);
  assert.ok(rechecked.checkedAt > first.checkedAt);
  assert.deepEqual(reputationIn(await ok(user, 'GET', '/phone-numbers/reputation'))(number.number), rechecked);
  assert.deepEqual((await ok(user, 'GET', '/phone-numbers')).phoneNumbers[0].reputation.score, 50);

  // Past the hour, reading checks again: the calls have aged out of the 24-hour window by then.
  shiftMs = 25 * HOUR_MS;
  try {
    const later = reputationIn(await ok(user, 'GET', '/phone-numbers/reputation'))(number.number);
    assert.deepEqual(summary(later), [100, 'clean', 0, 0, 0, null]);
  } finally {
    shiftMs = 0;
  }

  const missing = await call(user, 'POST', '/phone-numbers/00000000-0000-4000-8000-000000000009/recheck-reputation');
  assert.equal(missing.statusCode, 404);
  assert.equal(errorBody(missing).error, 'not_found');
});

test("a call's end delivered twice counts once; a number's calls too old to count are forgotten", async () => {
  const user = await signUp(t.app);
  const number = await addNumber(user, '+14155550221');
  const recorded = () =>
    t.infra.database.db
      .selectFrom('number_calls')
      .select(['call_id', 'answered', 'short'])
      .where('account_id', '=', user.accountId)
      .where('from_number', '=', number.number)
      .orderBy('ended_at')
      .execute();
  await callsEnded(user, number.number, 2, { endedHoursAgo: 72 });
  const event = {
    accountId: user.accountId,
    subject: { id: newId() },
    occurredAt: new Date(),
    data: {
      direction: 'outbound',
      fromNumber: number.number,
      answeredAt: new Date().toISOString(),
      durationSeconds: 4,
    },
  };
  assert.deepEqual(await t.services.numbers.recordCallEnded(event), { recorded: true });
  assert.deepEqual(await t.services.numbers.recordCallEnded(event), { recorded: true });
  assert.deepEqual(await recorded(), [{ call_id: event.subject.id, answered: true, short: true }]);
  const rechecked = await ok(user, 'POST', `/phone-numbers/${number.id}/recheck-reputation`);
  assert.deepEqual([rechecked.calls24h, rechecked.answeredCalls24h, rechecked.shortCalls24h], [1, 1, 1]);
  // An inbound call is no caller number's.
  const inbound = { ...event, subject: { id: newId() }, data: { ...event.data, direction: 'inbound' } };
  assert.deepEqual(await t.services.numbers.recordCallEnded(inbound), { recorded: false });
});

test('calls that ended before the numbers module kept its record are counted from the call history', async () => {
  const user = await signUp(t.app);
  const number = await addNumber(user, '+14155550231');
  const seed = async (count: number, call: SeedCall) => {
    for (let i = 0; i < count; i++)
      await insertCall(t.infra.database.db, user.accountId, {
        fromNumber: number.number,
        createdAt: new Date(Date.now() - HOUR_MS),
        ...call,
      });
  };
  await seed(3, { status: 'completed', durationSeconds: 60 });
  await seed(2, { status: 'completed', durationSeconds: 5 });
  await seed(4, { status: 'no_answer' });
  // Not counted: inbound, not yet ended, ended days ago.
  await seed(3, { status: 'no_answer', direction: 'inbound' });
  await seed(3, { status: 'queued' });
  await seed(3, { status: 'connected' });
  await seed(3, { status: 'busy', createdAt: new Date(Date.now() - 80 * HOUR_MS) });

  // The migration that made the record filled it from the calls then in the history: run its fill again.
  const migration = await readFile(new URL('../../db/migrations/0016_number_calls.sql', import.meta.url), 'utf8');
  const fill = migration.slice(migration.indexOf('INSERT INTO number_calls'));
  await sql.raw(fill).execute(t.infra.database.db);

  const rechecked = await ok(user, 'POST', `/phone-numbers/${number.id}/recheck-reputation`);
  assert.deepEqual([rechecked.calls24h, rechecked.answeredCalls24h, rechecked.shortCalls24h], [9, 5, 2]);
});
