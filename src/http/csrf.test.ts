/**
 * Writes signed in with the session cookie must come from the dashboard's own page: a form on another site is
 * refused with the error body and writes nothing; the dashboard's own requests, API keys and clients that are not
 * browsers go through.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, errorBody, signUp, type SignedUp, type TestApp } from '../../test/helpers.js';

let t: TestApp;
let user: SignedUp;
const HOST = 'parley.test:3000';
const OWN = `http://${HOST}`;
const EVIL = 'https://evil.example';

before(async () => {
  t = await buildTestApp({ env: { PUBLIC_BASE_URL: 'https://calls.example.com/parley' } });
  user = await signUp(t.app);
});
after(() => t.close());

async function keyNames(): Promise<string[]> {
  const list = await t.app.inject({ method: 'GET', url: '/api/v1/api-keys', headers: user.headers });
  return (list.json() as { apiKeys: Array<{ name: string }> }).apiKeys.map((key) => key.name);
}

function createKey(name: string, headers: Record<string, string>, form = false) {
  const payload = form ? { payload: `name=${name}` } : { payload: { name } };
  const contentType: Record<string, string> = form ? { 'content-type': 'application/x-www-form-urlencoded' } : {};
  return t.app.inject({
    method: 'POST',
    url: '/api/v1/api-keys',
    headers: { host: HOST, ...contentType, ...headers },
    ...payload,
  });
}

test('a form on another site posting with the session cookie is refused, and writes nothing', async () => {
  const response = await createKey(
    'from-evil',
    { cookie: user.cookie, origin: EVIL, 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate' },
    true,
  );
  assert.equal(response.statusCode, 403);
  const body = errorBody(response);
  assert.equal(body.error, 'forbidden');
  assert.deepEqual(body.details, { reason: 'cross_origin' });
  assert.match(body.message, /another site/);
  // The same with the header a form cannot send (a script on the other site, whose preflight would fail).
  const scripted = await createKey('from-evil-script', {
    cookie: user.cookie,
    origin: EVIL,
    'x-requested-with': 'x',
  });
  assert.equal(scripted.statusCode, 403);
  // Only Sec-Fetch-Site, or an origin of "null" (a sandboxed frame), is as foreign.
  assert.equal((await createKey('site-only', { cookie: user.cookie, 'sec-fetch-site': 'same-site' })).statusCode, 403);
  assert.equal((await createKey('null-origin', { cookie: user.cookie, origin: 'null' })).statusCode, 403);
  assert.deepEqual(
    (await keyNames()).filter((name) => name !== 'test'),
    [],
  );
});

test('a cross-site form cannot sign out either', async () => {
  const response = await t.app.inject({
    method: 'POST',
    url: '/api/v1/auth/logout',
    headers: { host: HOST, cookie: user.cookie, origin: EVIL, 'sec-fetch-site': 'cross-site' },
  });
  assert.equal(response.statusCode, 403);
  const me = await t.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: { cookie: user.cookie } });
  assert.equal(me.statusCode, 200, 'still signed in');
});

test("the dashboard's own requests go through: same origin, with X-Requested-With", async () => {
  const own = await createKey('dashboard', {
    cookie: user.cookie,
    origin: OWN,
    'sec-fetch-site': 'same-origin',
    'x-requested-with': 'parley-dashboard',
  });
  assert.equal(own.statusCode, 200, own.body);
  // PUBLIC_BASE_URL's origin is ours too (a proxy may present another Host).
  const viaPublicUrl = await createKey('public-url', {
    cookie: user.cookie,
    origin: 'https://calls.example.com',
    'x-requested-with': 'parley-dashboard',
  });
  assert.equal(viaPublicUrl.statusCode, 200, viaPublicUrl.body);
  // Our own page, but without the header: a plain form on our own site is refused as well.
  const noHeader = await createKey('own-form', { cookie: user.cookie, origin: OWN, 'sec-fetch-site': 'same-origin' });
  assert.equal(noHeader.statusCode, 403);
  assert.deepEqual(errorBody(noHeader).details, { reason: 'missing_header' });
});

test('API keys, reads, and clients that are not browsers are not affected', async () => {
  const withKey = await createKey('with-key', { ...user.headers, origin: EVIL, 'sec-fetch-site': 'cross-site' });
  assert.equal(withKey.statusCode, 200, 'a browser never adds Authorization by itself');
  const read = await t.app.inject({
    method: 'GET',
    url: '/api/v1/api-keys',
    headers: { host: HOST, cookie: user.cookie, origin: EVIL, 'sec-fetch-site': 'cross-site' },
  });
  assert.equal(read.statusCode, 200);
  // curl with a cookie jar sends neither Origin nor Sec-Fetch-Site.
  const curl = await createKey('curl', { cookie: user.cookie });
  assert.equal(curl.statusCode, 200, curl.body);
  // Without the cookie there is nothing to protect: a sign-in from anywhere is a sign-in.
  const login = await t.app.inject({
    method: 'POST',
    url: '/api/v1/auth/login',
    headers: { host: HOST, origin: EVIL },
    payload: { email: user.email, password: user.password },
  });
  assert.equal(login.statusCode, 200);
});
