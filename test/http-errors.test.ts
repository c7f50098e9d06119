import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { buildTestApp, errorBody, signUp, type SignedUp, type TestApp } from './helpers.js';

let t: TestApp;
let user: SignedUp;
before(async () => {
  t = await buildTestApp({ env: { JSON_BODY_LIMIT_BYTES: '2048' } });
  user = await signUp(t.app);
});
after(() => t.close());

const countKeys = async () =>
  (await t.infra.database.db.selectFrom('api_keys').select('id').where('account_id', '=', user.accountId).execute())
    .length;

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
  const response = await t.app.inject({
    method: 'POST',
    url: '/api/v1/auth/register',
    payload: { email: 'nope', password: 1 },
  });
  assert.equal(response.statusCode, 400);
  const body = errorBody(response);
  assert.equal(body.error, 'validation_failed');
  const fields = (body.details.fields as Array<{ field: string }>).map((f) => f.field).sort();
  assert.deepEqual(fields, ['body/email', 'body/password']);
  assert.match(body.message, /body\/email/);
});

test('unknown body fields are refused, not silently dropped', async () => {
  const response = await t.app.inject({
    method: 'POST',
    url: '/api/v1/api-keys',
    headers: user.headers,
    payload: { name: 'ok', nmae: 'typo' },
  });
  assert.equal(response.statusCode, 400);
  assert.deepEqual(errorBody(response).details.fields, [{ field: 'body/nmae', message: 'is not a known field' }]);
});

test('unknown routes are not_found in the error body', async () => {
  // Other paths without an extension are the dashboard's pages (src/http/static.ts); a missing file is a 404.
  for (const url of ['/api/v1/nope', '/api/nothing', '/elsewhere.txt']) {
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
  const response = await t.app.inject({
    method: 'POST',
    url: '/api/v1/api-keys',
    headers: user.headers,
    payload: { name: 'x'.repeat(5000) },
  });
  assert.equal(response.statusCode, 413);
  assert.equal(errorBody(response).error, 'payload_too_large');
  assert.equal(await countKeys(), before);
});

test('missing or bad credentials are 401 on every protected route', async () => {
  for (const [method, url] of [
    ['GET', '/api/v1/api-keys'],
    ['GET', '/api/v1/auth/me'],
    ['POST', '/api/v1/auth/logout'],
  ] as const) {
    const response = await t.app.inject({ method, url });
    assert.equal(response.statusCode, 401, url);
    assert.equal(errorBody(response).error, 'unauthorized');
  }
  const badCookie = await t.app.inject({
    method: 'GET',
    url: '/api/v1/auth/me',
    headers: { cookie: 'vsid=' + 'A'.repeat(32) },
  });
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
  const response = await t.app.inject({
    method: 'POST',
    url: '/api/v1/agents',
    headers: user.headers,
    payload: { name: 'A', voice: 42 },
  });
  assert.equal(response.statusCode, 400);
  const fields = errorBody(response).details.fields as Array<{ field: string; message: string }>;
  assert.equal(fields.length, 1);
  assert.equal(fields[0]!.field, 'body/voice');
  assert.doesNotMatch(fields[0]!.message, /anyOf/);
});

// ---------------------------------------------------------------------------------------------------------------
// Hostile input at the edge: each of these once reached PostgreSQL (a 500) or left in Fastify's own error format.

const fieldsOf = (response: { statusCode: number; json(): unknown }) =>
  (errorBody(response).details.fields as Array<{ field: string; message: string }>).map((f) => f.field);

const countAgents = async () =>
  (await t.infra.database.db.selectFrom('agents').select('id').where('account_id', '=', user.accountId).execute())
    .length;

test('page offsets past the integer range are a 400 naming offset, on every list', async () => {
  for (const path of [
    '/api/v1/calls',
    '/api/v1/agents',
    '/api/v1/events',
    '/api/v1/contact-lists',
    '/api/v1/dnc',
    '/api/v1/contacts',
  ]) {
    for (const offset of ['1e20', '9223372036854775808', '9223372036854775807', '1e999', 'Infinity', '2147483648']) {
      const response = await t.app.inject({ method: 'GET', url: `${path}?offset=${offset}`, headers: user.headers });
      assert.equal(response.statusCode, 400, `${path}?offset=${offset}: ${response.body}`);
      assert.deepEqual(fieldsOf(response), ['querystring/offset']);
    }
  }
  const deepest = await t.app.inject({ method: 'GET', url: '/api/v1/calls?offset=2147483647', headers: user.headers });
  assert.equal(deepest.statusCode, 200);
  assert.equal(deepest.json().calls.length, 0);
});

test('a version number past the integer range is a 400, not a database error', async () => {
  const agent = (
    await t.app.inject({ method: 'POST', url: '/api/v1/agents', headers: user.headers, payload: { name: 'Versions' } })
  ).json();
  const response = await t.app.inject({
    method: 'GET',
    url: `/api/v1/agents/${agent.id}/versions/2147483648`,
    headers: user.headers,
  });
  assert.equal(response.statusCode, 400);
  assert.deepEqual(fieldsOf(response), ['params/version']);
});

test('a NUL in a JSON field, a nested key or the query string is a 400 naming the field, and writes nothing', async () => {
  const before = await countAgents();
  const cases = [
    { payload: '{"name":"a\\u0000b"}', field: 'body/name' },
    { payload: '{"name":"ok","transfer":{"whenToTransfer":"\\u0000"}}', field: 'body/transfer/whenToTransfer' },
  ];
  for (const { payload, field } of cases) {
    const response = await t.app.inject({
      method: 'POST',
      url: '/api/v1/agents',
      headers: { ...user.headers, 'content-type': 'application/json' },
      payload,
    });
    assert.equal(response.statusCode, 400, response.body);
    assert.deepEqual(fieldsOf(response), [field]);
    assert.match(errorBody(response).message, /NUL/);
  }
  const key = await t.app.inject({
    method: 'PATCH',
    url: `/api/v1/contacts/${'0'.repeat(8)}-0000-4000-8000-${'0'.repeat(12)}`,
    headers: { ...user.headers, 'content-type': 'application/json' },
    payload: '{"attributes":{"a\\u0000":"x"}}',
  });
  assert.equal(key.statusCode, 400);
  assert.deepEqual(fieldsOf(key), ['body/attributes']);
  for (const url of ['/api/v1/contacts?q=%00', '/api/v1/dnc?q=a%00', '/api/v1/exports/contacts.csv?q=%00']) {
    const response = await t.app.inject({ method: 'GET', url, headers: user.headers });
    assert.equal(response.statusCode, 400, url);
    assert.deepEqual(fieldsOf(response), ['querystring/q']);
  }
  assert.equal(await countAgents(), before);
});

test('a lone UTF-16 surrogate is refused rather than stored as U+FFFD', async () => {
  const before = await countAgents();
  for (const name of ['"\\ud800"', '"a\\udc00b"']) {
    const response = await t.app.inject({
      method: 'POST',
      url: '/api/v1/agents',
      headers: { ...user.headers, 'content-type': 'application/json' },
      payload: `{"name":${name}}`,
    });
    assert.equal(response.statusCode, 400);
    assert.deepEqual(fieldsOf(response), ['body/name']);
    assert.match(errorBody(response).message, /surrogate/);
  }
  assert.equal(await countAgents(), before);
  // A proper pair is an ordinary character.
  const emoji = await t.app.inject({
    method: 'POST',
    url: '/api/v1/agents',
    headers: user.headers,
    payload: { name: 'Sally 😀' },
  });
  assert.equal(emoji.statusCode, 200);
  assert.equal(emoji.json().name, 'Sally 😀');
});

test('bytes that are not UTF-8 are refused, in a JSON body and in the query string', async () => {
  const body = await t.app.inject({
    method: 'POST',
    url: '/api/v1/agents',
    headers: { ...user.headers, 'content-type': 'application/json' },
    payload: Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}')]),
  });
  assert.equal(body.statusCode, 400);
  assert.equal(errorBody(body).error, 'invalid_json');
  assert.match(errorBody(body).message, /UTF-8/);
  for (const q of ['%FF', '%ED%A0%80', '%', '%C0%80']) {
    const response = await t.app.inject({ method: 'GET', url: `/api/v1/contacts?q=${q}`, headers: user.headers });
    assert.equal(response.statusCode, 400, q);
    assert.deepEqual(fieldsOf(response), ['querystring/q']);
    assert.match(errorBody(response).message, /percent-encoded UTF-8/);
  }
  // LIKE wildcards and backslashes are ordinary search text; a search of wildcards alone has nothing to look up.
  for (const q of ['100%25_off', 'abc%5C', '500%5C%25']) {
    assert.equal(
      (await t.app.inject({ method: 'GET', url: `/api/v1/contacts?q=${q}`, headers: user.headers })).statusCode,
      200,
      q,
    );
  }
  const wildcards = await t.app.inject({ method: 'GET', url: '/api/v1/contacts?q=%25_%25', headers: user.headers });
  assert.equal(wildcards.statusCode, 400);
  assert.deepEqual(fieldsOf(wildcards), ['querystring/q']);
});

test('names are one line: control characters and bidirectional overrides are refused', async () => {
  const before = await countAgents();
  for (const name of [
    'a\nb',
    'tab\there',
    'bell\u0007',
    'next\u0085line',
    'evil\u202egnp.exe',
    'iso\u2066late',
    'line\u2028sep',
  ]) {
    const response = await t.app.inject({
      method: 'POST',
      url: '/api/v1/agents',
      headers: user.headers,
      payload: { name },
    });
    assert.equal(response.statusCode, 400, JSON.stringify(name));
    assert.deepEqual(fieldsOf(response), ['body/name']);
    assert.match(
      errorBody(response).message,
      /one line of text, without control characters or bidirectional overrides/,
    );
  }
  const key = await t.app.inject({
    method: 'POST',
    url: '/api/v1/api-keys',
    headers: user.headers,
    payload: { name: 'CRM\r\nsync' },
  });
  assert.equal(key.statusCode, 400);
  assert.equal(await countAgents(), before);
  // Other scripts, accents and right-to-left text are names like any other.
  for (const name of ['Zoë Ağaoğlu', '山田 太郎', 'مساعد المبيعات', 'e\u0301te\u0301']) {
    const response = await t.app.inject({
      method: 'POST',
      url: '/api/v1/agents',
      headers: user.headers,
      payload: { name },
    });
    assert.equal(response.statusCode, 200, name);
  }
  // Prose fields keep their line breaks.
  const prose = await t.app.inject({
    method: 'POST',
    url: '/api/v1/agents',
    headers: user.headers,
    payload: { name: 'Prose', playbook: '1. Greet\n2. Ask' },
  });
  assert.equal(prose.statusCode, 200);
});

test('date-times PostgreSQL cannot store are a 400 naming the parameter', async () => {
  for (const value of [
    '2024-12-31T23:59:60Z',
    '0000-01-01T00:00:00Z',
    '10000-01-01T00:00:00Z',
    '0001-01-01T00:00:00+01:00',
    '2024-02-30T00:00:00Z',
    '2024-01-01T24:00:00Z',
  ]) {
    for (const name of ['dateFrom', 'dateTo']) {
      const response = await t.app.inject({
        method: 'GET',
        url: `/api/v1/calls?${name}=${encodeURIComponent(value)}`,
        headers: user.headers,
      });
      assert.equal(response.statusCode, 400, `${name}=${value}: ${response.body}`);
      assert.deepEqual(fieldsOf(response), [`querystring/${name}`]);
      assert.match(errorBody(response).message, /years 0001-9999/);
    }
  }
  for (const value of ['0001-01-01T00:00:00Z', '9999-12-31T23:59:59.999999Z', '2024-02-29T12:00:00+05:30']) {
    const response = await t.app.inject({
      method: 'GET',
      url: `/api/v1/calls?dateFrom=${encodeURIComponent(value)}`,
      headers: user.headers,
    });
    assert.equal(response.statusCode, 200, value);
  }
});

test('JSON nested past the depth limit is a 400 naming the limit', async () => {
  const deep = '{"name":"x","transfer":' + '{"a":'.repeat(40) + '1' + '}'.repeat(40) + '}';
  const response = await t.app.inject({
    method: 'POST',
    url: '/api/v1/agents',
    headers: { ...user.headers, 'content-type': 'application/json' },
    payload: deep,
  });
  assert.equal(response.statusCode, 400);
  assert.match(errorBody(response).message, /deeper than the limit of 32 levels/);
  assert.equal(errorBody(response).details.maxDepth, 32);
  // Deeper still is refused the same way, before any of it is parsed.
  const deeper = await t.app.inject({
    method: 'POST',
    url: '/api/v1/agents',
    headers: { ...user.headers, 'content-type': 'application/json' },
    payload: '['.repeat(1000) + ']'.repeat(1000),
  });
  assert.equal(deeper.statusCode, 400);
  assert.equal(errorBody(deeper).details.maxDepth, 32);
  // Brackets inside strings are text, not nesting, escaped quotes and backslashes included.
  for (const notes of ['['.repeat(100), `\\"${'['.repeat(40)}\\`, `\\\\"${'{'.repeat(40)}"`]) {
    const text = await t.app.inject({
      method: 'POST',
      url: '/api/v1/agents',
      headers: user.headers,
      payload: { name: 'Brackets', notes },
    });
    assert.equal(text.statusCode, 200, notes);
  }
});

test('a bad URL or an overlong path parameter answers in the error body', async () => {
  for (const url of ['/api/v1/dnc/%FF', '/api/v1/agents/%ED%A0%80', '/api/v1/contacts/%']) {
    const response = await t.app.inject({ method: url.includes('dnc') ? 'DELETE' : 'GET', url, headers: user.headers });
    assert.equal(response.statusCode, 400, url);
    assert.equal(errorBody(response).error, 'validation_failed');
    assert.match(errorBody(response).message, /not valid percent-encoded UTF-8/);
    assert.ok(response.headers['x-request-id']);
  }
  const long = await t.app.inject({ method: 'DELETE', url: `/api/v1/dnc/${'1'.repeat(101)}`, headers: user.headers });
  assert.equal(long.statusCode, 400);
  assert.match(errorBody(long).message, /longer than 100 characters/);
});

test('a value the database refuses is a 400 even when validation let it through', async () => {
  // A trigger stands in for a check the schemas do not know: it refuses names the way PostgreSQL refuses bad text.
  const db = t.infra.database.db;
  await sql`CREATE FUNCTION refuse_odd_key_names() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.name = 'untranslatable' THEN RAISE EXCEPTION 'character cannot be converted' USING ERRCODE = '22P05'; END IF;
      IF NEW.name = 'out of range' THEN RAISE EXCEPTION 'value out of range' USING ERRCODE = '22003'; END IF;
      IF NEW.name = 'too large' THEN RAISE EXCEPTION 'index row too large' USING ERRCODE = '54000'; END IF;
      RETURN NEW;
    END $$`.execute(db);
  await sql`CREATE TRIGGER refuse_odd_key_names BEFORE INSERT ON api_keys FOR EACH ROW EXECUTE FUNCTION refuse_odd_key_names()`.execute(
    db,
  );
  try {
    const before = await countKeys();
    for (const [name, message] of [
      ['untranslatable', /character the database cannot store/],
      ['out of range', /number is out of range/],
      ['too large', /value is too large/],
    ] as const) {
      const response = await t.app.inject({
        method: 'POST',
        url: '/api/v1/api-keys',
        headers: user.headers,
        payload: { name },
      });
      assert.equal(response.statusCode, 400, response.body);
      assert.equal(errorBody(response).error, 'validation_failed');
      assert.match(errorBody(response).message, message);
    }
    assert.equal(await countKeys(), before);
  } finally {
    await sql`DROP TRIGGER refuse_odd_key_names ON api_keys`.execute(db);
    await sql`DROP FUNCTION refuse_odd_key_names()`.execute(db);
  }
});

/** Sends raw bytes to a listening app and returns everything it answers before closing the connection. */
async function rawExchange(port: number, request: string): Promise<string> {
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => {}); // the server may reset once it has answered
  socket.write(request);
  const chunks: Buffer[] = [];
  for await (const chunk of socket) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function parseRaw(raw: string) {
  const [head = '', body = ''] = raw.split('\r\n\r\n');
  return { status: Number(head.split(' ')[1]), head, body: JSON.parse(body) as Record<string, unknown> };
}

test('oversized headers and malformed HTTP get the error body on a real connection', async () => {
  const served = await buildTestApp();
  try {
    await served.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = served.app.server.address() as AddressInfo;
    const tooBig = parseRaw(
      await rawExchange(port, `GET /api/health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`),
    );
    assert.equal(tooBig.status, 431);
    assert.deepEqual(tooBig.body, {
      error: 'headers_too_large',
      message: 'The request headers are larger than the limit of 16384 bytes',
      details: { limitBytes: 16384 },
    });
    assert.match(tooBig.head, /content-type: application\/json/i);
    const longUrl = parseRaw(
      await rawExchange(port, `GET /api/v1/contacts?q=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`),
    );
    assert.equal(longUrl.status, 431);
    for (const garbage of [
      'HELLO\r\n\r\n',
      'GET / HTTP/9.9\r\n\r\n',
      'GET /api/health HTTP/1.1\r\nHost: x\r\nContent-Length: nope\r\n\r\n',
    ]) {
      const malformed = parseRaw(await rawExchange(port, garbage));
      assert.equal(malformed.status, 400, garbage);
      assert.equal(malformed.body.error, 'bad_request');
      assert.equal(malformed.body.message, 'The request is not well-formed HTTP');
    }
    // And it still serves.
    const healthy = await rawExchange(port, 'GET /api/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    assert.match(healthy, /^HTTP\/1\.1 200/);
  } finally {
    await served.close();
  }
});
