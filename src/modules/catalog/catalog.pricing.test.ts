/**
 * The engine's pricing: amounts come from the catalog and the rate table as an administrator set them (through
 * HTTP), and are exact decimals, rounded once, half up, to the micro-dollar.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, signUp, type SignedUp, type TestApp } from '../../../test/helpers.js';

let t: TestApp;
let admin: SignedUp;
before(async () => {
  t = await buildTestApp();
  admin = await signUp(t.app);
  await t.infra.database.db
    .updateTable('users')
    .set({ is_platform_admin: true })
    .where('id', '=', admin.userId)
    .execute();
});
after(() => t.close());

const asAdmin = async (method: 'POST' | 'PUT' | 'PATCH', url: string, payload: object) => {
  const response = await t.app.inject({ method, url: `/api/v1${url}`, headers: { cookie: admin.cookie }, payload });
  assert.equal(response.statusCode, 200, response.body);
  return response.json();
};
const price = (...args: Parameters<TestApp['services']['catalog']['price']>) => t.services.catalog.price(...args);

/** Decimal strings to integer micro-dollars. */
const micros = (amount: string) => {
  const [whole, fraction = ''] = amount.split('.');
  return BigInt(whole!) * 1_000_000n + BigInt(fraction.padEnd(6, '0'));
};

test('the built-in defaults cost nothing', async () => {
  const llm = await price({ kind: 'llm', quantity: { inputTokens: 12_345, outputTokens: 678 } });
  assert.equal(llm.amountUsd, '0.000000');
  assert.deepEqual(
    llm.lines.map((l) => [l.description, l.quantity, l.unit, l.unitPriceUsd, l.amountUsd]),
    [
      ['Parley playbook engine (built-in, not a model): input tokens', '12.345', '1k_tokens', '0.00', '0.000000'],
      ['Parley playbook engine (built-in, not a model): output tokens', '0.678', '1k_tokens', '0.00', '0.000000'],
    ],
  );
  assert.equal((await price({ kind: 'tts', quantity: { characters: 5000 } })).amountUsd, '0.000000');
  assert.equal((await price({ kind: 'stt', quantity: { seconds: 90 } })).amountUsd, '0.000000');
  assert.equal((await price({ kind: 'platform', quantity: { seconds: 90 } })).amountUsd, '0.000000');
});

test('LLM, STT and TTS prices come from the named model, by id or slug', async () => {
  const llm = await asAdmin('POST', '/admin/models/llm', {
    slug: 'priced-llm',
    name: 'Priced LLM',
    provider: 'openai-compatible',
    baseUrl: 'https://llm.example/v1',
    model: 'm',
    inputPer1kTokensUsd: '0.00015',
    outputPer1kTokensUsd: '0.0006',
  });
  // 123,456,789 input tokens: 0.00015 × 123456.789 = 18.51851835 → 18.518518; 1,005 output: 0.000603.
  const byId = await price({
    kind: 'llm',
    modelId: llm.id,
    quantity: { inputTokens: 123_456_789, outputTokens: 1005 },
  });
  assert.deepEqual(
    byId.lines.map((l) => l.amountUsd),
    ['18.518518', '0.000603'],
  );
  assert.equal(byId.amountUsd, '18.519121');
  assert.equal(byId.lines[0]!.quantity, '123456.789');
  assert.equal(byId.lines[0]!.unitPriceUsd, '0.00015');
  assert.deepEqual(
    await price({ kind: 'llm', modelId: 'priced-llm', quantity: { inputTokens: 123_456_789, outputTokens: 1005 } }),
    byId,
  );

  const stt = await asAdmin('POST', '/admin/models/stt', {
    slug: 'priced-stt',
    name: 'Priced STT',
    provider: 'parley-sim',
    perMinuteUsd: '0.0043',
  });
  // 61 seconds at 0.0043/min = 0.00437166… → 0.004372; the quantity reads 1.016667 minutes.
  const transcribed = await price({ kind: 'stt', modelId: stt.id, quantity: { seconds: 61 } });
  assert.deepEqual(
    transcribed.lines.map((l) => [l.quantity, l.unit, l.amountUsd]),
    [['1.016667', 'minute', '0.004372']],
  );

  const tts = await asAdmin('POST', '/admin/models/tts', {
    slug: 'priced-tts',
    name: 'Priced TTS',
    provider: 'espeak-ng',
    per1kCharactersUsd: '0.015',
  });
  // 412 characters at 0.015 per 1k = 0.00618 exactly.
  assert.equal(
    (await price({ kind: 'tts', modelId: 'priced-tts', quantity: { characters: 412 } })).amountUsd,
    '0.006180',
  );
  // A repriced model prices at its new price at once.
  await asAdmin('PATCH', `/admin/models/tts/${tts.id}`, { per1kCharactersUsd: '0.03' });
  assert.equal((await price({ kind: 'tts', modelId: tts.id, quantity: { characters: 412 } })).amountUsd, '0.012360');

  await assert.rejects(
    price({ kind: 'llm', modelId: 'no-such-model', quantity: { inputTokens: 1, outputTokens: 1 } }),
    /LLM model no-such-model not found/,
  );
  await assert.rejects(
    price({ kind: 'tts', modelId: 'priced-llm', quantity: { characters: 1 } }),
    /not found/,
    'a slug of another kind',
  );
});

test('telephony is priced by country and direction, with the * fallback', async () => {
  await asAdmin('PUT', '/admin/rates/telephony', {
    rates: [
      { country: 'US', inboundPerMinuteUsd: '0.0085', outboundPerMinuteUsd: '0.014' },
      { country: 'GB', inboundPerMinuteUsd: '0.01', outboundPerMinuteUsd: '0.000201' },
      { country: '*', inboundPerMinuteUsd: '0.02', outboundPerMinuteUsd: '0.1' },
    ],
    platformFeePerMinuteUsd: '0.0333',
  });
  const outbound = await price({ kind: 'telephony', country: 'US', direction: 'outbound', quantity: { seconds: 61 } });
  assert.deepEqual(outbound.lines, [
    {
      kind: 'telephony',
      description: 'Outbound minutes (US)',
      quantity: '1.016667',
      unit: 'minute',
      unitPriceUsd: '0.014',
      amountUsd: '0.014233',
    },
  ]);
  assert.equal(
    (await price({ kind: 'telephony', country: 'us', direction: 'inbound', quantity: { seconds: 60 } })).amountUsd,
    '0.008500',
  );
  // 30 s at 0.000201/min is 0.0001005 exactly: half a micro-dollar rounds up (a float would make it 0.000100).
  assert.equal(
    (await price({ kind: 'telephony', country: 'GB', direction: 'outbound', quantity: { seconds: 30 } })).amountUsd,
    '0.000101',
  );
  const elsewhere = await price({
    kind: 'telephony',
    country: 'JP',
    direction: 'outbound',
    quantity: { seconds: 120 },
  });
  assert.equal(elsewhere.amountUsd, '0.200000');
  assert.equal(elsewhere.lines[0]!.description, 'Outbound minutes (JP)', 'the destination, priced at the * rate');
  assert.equal(
    (await price({ kind: 'telephony', direction: 'inbound', quantity: { seconds: 60 } })).amountUsd,
    '0.020000',
    'no country: the * rate',
  );
  // 0.0333 per minute for 7 seconds = 0.003885 exactly.
  assert.equal((await price({ kind: 'platform', quantity: { seconds: 7 } })).amountUsd, '0.003885');
});

test('amounts add up exactly over many calls, where floats drift', async () => {
  await asAdmin('PUT', '/admin/rates/telephony', {
    rates: [{ country: '*', inboundPerMinuteUsd: '0.1', outboundPerMinuteUsd: '0.2' }],
    platformFeePerMinuteUsd: '0',
  });
  let exact = 0n;
  let float = 0;
  for (let i = 0; i < 1000; i++) {
    const { amountUsd } = await price({ kind: 'telephony', direction: 'inbound', quantity: { seconds: 60 } });
    exact += micros(amountUsd);
    float += Number(amountUsd);
  }
  assert.equal(exact, 100_000_000n, '1,000 minutes at $0.1 is exactly $100');
  assert.notEqual(float, 100, 'the same sum in floats is off');
});

test('quantities must be whole, non-negative numbers', async () => {
  for (const seconds of [-1, 1.5, Number.NaN, Number.MAX_SAFE_INTEGER + 2]) {
    await assert.rejects(price({ kind: 'platform', quantity: { seconds } }), RangeError, String(seconds));
  }
});

test('pricing works inside a transaction the caller opened', async () => {
  const request = { kind: 'telephony', country: 'US', direction: 'outbound', quantity: { seconds: 90 } } as const;
  const inside = await t.infra.database.db.transaction().execute((trx) => price(request, { trx }));
  assert.deepEqual(inside, await price(request));
});
