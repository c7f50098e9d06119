import type { ColumnType, Generated } from 'kysely';

export const MODEL_KINDS = ['llm', 'stt', 'tts'] as const;
export type ModelKind = (typeof MODEL_KINDS)[number];

/** Who runs each kind of model: an engine built into Parley, or any OpenAI-compatible upstream. */
export const MODEL_PROVIDERS = {
  llm: ['parley-playbook', 'openai-compatible'],
  stt: ['parley-sim', 'openai-compatible'],
  tts: ['espeak-ng', 'openai-compatible'],
} as const satisfies Record<ModelKind, readonly string[]>;
export type ModelProvider = (typeof MODEL_PROVIDERS)[ModelKind][number];
/** The provider that talks to an upstream over HTTP; every other one is built in and has no base URL or key. */
export const UPSTREAM_PROVIDER = 'openai-compatible';

export const LATENCY_CLASSES = ['low', 'medium', 'high'] as const;
export type LatencyClass = (typeof LATENCY_CLASSES)[number];

/** numeric(18, 8): read back as a decimal string. */
type Price = ColumnType<string, string, string>;
type NullablePrice = ColumnType<string | null, string | null, string | null>;

export interface CatalogModelsTable {
  id: string;
  kind: ModelKind;
  slug: string;
  name: string;
  provider: ModelProvider;
  base_url: string | null;
  model: string;
  api_key: string | null;
  input_per_1k_tokens_usd: NullablePrice;
  output_per_1k_tokens_usd: NullablePrice;
  per_minute_usd: NullablePrice;
  per_1k_characters_usd: NullablePrice;
  latency_class: LatencyClass;
  context_tokens: number | null;
  built_in: Generated<boolean>;
  active: boolean;
  is_default: boolean;
  created_at: ColumnType<Date, Date | undefined, never>;
  updated_at: ColumnType<Date, Date | undefined, Date>;
}

export interface TelephonyRatesTable {
  country: string;
  inbound_per_minute_usd: Price;
  outbound_per_minute_usd: Price;
  updated_at: ColumnType<Date, Date | undefined, Date>;
}

export interface PricingSettingsTable {
  singleton: Generated<boolean>;
  platform_fee_per_minute_usd: Price;
  updated_at: ColumnType<Date, Date | undefined, Date>;
}

export interface CatalogTables {
  catalog_models: CatalogModelsTable;
  telephony_rates: TelephonyRatesTable;
  pricing_settings: PricingSettingsTable;
}
