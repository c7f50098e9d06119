/**
 * The catalog through its service (no HTTP): the engine's pricing against the stored catalog (the shipped defaults,
 * models named by id or slug, a new price at once, the stored rate table and fee, inside the caller's transaction),
 * one default per kind, built-in engines, and what a provider needs. The arithmetic is tested in
 * catalog.pricing.test.ts; the administration routes (statuses, bodies, access) in catalog.test.ts.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { AppError } from '../../lib/errors.js';
import { buildTestServices, type TestServices } from '../../../test/service-kit.js';

let t: TestServices;
before(async () => (t = await buildTestServices()));
after(() => t.close());

const price = (...args: Parameters<TestServices['services']['catalog']['price']>) => t.services.catalog.price(...args);

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

test('LLM, STT and TTS prices come from the named model, by id or slug; a new price applies at once', async () => {
  const llm = await t.services.catalog.createModel('llm', {
    slug: 'priced-llm',
    name: 'Priced LLM',
    provider: 'openai-compatible',
    baseUrl: 'https://llm.example/v1',
    model: 'm',
    inputPer1kTokensUsd: '0.00015',
    outputPer1kTokensUsd: '0.0006',
  });
  const quantity = { inputTokens: 123_456_789, outputTokens: 1005 };
  const byId = await price({ kind: 'llm', modelId: llm.id, quantity });
  assert.deepEqual(
    byId.lines.map((l) => [l.description, l.unitPriceUsd, l.amountUsd]),
    [
      ['Priced LLM: input tokens', '0.00015', '18.518518'],
      ['Priced LLM: output tokens', '0.0006', '0.000603'],
    ],
  );
  assert.equal(byId.amountUsd, '18.519121');
  assert.deepEqual(await price({ kind: 'llm', modelId: 'priced-llm', quantity }), byId);

  const stt = await t.services.catalog.createModel('stt', {
    slug: 'priced-stt',
    name: 'Priced STT',
    provider: 'parley-sim',
    perMinuteUsd: '0.0043',
  });
  const transcribed = await price({ kind: 'stt', modelId: stt.id, quantity: { seconds: 61 } });
  assert.deepEqual(
    transcribed.lines.map((l) => [l.quantity, l.unit, l.amountUsd]),
    [['1.016667', 'minute', '0.004372']],
  );

  const tts = await t.services.catalog.createModel('tts', {
    slug: 'priced-tts',
    name: 'Priced TTS',
    provider: 'espeak-ng',
    per1kCharactersUsd: '0.015',
  });
  assert.equal(
    (await price({ kind: 'tts', modelId: 'priced-tts', quantity: { characters: 412 } })).amountUsd,
    '0.006180',
  );
  await t.services.catalog.updateModel('tts', tts.id, { per1kCharactersUsd: '0.03' });
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

test("telephony from the stored rate table: the country's own rate, else the * rate; the stored platform fee", async () => {
  await t.services.catalog.replaceRates({
    rates: [
      { country: 'US', inboundPerMinuteUsd: '0.0085', outboundPerMinuteUsd: '0.014' },
      { country: 'GB', inboundPerMinuteUsd: '0.01', outboundPerMinuteUsd: '0.000201' },
      { country: '*', inboundPerMinuteUsd: '0.02', outboundPerMinuteUsd: '0.1' },
    ],
    platformFeePerMinuteUsd: '0.0333',
  });
  const cases: [string | undefined, 'inbound' | 'outbound', number, string][] = [
    ['US', 'outbound', 61, '0.014233'],
    ['us', 'inbound', 60, '0.008500'],
    ['GB', 'outbound', 30, '0.000101'],
    ['JP', 'outbound', 120, '0.200000'],
    [undefined, 'inbound', 60, '0.020000'],
  ];
  for (const [country, direction, seconds, amount] of cases) {
    const priced = await price({
      kind: 'telephony',
      ...(country === undefined ? {} : { country }),
      direction,
      quantity: { seconds },
    });
    assert.equal(priced.amountUsd, amount, `${country} ${direction}`);
  }
  assert.equal((await price({ kind: 'platform', quantity: { seconds: 7 } })).amountUsd, '0.003885');
});

test('pricing works inside a transaction the caller opened', async () => {
  const request = { kind: 'telephony', country: 'US', direction: 'outbound', quantity: { seconds: 90 } } as const;
  const inside = await t.db.transaction().execute((trx) => price(request, { trx }));
  assert.deepEqual(inside, await price(request));
});

/** Asserts that `work` fails with the AppError `code`, and a message matching `message` or the field named. */
async function refused(work: Promise<unknown>, code: string, expected: RegExp | { field: string }) {
  await assert.rejects(work, (error: unknown) => {
    assert.ok(error instanceof AppError, String(error));
    assert.equal(error.code, code);
    if (expected instanceof RegExp) assert.match(error.message, expected);
    else
      assert.deepEqual(
        (error.details.fields as { field: string }[]).map((f) => f.field),
        [expected.field],
      );
    return true;
  });
}

const modelsOf = async (kind: 'llm' | 'stt' | 'tts') =>
  (await t.services.catalog.listModels(kind, { limit: 100, offset: 0 })).models;

test('one default per kind: setting it moves it; the default cannot be turned off, unset or deleted', async () => {
  const { catalog } = t.services;
  const whisper = (await modelsOf('stt')).find((m) => m.slug === 'openai-whisper-1')!;
  await refused(
    catalog.updateModel('stt', whisper.id, { isDefault: true }),
    'conflict',
    /inactive model cannot be the default/,
  );

  const moved = await catalog.updateModel('stt', whisper.id, { isDefault: true, active: true });
  assert.equal(moved.isDefault, true);
  assert.deepEqual(
    (await modelsOf('stt')).filter((m) => m.isDefault).map((m) => m.slug),
    ['openai-whisper-1'],
  );
  await refused(catalog.updateModel('stt', whisper.id, { active: false }), 'conflict', /before turning it off/);
  await refused(
    catalog.updateModel('stt', whisper.id, { isDefault: false }),
    'conflict',
    /make another model the default instead/,
  );
  await refused(catalog.deleteModel('stt', whisper.id), 'conflict', /default/);

  const sim = (await modelsOf('stt')).find((m) => m.slug === 'parley-sim')!;
  assert.equal((await catalog.updateModel('stt', sim.id, { isDefault: true })).isDefault, true);
  await refused(catalog.deleteModel('stt', sim.id), 'conflict', /built-in engine: turn it off instead/);
  await refused(catalog.updateModel('stt', sim.id, { slug: 'renamed' }), 'conflict', /its slug cannot change/);
  await refused(
    catalog.updateModel('stt', sim.id, { provider: 'openai-compatible', baseUrl: 'https://x.example' }),
    'conflict',
    /its provider cannot change/,
  );
  const renamed = await catalog.updateModel('stt', sim.id, { name: 'Simulator transcript', perMinuteUsd: '0.001' });
  assert.deepEqual(
    [renamed.name, (renamed as { perMinuteUsd?: string }).perMinuteUsd],
    ['Simulator transcript', '0.001'],
  );
  assert.deepEqual(await catalog.deleteModel('stt', whisper.id), { id: whisper.id, deleted: true });
});

test('a built-in provider has no upstream; an OpenAI-compatible one needs a base URL and a model', async () => {
  const { catalog } = t.services;
  const builtIn = await catalog.createModel('tts', {
    slug: 'espeak-premium',
    name: 'eSpeak, priced',
    provider: 'espeak-ng',
    per1kCharactersUsd: '0.001',
  });
  assert.equal(builtIn.model, 'espeak-ng');
  assert.equal(builtIn.builtIn, false, 'only the shipped rows are built in');
  const hosted = { name: 'x', provider: 'openai-compatible', per1kCharactersUsd: '0.015' } as const;
  const cases: [Parameters<typeof catalog.createModel>[1], string][] = [
    [
      { slug: 'espeak-url', name: 'x', provider: 'espeak-ng', baseUrl: 'https://x.example', per1kCharactersUsd: '0' },
      'body/baseUrl',
    ],
    [{ ...hosted, slug: 'espeak-key', provider: 'espeak-ng', apiKey: 'k' }, 'body/apiKey'],
    [{ ...hosted, slug: 'hosted', model: 'tts-1' }, 'body/baseUrl'],
    [{ ...hosted, slug: 'hosted', baseUrl: 'https://tts.example/v1' }, 'body/model'],
    [{ ...hosted, slug: 'hosted', baseUrl: 'https://tts.example/v1', model: '  ' }, 'body/model'],
    [{ ...hosted, slug: 'hosted', baseUrl: 'ftp://tts.example', model: 'tts-1' }, 'body/baseUrl'],
    [{ ...hosted, slug: 'hosted', baseUrl: 'https://user:pw@tts.example', model: 'tts-1' }, 'body/baseUrl'],
    [{ ...hosted, slug: 'hosted', baseUrl: 'https://tts.example/v1?x=1', model: 'tts-1' }, 'body/baseUrl'],
    [{ ...hosted, slug: 'hosted', name: ' ', baseUrl: 'https://tts.example/v1', model: 'tts-1' }, 'body/name'],
  ];
  for (const [input, field] of cases) await refused(catalog.createModel('tts', input), 'validation_failed', { field });

  // Switching a model to a built-in provider clears its upstream and key.
  const model = await catalog.createModel('tts', {
    ...hosted,
    slug: 'hosted',
    baseUrl: 'https://tts.example/v1/',
    model: 'tts-1',
    apiKey: 'k',
  });
  assert.equal(model.baseUrl, 'https://tts.example/v1', 'the trailing slash is dropped');
  const switched = await catalog.updateModel('tts', model.id, { provider: 'espeak-ng' });
  assert.deepEqual([switched.baseUrl, switched.hasApiKey, switched.model], [null, false, 'tts-1']);
});
