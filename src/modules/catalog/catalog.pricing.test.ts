/**
 * The pricing rule, without an app or a database (the catalog's rows are given): amounts are exact decimals,
 * rounded once, half up, to the micro-dollar; telephony falls back to the * rate; quantities are whole numbers.
 * Pricing against the stored catalog is in catalog.service.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AppError } from '../../lib/errors.js';
import { priceWith } from './catalog.pricing.js';

type Queries = Parameters<typeof priceWith>[0];
type ModelRow = NonNullable<Awaited<ReturnType<Queries['findForPricing']>>>;
type RateRow = NonNullable<Awaited<ReturnType<Queries['findRate']>>>;

const model = (row: Partial<ModelRow>) =>
  ({
    name: 'A model',
    input_per_1k_tokens_usd: null,
    output_per_1k_tokens_usd: null,
    per_minute_usd: null,
    per_1k_characters_usd: null,
    ...row,
  }) as ModelRow;

/** A catalog of one model per kind (found by any reference), a rate table and a platform fee. */
function catalog(
  options: {
    models?: Partial<Record<'llm' | 'stt' | 'tts', ModelRow>>;
    rates?: Record<string, [string, string]>;
    fee?: string;
  } = {},
): Queries {
  const rates = options.rates ?? { '*': ['0.02', '0.1'] };
  return {
    findForPricing: async (kind) => options.models?.[kind],
    findRate: async (country) => {
      const found = country in rates ? country : '*';
      const rate = rates[found];
      return rate
        ? ({ country: found, inbound_per_minute_usd: rate[0], outbound_per_minute_usd: rate[1] } as RateRow)
        : undefined;
    },
    platformFeePerMinute: async () => options.fee ?? '0',
  };
}

/** Decimal strings to integer micro-dollars. */
const micros = (amount: string) => {
  const [whole, fraction = ''] = amount.split('.');
  return BigInt(whole!) * 1_000_000n + BigInt(fraction.padEnd(6, '0'));
};

test('LLM: a line per direction, per 1k tokens, each rounded once; the amount is their sum', async () => {
  const queries = catalog({
    models: {
      llm: model({ name: 'Priced LLM', input_per_1k_tokens_usd: '0.00015', output_per_1k_tokens_usd: '0.0006' }),
    },
  });
  // 123,456,789 input tokens: 0.00015 × 123456.789 = 18.51851835 → 18.518518; 1,005 output: 0.000603.
  const priced = await priceWith(queries, { kind: 'llm', quantity: { inputTokens: 123_456_789, outputTokens: 1005 } });
  assert.deepEqual(priced, {
    kind: 'llm',
    amountUsd: '18.519121',
    lines: [
      {
        kind: 'llm',
        description: 'Priced LLM: input tokens',
        unit: '1k_tokens',
        quantity: '123456.789',
        unitPriceUsd: '0.00015',
        amountUsd: '18.518518',
      },
      {
        kind: 'llm',
        description: 'Priced LLM: output tokens',
        unit: '1k_tokens',
        quantity: '1.005',
        unitPriceUsd: '0.0006',
        amountUsd: '0.000603',
      },
    ],
  });
});

test('STT per minute of the exact seconds, TTS per 1k characters, free engines at 0', async () => {
  const queries = catalog({
    models: {
      stt: model({ name: 'Priced STT', per_minute_usd: '0.0043' }),
      tts: model({ name: 'Priced TTS', per_1k_characters_usd: '0.015' }),
      llm: model({ name: 'Free', input_per_1k_tokens_usd: '0.00', output_per_1k_tokens_usd: '0.00' }),
    },
  });
  const cases: [Parameters<typeof priceWith>[1], string, string, string][] = [
    // 61 seconds at 0.0043/min = 0.00437166… → 0.004372; the quantity reads 1.016667 minutes.
    [{ kind: 'stt', quantity: { seconds: 61 } }, 'Priced STT: speech to text', '1.016667', '0.004372'],
    // 412 characters at 0.015 per 1k = 0.00618 exactly.
    [{ kind: 'tts', quantity: { characters: 412 } }, 'Priced TTS: speech synthesis', '0.412', '0.006180'],
    [{ kind: 'llm', quantity: { inputTokens: 12_345, outputTokens: 0 } }, 'Free: input tokens', '12.345', '0.000000'],
  ];
  for (const [request, description, quantity, amount] of cases) {
    const priced = await priceWith(queries, request);
    assert.deepEqual(
      [priced.lines[0]!.description, priced.lines[0]!.quantity, priced.amountUsd],
      [description, quantity, amount],
    );
  }
});

test('telephony: by country and direction, the * rate for the others, named for the destination', async () => {
  const queries = catalog({
    rates: { US: ['0.0085', '0.014'], GB: ['0.01', '0.000201'], '*': ['0.02', '0.1'] },
  });
  const cases: [string | undefined, 'inbound' | 'outbound', number, string, string][] = [
    ['US', 'outbound', 61, 'Outbound minutes (US)', '0.014233'],
    ['us', 'inbound', 60, 'Inbound minutes (US)', '0.008500'],
    // 30 s at 0.000201/min is 0.0001005 exactly: half a micro-dollar rounds up (a float would make it 0.000100).
    ['GB', 'outbound', 30, 'Outbound minutes (GB)', '0.000101'],
    ['JP', 'outbound', 120, 'Outbound minutes (JP)', '0.200000'],
    [' jp ', 'inbound', 60, 'Inbound minutes (JP)', '0.020000'],
    ['XX', 'inbound', 60, 'Inbound minutes', '0.020000'],
    [undefined, 'inbound', 60, 'Inbound minutes', '0.020000'],
  ];
  for (const [country, direction, seconds, description, amount] of cases) {
    const priced = await priceWith(queries, {
      kind: 'telephony',
      ...(country === undefined ? {} : { country }),
      direction,
      quantity: { seconds },
    });
    assert.deepEqual([priced.lines[0]!.description, priced.amountUsd], [description, amount], String(country));
  }
  const [line] = (await priceWith(queries, { kind: 'telephony', direction: 'outbound', quantity: { seconds: 61 } }))
    .lines;
  assert.deepEqual(line, {
    kind: 'telephony',
    description: 'Outbound minutes',
    unit: 'minute',
    quantity: '1.016667',
    unitPriceUsd: '0.10',
    amountUsd: '0.101667',
  });
});

test('the platform fee per minute', async () => {
  // 0.0333 per minute for 7 seconds = 0.003885 exactly.
  const priced = await priceWith(catalog({ fee: '0.0333' }), { kind: 'platform', quantity: { seconds: 7 } });
  assert.deepEqual(priced.lines, [
    {
      kind: 'platform',
      description: 'Platform fee',
      unit: 'minute',
      quantity: '0.116667',
      unitPriceUsd: '0.0333',
      amountUsd: '0.003885',
    },
  ]);
});

test('amounts add up exactly over many calls, where floats drift', async () => {
  const queries = catalog({ rates: { '*': ['0.1', '0.2'] } });
  let exact = 0n;
  let float = 0;
  for (let i = 0; i < 1000; i++) {
    const { amountUsd } = await priceWith(queries, {
      kind: 'telephony',
      direction: 'inbound',
      quantity: { seconds: 60 },
    });
    exact += micros(amountUsd);
    float += Number(amountUsd);
  }
  assert.equal(exact, 100_000_000n, '1,000 minutes at $0.1 is exactly $100');
  assert.notEqual(float, 100, 'the same sum in floats is off');
});

test('quantities must be whole, non-negative numbers', async () => {
  const queries = catalog({ models: { tts: model({ per_1k_characters_usd: '0.015' }) } });
  for (const value of [-1, 1.5, Number.NaN, Number.MAX_SAFE_INTEGER + 2]) {
    await assert.rejects(priceWith(queries, { kind: 'platform', quantity: { seconds: value } }), RangeError);
    await assert.rejects(priceWith(queries, { kind: 'tts', quantity: { characters: value } }), RangeError);
  }
});

test('a model or rate that is not there is a not-found error naming it', async () => {
  const empty = catalog({ rates: {} });
  const cases: [Parameters<typeof priceWith>[1], RegExp][] = [
    [
      { kind: 'llm', modelId: 'no-such-model', quantity: { inputTokens: 1, outputTokens: 1 } },
      /LLM model no-such-model/,
    ],
    [{ kind: 'stt', quantity: { seconds: 1 } }, /Default STT model/],
    [{ kind: 'telephony', direction: 'inbound', quantity: { seconds: 1 } }, /Telephony rate/],
  ];
  for (const [request, message] of cases) {
    await assert.rejects(priceWith(empty, request), (error: unknown) => {
      assert.ok(error instanceof AppError);
      assert.equal(error.code, 'not_found');
      assert.match(error.message, message);
      return true;
    });
  }
});
