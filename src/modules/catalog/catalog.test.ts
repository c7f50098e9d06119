import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, errorBody, signUp, type SignedUp, type TestApp } from '../../../test/helpers.js';

let t: TestApp;
let admin: SignedUp;
let user: SignedUp;
before(async () => {
  t = await buildTestApp();
  admin = await signUp(t.app);
  user = await signUp(t.app);
  // The flag is set by the operator's command; here straight in the database.
  await t.infra.database.db
    .updateTable('users')
    .set({ is_platform_admin: true })
    .where('id', '=', admin.userId)
    .execute();
});
after(() => t.close());

type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
const as =
  (who: { cookie: string } | { headers: Record<string, string> }) => (method: Method, url: string, payload?: unknown) =>
    t.app.inject({
      method,
      url: `/api/v1${url}`,
      headers: 'cookie' in who ? { cookie: who.cookie } : who.headers,
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
const asAdmin = (method: Method, url: string, payload?: unknown) => as({ cookie: admin.cookie })(method, url, payload);

const fieldsOf = (response: { statusCode: number; json(): unknown }) =>
  (errorBody(response).details.fields as Array<{ field: string }>).map((f) => f.field);

async function modelCount() {
  return (
    await t.infra.database.db
      .selectFrom('catalog_models')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow()
  ).n;
}

test('the catalog ships with the built-in engines as defaults and an inactive OpenAI-compatible reference', async () => {
  for (const [kind, builtIn, reference, prices] of [
    [
      'llm',
      'parley-playbook',
      'openai-gpt-4o-mini',
      { inputPer1kTokensUsd: '0.00015', outputPer1kTokensUsd: '0.0006' },
    ],
    ['stt', 'parley-sim', 'openai-whisper-1', { perMinuteUsd: '0.006' }],
    ['tts', 'espeak-ng', 'openai-tts-1', { per1kCharactersUsd: '0.015' }],
  ] as const) {
    const response = await asAdmin('GET', `/admin/models/${kind}`);
    assert.equal(response.statusCode, 200, response.body);
    const { models, total } = response.json();
    assert.equal(total, 2);
    const engine = models.find((m: { slug: string }) => m.slug === builtIn);
    assert.equal(engine.builtIn, true);
    assert.equal(engine.isDefault, true);
    assert.equal(engine.active, true);
    assert.equal(engine.baseUrl, null);
    for (const field of Object.keys(prices)) assert.equal(engine[field], '0.00', `${builtIn} is free`);
    const ref = models.find((m: { slug: string }) => m.slug === reference);
    assert.equal(ref.provider, 'openai-compatible');
    assert.equal(ref.active, false);
    assert.equal(ref.isDefault, false);
    assert.equal(ref.baseUrl, 'https://api.openai.com/v1');
    assert.equal(ref.hasApiKey, false);
    for (const [field, value] of Object.entries(prices)) assert.equal(ref[field], value);
    assert.equal('contextTokens' in ref, kind === 'llm');
  }
});

test('an admin adds, changes and deletes an LLM; the API key is write-only', async () => {
  const created = await asAdmin('POST', '/admin/models/llm', {
    slug: 'local-llama',
    name: 'Llama on the office GPU',
    provider: 'openai-compatible',
    baseUrl: 'http://127.0.0.1:8080/v1/',
    model: 'llama-3.1-8b-instruct',
    apiKey: 'sk-secret-never-shown',
    inputPer1kTokensUsd: '0.0001',
    outputPer1kTokensUsd: '0.00020000',
    latencyClass: 'low',
    contextTokens: 131072,
  });
  assert.equal(created.statusCode, 200, created.body);
  const model = created.json();
  assert.equal(model.baseUrl, 'http://127.0.0.1:8080/v1', 'the trailing slash is dropped');
  assert.equal(model.hasApiKey, true);
  assert.equal(model.outputPer1kTokensUsd, '0.0002');
  assert.equal(model.active, true);
  assert.equal(model.isDefault, false);
  assert.equal(model.builtIn, false);
  assert.equal(model.contextTokens, 131072);
  assert.ok(!('apiKey' in model));

  const listed = await asAdmin('GET', '/admin/models/llm?active=true');
  assert.ok(!listed.body.includes('sk-secret-never-shown'));
  assert.ok(listed.json().models.some((m: { id: string }) => m.id === model.id));

  const repriced = await asAdmin('PATCH', `/admin/models/llm/${model.id}`, {
    inputPer1kTokensUsd: '0.00012',
    apiKey: null,
  });
  assert.equal(repriced.statusCode, 200, repriced.body);
  assert.equal(repriced.json().inputPer1kTokensUsd, '0.00012');
  assert.equal(repriced.json().hasApiKey, false);
  assert.ok(!repriced.body.includes('sk-secret'));

  const deleted = await asAdmin('DELETE', `/admin/models/llm/${model.id}`);
  assert.deepEqual(deleted.json(), { id: model.id, deleted: true });
  assert.equal((await asAdmin('DELETE', `/admin/models/llm/${model.id}`)).statusCode, 404);
  // A model of one kind is not found under another kind.
  const tts = (await asAdmin('GET', '/admin/models/tts')).json().models[0];
  assert.equal((await asAdmin('PATCH', `/admin/models/llm/${tts.id}`, { name: 'x' })).statusCode, 404);
});

test('making a model the default answers it; deleting the default is a 409 naming it', async () => {
  const whisper = (await asAdmin('GET', '/admin/models/stt'))
    .json()
    .models.find((m: { slug: string }) => m.slug === 'openai-whisper-1');
  const moved = await asAdmin('PATCH', `/admin/models/stt/${whisper.id}`, { isDefault: true, active: true });
  assert.equal(moved.statusCode, 200, moved.body);
  assert.equal(moved.json().isDefault, true);
  const deleteDefault = await asAdmin('DELETE', `/admin/models/stt/${whisper.id}`);
  assert.equal(deleteDefault.statusCode, 409);
  const body = errorBody(deleteDefault);
  assert.equal(body.error, 'conflict');
  assert.match(body.message, /default/);
  assert.deepEqual(body.details, { slug: 'openai-whisper-1' });
});

test('bad input is a 400 naming the field, and writes nothing', async () => {
  const before = await modelCount();
  const valid = {
    slug: 'ok-model',
    name: 'OK',
    provider: 'openai-compatible',
    baseUrl: 'https://llm.example/v1',
    model: 'm',
    inputPer1kTokensUsd: '0.1',
    outputPer1kTokensUsd: '0.2',
  };
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ ...valid, inputPer1kTokensUsd: 0.1 }, 'body/inputPer1kTokensUsd'],
    [{ ...valid, inputPer1kTokensUsd: '-0.1' }, 'body/inputPer1kTokensUsd'],
    [{ ...valid, inputPer1kTokensUsd: '0.000000001' }, 'body/inputPer1kTokensUsd'],
    [{ ...valid, inputPer1kTokensUsd: '1e-3' }, 'body/inputPer1kTokensUsd'],
    [{ ...valid, outputPer1kTokensUsd: undefined }, 'body/outputPer1kTokensUsd'],
    [{ ...valid, perMinuteUsd: '0.1' }, 'body/perMinuteUsd'],
    [{ ...valid, slug: 'Has Caps' }, 'body/slug'],
    [{ ...valid, slug: 'parley-playbook' }, ''],
    [{ ...valid, provider: 'espeak-ng' }, 'body/provider'],
    [{ ...valid, baseUrl: 'ftp://llm.example' }, 'body/baseUrl'],
    [{ ...valid, baseUrl: 'not a url' }, 'body/baseUrl'],
    [{ ...valid, baseUrl: 'https://user:pw@llm.example/v1' }, 'body/baseUrl'],
    [{ ...valid, name: '  ' }, 'body/name'],
    [{ ...valid, model: '  ' }, 'body/model'],
    [{ ...valid, latencyClass: 'instant' }, 'body/latencyClass'],
    [{ ...valid, contextTokens: 0 }, 'body/contextTokens'],
    [{ ...valid, isDefault: true, active: false }, ''],
  ];
  for (const [payload, field] of cases) {
    const response = await asAdmin('POST', '/admin/models/llm', payload);
    if (field) {
      assert.equal(response.statusCode, 400, `${JSON.stringify(payload)}: ${response.body}`);
      assert.ok(fieldsOf(response).includes(field), `${JSON.stringify(payload)}: ${response.body}`);
    } else {
      assert.equal(response.statusCode, 409, `${JSON.stringify(payload)}: ${response.body}`);
    }
  }
  const stt = await asAdmin('POST', '/admin/models/stt', {
    ...valid,
    inputPer1kTokensUsd: undefined,
    outputPer1kTokensUsd: undefined,
    perMinuteUsd: '0.1',
    contextTokens: 1000,
  });
  assert.equal(stt.statusCode, 400);
  assert.ok(fieldsOf(stt).includes('body/contextTokens'), 'only LLMs have a context size');
  assert.equal(await modelCount(), before);
});

test('the telephony rate table: read, replace, validated, and the * row is required', async () => {
  const initial = await asAdmin('GET', '/admin/rates/telephony');
  assert.equal(initial.statusCode, 200);
  const table = initial.json();
  assert.deepEqual(
    table.rates.map((r: { country: string }) => r.country),
    ['AU', 'CA', 'DE', 'FR', 'GB', 'US', '*'],
  );
  assert.deepEqual(
    (({ updatedAt, ...rest }) => rest)(table.rates.find((r: { country: string }) => r.country === 'US')),
    { country: 'US', inboundPerMinuteUsd: '0.0085', outboundPerMinuteUsd: '0.014' },
  );
  assert.equal(table.platformFeePerMinuteUsd, '0.00');

  const rows = [
    { country: 'US', inboundPerMinuteUsd: '0.0085', outboundPerMinuteUsd: '0.0130' },
    { country: 'NL', inboundPerMinuteUsd: '0.01', outboundPerMinuteUsd: '0.05' },
    { country: '*', inboundPerMinuteUsd: '0.02', outboundPerMinuteUsd: '0.12' },
  ];
  const replaced = await asAdmin('PUT', '/admin/rates/telephony', { rates: rows, platformFeePerMinuteUsd: '0.005' });
  assert.equal(replaced.statusCode, 200, replaced.body);
  const after = replaced.json();
  assert.deepEqual(
    after.rates.map((r: { country: string }) => r.country),
    ['NL', 'US', '*'],
  );
  assert.equal(after.rates[1].outboundPerMinuteUsd, '0.013');
  assert.equal(after.platformFeePerMinuteUsd, '0.005');
  assert.deepEqual((await asAdmin('GET', '/admin/rates/telephony')).json(), after);

  const bad: Array<[unknown, string]> = [
    [{ rates: rows.slice(0, 2), platformFeePerMinuteUsd: '0' }, 'body/rates'],
    [{ rates: [...rows, rows[0]], platformFeePerMinuteUsd: '0' }, 'body/rates/3/country'],
    [{ rates: [{ ...rows[0], country: 'XX' }, rows[2]], platformFeePerMinuteUsd: '0' }, 'body/rates/0/country'],
    [{ rates: [{ ...rows[0], country: 'us' }, rows[2]], platformFeePerMinuteUsd: '0' }, 'body/rates/0/country'],
    [
      { rates: [{ ...rows[0], outboundPerMinuteUsd: 0.013 }, rows[2]], platformFeePerMinuteUsd: '0' },
      'body/rates/0/outboundPerMinuteUsd',
    ],
    [{ rates: rows }, 'body/platformFeePerMinuteUsd'],
    [{ rates: [], platformFeePerMinuteUsd: '0' }, 'body/rates'],
  ];
  for (const [payload, field] of bad) {
    const response = await asAdmin('PUT', '/admin/rates/telephony', payload);
    assert.equal(response.statusCode, 400, JSON.stringify(payload));
    assert.ok(fieldsOf(response).includes(field), `${JSON.stringify(payload)}: ${response.body}`);
  }
  assert.deepEqual((await asAdmin('GET', '/admin/rates/telephony')).json(), after, 'a refused table changes nothing');
});

test('ordinary users, account owners and API keys get 403 on every administration route', async () => {
  const someId = '00000000-0000-4000-8000-000000000001';
  // The platform admin's API key is refused too: the flag belongs to the signed-in user, not to keys.
  for (const who of [{ cookie: user.cookie }, { headers: user.headers }, { headers: admin.headers }]) {
    for (const [method, url, payload] of [
      ['GET', '/admin/models/llm'],
      ['POST', '/admin/models/stt', {}],
      ['PATCH', `/admin/models/tts/${someId}`, {}],
      ['DELETE', `/admin/models/llm/${someId}`],
      ['GET', '/admin/rates/telephony'],
      ['PUT', '/admin/rates/telephony', {}],
    ] as Array<[Method, string, unknown?]>) {
      const response = await as(who)(method, url, payload);
      assert.equal(response.statusCode, 403, `${method} ${url}`);
      assert.match(errorBody(response).message, /platform administrator/);
    }
  }
  const anonymous = await t.app.inject({ method: 'GET', url: '/api/v1/admin/models/llm' });
  assert.equal(anonymous.statusCode, 401);
});

test('the OpenAPI document lists the administration routes as needing a browser session', async () => {
  const doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
  for (const path of ['/v1/admin/models/llm', '/v1/admin/models/stt/{id}', '/v1/admin/rates/telephony']) {
    for (const operation of Object.values<{ security: unknown }>(doc.paths[path]))
      assert.deepEqual(operation.security, [{ session: [] }], path);
  }
  const body = doc.paths['/v1/admin/models/tts'].post.requestBody.content['application/json'].schema;
  assert.ok(doc.components.schemas[body.$ref.split('/').at(-1)].properties.per1kCharactersUsd);
});
