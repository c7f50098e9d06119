/**
 * Signing in through the service (no HTTP), on a virtual clock: the failure budgets per email and per address, what
 * a success gives back, the window that ends a lockout, and the purge of dead sessions. The HTTP contract (cookies,
 * statuses, Retry-After, access) is in auth.test.ts.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createVirtualClock } from '../../lib/clock.js';
import { AppError } from '../../lib/errors.js';
import { buildTestServices, type TestServices } from '../../../test/service-kit.js';

const clock = createVirtualClock({ start: new Date('2026-03-02T15:00:00.000Z') });
let t: TestServices;
before(async () => (t = await buildTestServices({ clock, env: { LOGIN_MAX_FAILURES: '3' } })));
after(() => t.close());

const PASSWORD = 'long enough pw';
let addresses = 0;
/** A client address of its own, so one test's failures do not spend another's address budget. */
const newAddress = () => ({ ip: `10.30.0.${++addresses}`, userAgent: null });

async function registered() {
  const email = `user-${randomBytes(6).toString('hex')}@example.com`;
  const { userId } = await t.services.auth.register({ email, password: PASSWORD }, newAddress());
  return { email, userId };
}

/** How a login ended: 'ok', or the AppError code it failed with. */
async function attempt(email: string, password: string, client: { ip: string; userAgent: null }) {
  try {
    await t.services.auth.login({ email, password }, client);
    return 'ok';
  } catch (error) {
    assert.ok(error instanceof AppError, String(error));
    return error.code;
  }
}

test('an email has a budget of failures; once spent, even the right password waits for the window', async () => {
  const { email } = await registered();
  const client = newAddress();
  const outcomes = [];
  for (let i = 0; i < 3; i++) outcomes.push(await attempt(email, `wrong ${i}`, client));
  outcomes.push(await attempt(email, PASSWORD, client));
  // From another address: the email's budget is spent wherever the guesses come from.
  outcomes.push(await attempt(email, PASSWORD, newAddress()));
  assert.deepEqual(outcomes, ['unauthorized', 'unauthorized', 'unauthorized', 'rate_limited', 'rate_limited']);

  await assert.rejects(t.services.auth.login({ email, password: PASSWORD }, client), (error: unknown) => {
    assert.ok(error instanceof AppError);
    const wait = error.details.retryAfterSec as number;
    assert.ok(Number.isInteger(wait) && wait >= 1 && wait <= 900, String(wait));
    assert.deepEqual(error.headers, { 'Retry-After': String(wait) });
    return true;
  });
  clock.advance(15 * 60_000);
  assert.equal(await attempt(email, PASSWORD, client), 'ok', 'the window has passed');
});

test("a success clears the email's failures", async () => {
  const { email } = await registered();
  const client = newAddress();
  const outcomes = [];
  for (const password of ['wrong 1', 'wrong 2', PASSWORD, 'wrong 3', 'wrong 4', 'wrong 5', PASSWORD])
    outcomes.push(await attempt(email, password, client));
  assert.deepEqual(outcomes, [
    'unauthorized',
    'unauthorized',
    'ok',
    'unauthorized',
    'unauthorized',
    'unauthorized',
    'rate_limited',
  ]);
});

test('a successful login gives its attempt back to the address budget', async () => {
  // Five times the email budget of successful logins from one address (an office behind NAT) stay allowed.
  const { email } = await registered();
  const client = newAddress();
  for (let i = 0; i < 16; i++) assert.equal(await attempt(email, PASSWORD, client), 'ok', `login ${i + 1}`);
});

test('an address has five times the budget of an email, across the emails it tries', async () => {
  const client = newAddress();
  const outcomes = [];
  for (let i = 0; i < 16; i++) outcomes.push(await attempt(`nobody-${i}@example.com`, 'wrong', client));
  assert.deepEqual(outcomes, [...Array(15).fill('unauthorized'), 'rate_limited']);
  const { email } = await registered();
  assert.equal(await attempt(email, PASSWORD, client), 'rate_limited', 'the address waits, whoever signs in');
  assert.equal(await attempt(email, PASSWORD, newAddress()), 'ok');
});

test('the purge removes sessions that ended over a day ago, and only those', async () => {
  const dead = await registered();
  const live = await registered();
  await t.db
    .updateTable('sessions')
    .set({ expires_at: new Date(clock.now().getTime() - 3 * 86_400_000) })
    .where('user_id', '=', dead.userId)
    .execute();
  assert.ok((await t.services.auth.purgeDeadSessions()) >= 1);
  const left = async (userId: string) =>
    (await t.db.selectFrom('sessions').select('id').where('user_id', '=', userId).execute()).length;
  assert.equal(await left(dead.userId), 0);
  assert.equal(await left(live.userId), 1);
});
