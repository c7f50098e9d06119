import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, errorBody, signUp, type SignedUp, type TestApp } from './helpers.js';

let t: TestApp;
let user: SignedUp;
before(async () => {
  t = await buildTestApp({ env: { JSON_BODY_LIMIT_BYTES: '2048' } });
  user = await signUp(t.app);
});
after(() => t.close());

const countKeys = async () => (await t.infra.database.db.selectFrom('api_keys').select('id').where('account_id', '=', user.accountId).execute()).length;

test('malformed JSON is invalid_json and writes nothing', async () => {
  const before = await countKeys();
  const response = await t.app.inject({
    method: 'POST',
    url: '/api/v1/api-keys',
    headers: { ...user.headers, 'content-type': 'application/json' },
    payload: '{"name": "x",',
  });
  assert.equal(response.statusCode, 400);
  assert.equal(errorBody(response).error, 'invalid_json');
  assert.equal(await countKeys(), before);
});

test('schema violations name each failing field', async () => {
  const response = await t.app.inject({ method: 'POST', url: '/api/v1/auth/register', payload: { email: 'nope', password: 1 } });
  assert.equal(response.statusCode, 400);
  const body = errorBody(response);
  assert.equal(body.error, 'validation_failed');
  const fields = (body.details.fields as Array<{ field: string }>).map((f) => f.field).sort();
  assert.deepEqual(fields, ['body/email', 'body/password']);
  assert.match(body.message, /body\/email/);
});

test('unknown body fields are refused, not silently dropped', async () => {
  const response = await t.app.inject({ method: 'POST', url: '/api/v1/api-keys', headers: user.headers, payload: { name: 'ok', nmae: 'typo' } });
  assert.equal(response.statusCode, 400);
  assert.deepEqual(errorBody(response).details.fields, [{ field: 'body/nmae', message: 'is not a known field' }]);
});

test('unknown routes are not_found in the error body', async () => {
  for (const url of ['/api/v1/nope', '/api/nothing', '/elsewhere']) {
    const response = await t.app.inject({ method: 'GET', url, headers: user.headers });
    assert.equal(response.statusCode, 404, url);
    assert.equal(errorBody(response).error, 'not_found');
  }
});

test('a wrong content type is 415 and writes nothing', async () => {
  const before = await countKeys();
  const response = await t.app.inject({
    method: 'POST',
    url: '/api/v1/api-keys',
    headers: { ...user.headers, 'content-type': 'application/xml' },
    payload: '<name>x</name>',
  });
  assert.equal(response.statusCode, 415);
  assert.equal(errorBody(response).error, 'unsupported_media_type');
  assert.equal(await countKeys(), before);
});

test('CSV or plain text sent to a JSON endpoint is 415, not a validation error', async () => {
  const before = await countKeys();
  for (const contentType of ['text/csv', 'text/plain']) {
    const response = await t.app.inject({
      method: 'POST',
      url: '/api/v1/api-keys',
      headers: { ...user.headers, 'content-type': contentType },
      payload: 'name\nx\n',
    });
    assert.equal(response.statusCode, 415, contentType);
    assert.equal(errorBody(response).error, 'unsupported_media_type');
  }
  assert.equal(await countKeys(), before);
});

test('an oversized body is 413 and writes nothing', async () => {
  const before = await countKeys();
  const response = await t.app.inject({ method: 'POST', url: '/api/v1/api-keys', headers: user.headers, payload: { name: 'x'.repeat(5000) } });
  assert.equal(response.statusCode, 413);
  assert.equal(errorBody(response).error, 'payload_too_large');
  assert.equal(await countKeys(), before);
});

test('missing or bad credentials are 401 on every protected route', async () => {
  for (const [method, url] of [['GET', '/api/v1/api-keys'], ['GET', '/api/v1/auth/me'], ['POST', '/api/v1/auth/logout']] as const) {
    const response = await t.app.inject({ method, url });
    assert.equal(response.statusCode, 401, url);
    assert.equal(errorBody(response).error, 'unauthorized');
  }
  const badCookie = await t.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: { cookie: 'vsid=' + 'A'.repeat(32) } });
  assert.equal(badCookie.statusCode, 401);
});

test('a 500 hides internals and carries the request id', async () => {
  const broken = await buildTestApp();
  try {
    const victim = await signUp(broken.app);
    // Drop a table under the running app: the next query fails the way a real outage would.
    await broken.infra.database.db.schema.dropTable('api_keys').cascade().execute();
    const response = await broken.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: victim.headers });
    assert.equal(response.statusCode, 500);
    const body = errorBody(response);
    assert.equal(body.error, 'internal_error');
    assert.equal(body.message, 'Internal server error');
    assert.equal(body.details.requestId, response.headers['x-request-id']);
    assert.ok(!/api_keys|relation|select/i.test(response.body), 'no SQL or table names leak');
  } finally {
    await broken.close();
  }
});

test('health checks the database; public config and status need no auth', async () => {
  const health = await t.app.inject({ method: 'GET', url: '/api/health' });
  assert.equal(health.statusCode, 200);
  assert.equal(health.json().status, 'ok');
  assert.equal(health.json().database, 'ok');
  assert.equal(health.json().redis, process.env.REDIS_URL ? 'ok' : 'disabled');
  const config = await t.app.inject({ method: 'GET', url: '/api/v1/public-config' });
  assert.equal(config.statusCode, 200);
  assert.equal(config.json().limits.requestsPerMinutePerKey, 300);
  const status = await t.app.inject({ method: 'GET', url: '/api/v1/public/status' });
  assert.equal(status.statusCode, 200);
  assert.equal(status.json().status, 'operational');
});

test('health answers 503 in the error body when the database is gone', async () => {
  const doomed = await buildTestApp();
  await doomed.infra.database.close();
  try {
    const response = await doomed.app.inject({ method: 'GET', url: '/api/health' });
    assert.equal(response.statusCode, 503);
    assert.equal(errorBody(response).error, 'service_unavailable');
  } finally {
    await doomed.close();
  }
});

test('a wrong type on a nullable field is one message, not one per union branch', async () => {
  const response = await t.app.inject({ method: 'POST', url: '/api/v1/agents', headers: user.headers, payload: { name: 'A', voice: 42 } });
  assert.equal(response.statusCode, 400);
  const fields = errorBody(response).details.fields as Array<{ field: string; message: string }>;
  assert.equal(fields.length, 1);
  assert.equal(fields[0]!.field, 'body/voice');
  assert.doesNotMatch(fields[0]!.message, /anyOf/);
});
