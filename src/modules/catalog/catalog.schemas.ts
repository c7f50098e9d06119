import { Type, type Static, type TProperties, type TSchema } from 'typebox';
import { DateTime, Nullable, PageFields, PageQuery, Uuid } from '../../http/schemas.js';
import { LATENCY_CLASSES, MODEL_PROVIDERS } from './catalog.tables.js';

/** A price as written: a decimal string in USD, at most 8 decimal places, never a JSON number. */
const PriceInput = (description: string) =>
  Type.String({
    pattern: '^\\d{1,10}(\\.\\d{1,8})?$',
    description: `${description} A decimal string, up to 8 decimal places.`,
    examples: ['0.0140'],
  });
const PriceOutput = (description: string) =>
  Type.String({ pattern: '^\\d+\\.\\d+$', description, examples: ['0.014'] });

const Slug = Type.String({
  pattern: '^[a-z0-9][a-z0-9._-]{0,63}$',
  description:
    'Unique per kind: lowercase letters, digits, ".", "_" and "-" (up to 64). Agents may name a model by it.',
  examples: ['openai-gpt-4o-mini'],
});
const Name = Type.String({ minLength: 1, maxLength: 120 });
const BaseUrl = Type.String({
  minLength: 1,
  maxLength: 500,
  description:
    'The http(s) base URL of an OpenAI-compatible upstream, e.g. https://api.openai.com/v1; built-in engines have none.',
});
const UpstreamModel = Type.String({
  minLength: 1,
  maxLength: 200,
  description: 'The model name the upstream expects; built-in engines default to their own name.',
});
const ApiKey = Type.String({
  minLength: 1,
  maxLength: 1000,
  description: 'Write-only: stored and sent upstream, never answered (see hasApiKey). null removes it.',
});
const LatencyClass = Type.Enum([...LATENCY_CLASSES], {
  description: 'How fast it answers: low suits live calls, high suits after-call work.',
});
const ContextTokens = Type.Integer({
  minimum: 1,
  maximum: 100_000_000,
  description: 'The largest context the model takes, in tokens.',
});

const PRICES = {
  llm: {
    inputPer1kTokensUsd: 'USD per 1,000 input (prompt) tokens.',
    outputPer1kTokensUsd: 'USD per 1,000 output (completion) tokens.',
  },
  stt: { perMinuteUsd: 'USD per minute of audio transcribed.' },
  tts: { per1kCharactersUsd: 'USD per 1,000 characters synthesized.' },
} as const;

const priceFields = <K extends keyof typeof PRICES, S extends TSchema>(kind: K, schema: (description: string) => S) =>
  Object.fromEntries(Object.entries(PRICES[kind]).map(([name, description]) => [name, schema(description)])) as {
    [P in keyof (typeof PRICES)[K]]: S;
  };

const writable = {
  name: Name,
  baseUrl: Type.Optional(Nullable(BaseUrl)),
  model: Type.Optional(UpstreamModel),
  apiKey: Type.Optional(Nullable(ApiKey)),
  latencyClass: Type.Optional(LatencyClass),
  active: Type.Optional(Type.Boolean({ description: 'Inactive models are not offered to agents.' })),
  isDefault: Type.Optional(
    Type.Boolean({
      description: 'The model used when an agent names none; one per kind. Setting it moves the default here.',
    }),
  ),
};

/** Names of each kind's schemas in the API document. */
const CATALOG_NAMES = { llm: 'Llm', stt: 'Stt', tts: 'Tts' } as const;

function bodies<K extends keyof typeof PRICES, P extends TSchema, E extends TProperties>(
  kind: K,
  provider: P,
  extra: E,
) {
  const create = Type.Object(
    { slug: Slug, provider, ...writable, ...priceFields(kind, PriceInput), ...extra },
    { additionalProperties: false },
  );
  const update = Type.Object(
    {
      slug: Type.Optional(Slug),
      provider: Type.Optional(provider),
      ...Type.Partial(Type.Object({ ...writable, ...priceFields(kind, PriceInput) })).properties,
      ...extra,
    },
    { additionalProperties: false, description: 'Fields left out keep their value.' },
  );
  const model = Type.Object(
    {
      id: Uuid,
      slug: Type.String(),
      name: Type.String(),
      provider,
      baseUrl: Nullable(Type.String()),
      model: Type.String(),
      hasApiKey: Type.Boolean({
        description: 'An API key is stored for the upstream; the key itself is never answered.',
      }),
      ...priceFields(kind, PriceOutput),
      latencyClass: LatencyClass,
      ...(kind === 'llm' ? { contextTokens: Nullable(Type.Integer()) } : {}),
      builtIn: Type.Boolean({
        description: 'An engine that ships with Parley: it can be repriced or turned off, not deleted.',
      }),
      active: Type.Boolean(),
      isDefault: Type.Boolean(),
      createdAt: DateTime,
      updatedAt: DateTime,
    },
    { title: `${CATALOG_NAMES[kind]}Model` },
  );
  const list = Type.Object({ models: Type.Array(model), ...PageFields }, { title: `${CATALOG_NAMES[kind]}ModelPage` });
  return { create, update, model, list };
}

export const MODEL_SCHEMAS = {
  llm: bodies('llm', Type.Enum([...MODEL_PROVIDERS.llm]), { contextTokens: Type.Optional(Nullable(ContextTokens)) }),
  stt: bodies('stt', Type.Enum([...MODEL_PROVIDERS.stt]), {}),
  tts: bodies('tts', Type.Enum([...MODEL_PROVIDERS.tts]), {}),
};

/** What any kind's create or update body may carry; each kind's schema allows its own subset. */
export interface ModelInput {
  slug?: string;
  provider?: string;
  name?: string;
  baseUrl?: string | null;
  model?: string;
  apiKey?: string | null;
  latencyClass?: (typeof LATENCY_CLASSES)[number];
  active?: boolean;
  isDefault?: boolean;
  contextTokens?: number | null;
  inputPer1kTokensUsd?: string;
  outputPer1kTokensUsd?: string;
  perMinuteUsd?: string;
  per1kCharactersUsd?: string;
}

export const ListModelsQuery = Type.Object(
  { ...PageQuery, active: Type.Optional(Type.Boolean()) },
  { additionalProperties: false },
);
export type ListModelsQuery = Static<typeof ListModelsQuery>;

const Country = Type.String({
  pattern: '^([A-Z]{2}|\\*)$',
  description: 'ISO 3166 alpha-2 code of the far end (US, GB, ...), or * for every country without a row of its own.',
});

const rateFields = <S extends TSchema>(schema: (description: string) => S) => ({
  inboundPerMinuteUsd: schema('USD per minute of a call received from this country.'),
  outboundPerMinuteUsd: schema('USD per minute of a call placed to this country.'),
});

export const TelephonyRatesBody = Type.Object(
  {
    rates: Type.Array(Type.Object({ country: Country, ...rateFields(PriceInput) }, { additionalProperties: false }), {
      minItems: 1,
      maxItems: 300,
      description: 'The whole table, replacing the current one: one row per country, and a * row.',
    }),
    platformFeePerMinuteUsd: PriceInput('USD per call minute on top of telephony and models; 0 for none.'),
  },
  { additionalProperties: false },
);
export type TelephonyRatesInput = Static<typeof TelephonyRatesBody>;

export const TelephonyRates = Type.Object(
  {
    rates: Type.Array(Type.Object({ country: Country, ...rateFields(PriceOutput), updatedAt: DateTime })),
    platformFeePerMinuteUsd: PriceOutput('USD per call minute on top of telephony and models.'),
  },
  { title: 'TelephonyRates' },
);
