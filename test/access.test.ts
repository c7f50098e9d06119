/**
 * Declared access, walked over every registered route: each role gets 403 exactly where the permission matrix
 * says so, anonymous callers get 401, and no spelling of a URL reaches a handler without the route's check.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { buildTestApp, errorBody, signUp, type SignedUp, type TestApp } from './helpers.js';
import { MEMBER_ROLES, roleMayTake, type MemberRole } from '../src/lib/permissions.js';
import type { RegisteredRoute } from '../src/app.js';

let t: TestApp;
// Every route is asked once without credentials: more than the anonymous per-minute limit allows.
before(async () => (t = await buildTestApp({ env: { ANON_RATE_LIMIT_PER_MINUTE: '100000' } })));
after(async () => t.close());

/** A signed-in user with `role` in the owner's account (memberships are inserted until the team API exists). */
async function memberWithRole(owner: SignedUp, role: MemberRole) {
  const user = await signUp(t.app);
  await t.infra.database.db
    .insertInto('memberships')
    .values({ account_id: owner.accountId, user_id: user.userId, role })
    .execute();
  const switched = await t.app.inject({
    method: 'POST',
    url: '/api/v1/auth/switch-account',
    headers: { cookie: user.cookie },
    payload: { accountId: owner.accountId },
  });
  assert.equal(switched.statusCode, 200, switched.body);
  return { cookie: user.cookie };
}

const SOME_ID = '00000000-0000-4000-8000-000000000001';
const concrete = (url: string) => url.replace(/:phone\b/, '%2B14155550000').replace(/:[a-zA-Z]+/g, SOME_ID);
// Signing out last, so the walk keeps its sessions until the end.
const signOutLast = (a: RegisteredRoute, b: RegisteredRoute) =>
  Number(a.url.endsWith('/logout')) - Number(b.url.endsWith('/logout'));

function send(route: RegisteredRoute, headers: Record<string, string>) {
  return t.app.inject({
    method: route.method as 'GET',
    url: concrete(route.url),
    headers,
    ...(route.method === 'GET' || route.method === 'DELETE' ? {} : { payload: {} }),
  });
}

test("every route declares its access, and the matrix decides each role's answer", async () => {
  assert.ok(t.routes.length >= 30, `${t.routes.length} routes registered`);
  const owner = await signUp(t.app);
  const sessions = Object.fromEntries(
    await Promise.all(
      MEMBER_ROLES.map(async (role) => [
        role,
        role === 'owner' ? { cookie: owner.cookie } : await memberWithRole(owner, role),
      ]),
    ),
  ) as Record<MemberRole, { cookie: string }>;
  const accountRoutes = t.routes.filter((route) => route.access.kind === 'account').sort(signOutLast);
  const wrong: string[] = [];
  for (const role of MEMBER_ROLES) {
    for (const route of accountRoutes) {
      if (route.access.kind !== 'account') continue;
      const response = await send(route, { cookie: sessions[role].cookie });
      const allowed = roleMayTake(role, route.access.action);
      const refused = response.statusCode === 403;
      if (allowed === refused || response.statusCode === 401 || response.statusCode >= 500) {
        wrong.push(
          `${role} ${route.method} ${route.url} (${route.access.action}): ${response.statusCode} ${response.body.slice(0, 120)}`,
        );
      }
      if (refused) assert.equal(errorBody(response).error, 'forbidden');
    }
  }
  assert.deepEqual(wrong, []);
});

test('API keys act as admins: key management yes, nothing an owner alone may do', async () => {
  const owner = await signUp(t.app);
  // Routes about one's own sign-in act on a signed-in user, which a key is not; they refuse keys by their data.
  for (const route of t.routes) {
    if (route.access.kind !== 'account' || route.access.action === 'self.manage') continue;
    const response = await send(route, owner.headers);
    assert.equal(
      response.statusCode === 403,
      !roleMayTake('admin', route.access.action),
      `${route.method} ${route.url}: ${response.statusCode}`,
    );
  }
});

test('platform-administration routes answer only a signed-in platform administrator', async () => {
  const owner = await signUp(t.app);
  const operator = await signUp(t.app);
  await t.infra.database.db
    .updateTable('users')
    .set({ is_platform_admin: true })
    .where('id', '=', operator.userId)
    .execute();
  const adminRoutes = t.routes.filter((route) => route.access.kind === 'platformAdmin');
  assert.ok(adminRoutes.length > 0);
  const wrong: string[] = [];
  for (const route of adminRoutes) {
    // An account owner is no platform administrator, and API keys never are (the flag belongs to a signed-in user).
    for (const [who, headers] of [
      ['owner', { cookie: owner.cookie }],
      ['owner key', owner.headers],
      ['operator key', operator.headers],
    ] as const) {
      const response = await send(route, headers);
      if (response.statusCode !== 403) wrong.push(`${who} ${route.method} ${route.url}: ${response.statusCode}`);
      else assert.equal(errorBody(response).error, 'forbidden');
    }
    const response = await send(route, { cookie: operator.cookie });
    if ([401, 403].includes(response.statusCode) || response.statusCode >= 500) {
      wrong.push(`operator ${route.method} ${route.url}: ${response.statusCode} ${response.body.slice(0, 120)}`);
    }
  }
  assert.deepEqual(wrong, []);
});

/** Public routes that check a caller themselves: credentials, or a signature instead. Without either they say 401. */
const PUBLIC_WITH_OWN_CHECK: Record<string, RegExp> = {
  'GET /api/v1/calls/:id/transcript.json': /Send an API key or a session, or use a signed URL/,
};

test('without credentials every non-public route is 401; public routes answer', async () => {
  const ownChecks = new Set(Object.keys(PUBLIC_WITH_OWN_CHECK));
  for (const route of t.routes) {
    const response = await send(route, {});
    const ownCheck = PUBLIC_WITH_OWN_CHECK[`${route.method} ${route.url}`];
    if (route.access.kind === 'public' && ownCheck) {
      ownChecks.delete(`${route.method} ${route.url}`);
      assert.equal(response.statusCode, 401, `${route.method} ${route.url}`);
      assert.match(errorBody(response).message, ownCheck);
    } else if (route.access.kind === 'public')
      assert.notEqual(response.statusCode, 401, `${route.method} ${route.url}`);
    else {
      assert.equal(response.statusCode, 401, `${route.method} ${route.url}: ${response.statusCode}`);
      assert.equal(errorBody(response).error, 'unauthorized');
    }
  }
  assert.deepEqual([...ownChecks], [], 'PUBLIC_WITH_OWN_CHECK names public routes that exist');
});

test('encoded, doubled and dotted spellings of a path get the same access check or a 404', async () => {
  const owner = await signUp(t.app);
  const viewer = await memberWithRole(owner, 'viewer');
  for (const url of ['/api/%761/agents', '/api/v%31/agents', '/api/v1/%61gents', '/api/v1/agents/']) {
    const anonymous = await t.app.inject({ method: 'GET', url });
    assert.ok([401, 404].includes(anonymous.statusCode), `${url}: ${anonymous.statusCode}`);
    errorBody(anonymous);
    const write = await t.app.inject({
      method: 'POST',
      url,
      headers: { cookie: viewer.cookie },
      payload: { name: 'sneaky' },
    });
    assert.ok([403, 404].includes(write.statusCode), `${url}: ${write.statusCode}`);
    errorBody(write);
  }
  for (const url of ['//api/v1/agents', '/api//v1/agents', '/api/v1/../v1/agents', '/api/v1/./agents']) {
    const response = await t.app.inject({ method: 'GET', url });
    assert.ok([401, 404].includes(response.statusCode), `${url}: ${response.statusCode}`);
    errorBody(response);
  }
  const listed = await t.app.inject({ method: 'GET', url: '/api/v1/agents', headers: owner.headers });
  assert.equal(listed.json().total, 0, 'nothing was created by the viewer');
});

test("an absolute-form request target gets the route's access check", async () => {
  const address = await t.app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = new URL(address);
  const raw = await new Promise<string>((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1', () => {
      socket.write(
        `GET http://127.0.0.1:${port}/api/v1/agents HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`,
      );
    });
    let text = '';
    socket.on('data', (chunk) => (text += chunk));
    socket.on('end', () => resolve(text));
    socket.on('error', reject);
  });
  const status = Number(raw.split(' ')[1]);
  assert.ok([401, 404].includes(status), raw.slice(0, 200));
  assert.match(raw, /"error":"(unauthorized|not_found)"/);
});
