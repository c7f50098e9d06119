/**
 * Signing in over HTTP: register, the session cookie, login and its throttling as statuses and Retry-After, logout,
 * password change, sessions, switching accounts, and access. The throttling budgets themselves, and the purge of dead
 * sessions, are tested through the service in auth.service.test.ts.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { asRole, buildTestApp, call, errorBody, signUp, type TestApp } from '../../../test/helpers.js';
import { newId } from '../../lib/ids.js';

let t: TestApp;
before(async () => (t = await buildTestApp({ env: { LOGIN_MAX_FAILURES: '3' } })));
after(() => t.close());

const login = (email: string, password: string, headers: Record<string, string> = {}, remoteAddress?: string) =>
  t.app.inject({
    method: 'POST',
    url: '/api/v1/auth/login',
    payload: { email, password },
    headers,
    ...(remoteAddress ? { remoteAddress } : {}),
  });

const sessionCookie = (response: Awaited<ReturnType<typeof login>>) =>
  `vsid=${response.cookies.find((c) => c.name === 'vsid')!.value}`;

test('register creates a user, an account with the user as owner, and a session', async () => {
  const response = await t.app.inject({
    method: 'POST',
    url: '/api/v1/auth/register',
    payload: { email: 'Owner@Example.com', password: 'long enough pw', name: 'Olga', accountName: 'Acme Sales' },
  });
  assert.equal(response.statusCode, 200);
  const me = await t.app.inject({
    method: 'GET',
    url: '/api/v1/auth/me',
    headers: { cookie: sessionCookie(response) },
  });
  assert.equal(me.statusCode, 200);
  const body = me.json();
  assert.equal(body.user.email, 'Owner@Example.com');
  assert.equal(body.account.name, 'Acme Sales');
  assert.equal(body.account.role, 'owner');
  assert.equal(body.scheme, 'session');
  assert.deepEqual(body.accounts, [{ id: body.account.id, name: 'Acme Sales', role: 'owner' }]);

  const again = await t.app.inject({
    method: 'POST',
    url: '/api/v1/auth/register',
    payload: { email: 'owner@example.com', password: 'another pw1' },
  });
  assert.equal(again.statusCode, 409);
  assert.equal(errorBody(again).error, 'conflict');
});

test('register rejects bad input and writes nothing', async () => {
  const before = await t.infra.database.db
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  for (const payload of [
    { email: 'not-an-email', password: 'long enough' },
    { email: 'a@b.co', password: 'short' },
    { email: 'a@b.co' },
    { email: 'a@b.co', password: 12345678 },
  ]) {
    const response = await t.app.inject({ method: 'POST', url: '/api/v1/auth/register', payload });
    assert.equal(response.statusCode, 400, JSON.stringify(payload));
    const body = errorBody(response);
    assert.equal(body.error, 'validation_failed');
    assert.ok(Array.isArray(body.details.fields) && body.details.fields.length > 0);
  }
  const after = await t.infra.database.db
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  assert.equal(after.n, before.n);
});

test('the vsid cookie is opaque, HttpOnly, SameSite=Lax, scoped to /api, and stored hashed', async () => {
  const user = await signUp(t.app);
  const response = await login(user.email, user.password);
  assert.equal(response.statusCode, 200);
  const cookie = response.cookies.find((c) => c.name === 'vsid')!;
  assert.match(cookie.value, /^[0-9A-Za-z]{32}$/);
  assert.equal(cookie.httpOnly, true);
  assert.equal(cookie.sameSite, 'Lax');
  assert.equal(cookie.path, '/api');
  assert.equal(cookie.secure, undefined, 'not Secure over plain http');
  const stored = await t.infra.database.db
    .selectFrom('sessions')
    .select('token_hash')
    .where('user_id', '=', user.userId)
    .execute();
  assert.ok(stored.every((s) => s.token_hash !== cookie.value && s.token_hash.length === 64));
});

test('the cookie is Secure behind https', async () => {
  const secure = await buildTestApp({ env: { PUBLIC_BASE_URL: 'https://parley.example.com' } });
  try {
    const response = await secure.app.inject({
      method: 'POST',
      url: '/api/v1/auth/register',
      payload: { email: 's@example.com', password: 'long enough pw' },
    });
    assert.equal(response.cookies.find((c) => c.name === 'vsid')!.secure, true);
  } finally {
    await secure.close();
  }
});

test('wrong password and unknown email get the same 401', async () => {
  const user = await signUp(t.app);
  const wrong = await login(user.email, 'wrong password');
  const unknown = await login('nobody@example.com', 'whatever pw');
  assert.equal(wrong.statusCode, 401);
  assert.equal(unknown.statusCode, 401);
  assert.equal(errorBody(wrong).message, errorBody(unknown).message);
});

test('login is throttled per email after repeated failures, even with the right password', async () => {
  const user = await signUp(t.app);
  for (let i = 0; i < 3; i++) assert.equal((await login(user.email, 'bad password')).statusCode, 401);
  const blocked = await login(user.email, user.password);
  assert.equal(blocked.statusCode, 429);
  const body = errorBody(blocked);
  assert.equal(body.error, 'rate_limited');
  assert.equal(typeof body.details.retryAfterSec, 'number');
  assert.ok(blocked.headers['retry-after']);
});

test('parallel guesses cannot outrun the throttle: the right password is refused once the budget is spent', async () => {
  const user = await signUp(t.app);
  // 30 guesses at once from one address, the right one at position 26; the budget is 3 failures.
  const attempts = Array.from({ length: 30 }, (_, i) =>
    t.app.inject({
      method: 'POST',
      url: '/api/v1/auth/login',
      payload: { email: user.email, password: i === 25 ? user.password : `wrong guess ${i}` },
      remoteAddress: '10.20.0.1',
    }),
  );
  const responses = await Promise.all(attempts);
  const right = responses[25]!;
  assert.equal(right.statusCode, 429, `the right password got ${right.statusCode}`);
  assert.equal(errorBody(right).error, 'rate_limited');
  const statuses = responses.map((r) => r.statusCode);
  assert.equal(statuses.filter((s) => s === 401).length, 3, `only the budget is checked: ${statuses.join(',')}`);
  assert.equal(statuses.filter((s) => s === 429).length, 27);
  const wait = errorBody(right).details.retryAfterSec as number;
  assert.ok(Number.isInteger(wait) && wait >= 1 && wait <= 900);
  assert.equal(right.headers['retry-after'], String(wait));
});

test('failed current-password checks on password change are throttled like logins', async () => {
  const user = await signUp(t.app);
  const change = (currentPassword: string) =>
    t.app.inject({
      method: 'POST',
      url: '/api/v1/auth/password/change',
      headers: { cookie: user.cookie },
      payload: { currentPassword, newPassword: 'brand new password' },
    });
  for (let i = 0; i < 3; i++) assert.equal((await change(`wrong password ${i}`)).statusCode, 403, `wrong ${i + 1}`);
  const statuses = [];
  for (let i = 0; i < 12; i++) statuses.push((await change(`wrong password ${i}`)).statusCode);
  assert.deepEqual(new Set(statuses), new Set([429]));
  const refused = await change(user.password);
  assert.equal(refused.statusCode, 429, 'even the right password waits once the budget is spent');
  const body = errorBody(refused);
  assert.equal(body.error, 'rate_limited');
  assert.ok(Number.isInteger(body.details.retryAfterSec));
  assert.equal(refused.headers['retry-after'], String(body.details.retryAfterSec));
  // The budget is the account's email: signing in is throttled as well.
  assert.equal((await login(user.email, user.password)).statusCode, 429);
});

test('logout ends the session at once', async () => {
  const user = await signUp(t.app);
  const cookie = sessionCookie(await login(user.email, user.password));
  assert.equal(
    (await t.app.inject({ method: 'POST', url: '/api/v1/auth/logout', headers: { cookie } })).statusCode,
    200,
  );
  const after = await t.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: { cookie } });
  assert.equal(after.statusCode, 401);
  assert.equal(errorBody(after).error, 'unauthorized');
  // A stale cookie does not stop signing in again.
  assert.equal((await login(user.email, user.password, { cookie })).statusCode, 200);
});

test('password change needs the current password and signs out other sessions', async () => {
  const user = await signUp(t.app);
  const other = sessionCookie(await login(user.email, user.password));
  const wrong = await t.app.inject({
    method: 'POST',
    url: '/api/v1/auth/password/change',
    headers: { cookie: user.cookie },
    payload: { currentPassword: 'nope nope', newPassword: 'brand new password' },
  });
  assert.equal(wrong.statusCode, 403);
  const changed = await t.app.inject({
    method: 'POST',
    url: '/api/v1/auth/password/change',
    headers: { cookie: user.cookie },
    payload: { currentPassword: user.password, newPassword: 'brand new password' },
  });
  assert.equal(changed.statusCode, 200);
  assert.equal(changed.json().revokedSessions, 1);
  assert.equal(
    (await t.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: { cookie: user.cookie } })).statusCode,
    200,
  );
  assert.equal(
    (await t.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: { cookie: other } })).statusCode,
    401,
  );
  assert.equal((await login(user.email, user.password)).statusCode, 401);
  assert.equal((await login(user.email, 'brand new password')).statusCode, 200);
  const user2 = await signUp(t.app);
  const asKey = await t.app.inject({
    method: 'POST',
    url: '/api/v1/auth/password/change',
    headers: user2.headers,
    payload: { currentPassword: user2.password, newPassword: 'brand new password' },
  });
  assert.equal(asKey.statusCode, 403, 'an API key cannot change a password');
});

test('sessions/recent lists the user sessions and revoke-all signs out the others', async () => {
  const user = await signUp(t.app);
  const second = sessionCookie(await login(user.email, user.password, { 'user-agent': 'phone-browser' }));
  const recent = await t.app.inject({
    method: 'GET',
    url: '/api/v1/auth/sessions/recent',
    headers: { cookie: user.cookie },
  });
  assert.equal(recent.statusCode, 200);
  const sessions = recent.json().sessions;
  assert.equal(sessions.length, 2);
  assert.equal(sessions.filter((s: { current: boolean }) => s.current).length, 1);
  assert.equal(sessions[0].userAgent, 'phone-browser');
  const revoked = await t.app.inject({
    method: 'POST',
    url: '/api/v1/auth/sessions/revoke-all',
    headers: { cookie: user.cookie },
  });
  assert.deepEqual(revoked.json(), { revoked: 1 });
  assert.equal(
    (await t.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: { cookie: second } })).statusCode,
    401,
  );
  assert.equal(
    (await t.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: { cookie: user.cookie } })).statusCode,
    200,
  );
});

test('switch-account moves the session to another account of the user; a foreign account is 404', async () => {
  const user = await signUp(t.app);
  const stranger = await signUp(t.app);
  // No route adds a member to an account yet; join a second account directly.
  const secondAccountId = newId();
  await t.infra.database.db
    .insertInto('accounts')
    .values({ id: secondAccountId, name: 'Second', rate_limit_per_minute: null })
    .execute();
  await t.infra.database.db
    .insertInto('memberships')
    .values({ account_id: secondAccountId, user_id: user.userId, role: 'member' })
    .execute();

  const switched = await t.app.inject({
    method: 'POST',
    url: '/api/v1/auth/switch-account',
    headers: { cookie: user.cookie },
    payload: { accountId: secondAccountId },
  });
  assert.equal(switched.statusCode, 200);
  assert.deepEqual(switched.json(), { accountId: secondAccountId, role: 'member' });
  const me = (await t.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: { cookie: user.cookie } })).json();
  assert.equal(me.account.id, secondAccountId);
  assert.equal(me.account.role, 'member');
  assert.equal(me.accounts.length, 2);

  const foreign = await t.app.inject({
    method: 'POST',
    url: '/api/v1/auth/switch-account',
    headers: { cookie: user.cookie },
    payload: { accountId: stranger.accountId },
  });
  assert.equal(foreign.statusCode, 404);
  assert.equal(errorBody(foreign).error, 'not_found');
  const still = (
    await t.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: { cookie: user.cookie } })
  ).json();
  assert.equal(still.account.id, secondAccountId);

  // A member cannot create API keys; switching back to the owned account restores the role.
  const keyAsMember = await t.app.inject({
    method: 'POST',
    url: '/api/v1/api-keys',
    headers: { cookie: user.cookie },
    payload: { name: 'x' },
  });
  assert.equal(keyAsMember.statusCode, 403);
  assert.equal(errorBody(keyAsMember).error, 'forbidden');
});

test('a viewer can read but not change anything', async () => {
  const owner = await signUp(t.app);
  // Switched to the owner's account (asRole fails unless the switch answers 200).
  const viewer = await asRole(t, owner, 'viewer');
  assert.equal((await call(viewer, 'GET', '/api-keys')).statusCode, 200);
  const write = await call(viewer, 'POST', '/api-keys', { name: 'x' });
  assert.equal(write.statusCode, 403);
  assert.match(errorBody(write).message, /read-only/);
});
