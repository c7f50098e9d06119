-- Disposition codes: the outcomes a call can be marked with, per account. System codes are the ones the call
-- engine sets by itself (voicemail, do_not_call, ...): they can be relabelled but never deleted or turned off.
CREATE TABLE disposition_codes (
  id uuid PRIMARY KEY,
  account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  code text NOT NULL CHECK (code ~ '^[a-z][a-z0-9_]{0,63}$'),
  label text NOT NULL CHECK (length(label) BETWEEN 1 AND 80),
  description text NOT NULL DEFAULT '',
  category text NOT NULL CHECK (category IN ('positive', 'neutral', 'negative', 'compliance')),
  is_system boolean NOT NULL DEFAULT false,
  active boolean NOT NULL DEFAULT true,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CHECK (active OR NOT is_system)
);
-- Calls store the code itself, so it is the key within an account.
CREATE UNIQUE INDEX disposition_codes_account_code ON disposition_codes (account_id, code);

-- The model catalog, platform-wide: the LLM, speech-to-text and text-to-speech engines agents may use, with prices.
-- Prices are numeric (never floats); each kind has its own price columns.
CREATE TABLE catalog_models (
  id uuid PRIMARY KEY,
  kind text NOT NULL CHECK (kind IN ('llm', 'stt', 'tts')),
  slug text NOT NULL CHECK (slug ~ '^[a-z0-9][a-z0-9._-]{0,63}$'),
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 120),
  provider text NOT NULL,
  -- The upstream of an OpenAI-compatible provider; built-in engines have none.
  base_url text,
  model text NOT NULL,
  -- Sent to the upstream; write-only through the API (only "hasApiKey" is ever answered).
  api_key text,
  input_per_1k_tokens_usd numeric(18, 8) CHECK (input_per_1k_tokens_usd >= 0),
  output_per_1k_tokens_usd numeric(18, 8) CHECK (output_per_1k_tokens_usd >= 0),
  per_minute_usd numeric(18, 8) CHECK (per_minute_usd >= 0),
  per_1k_characters_usd numeric(18, 8) CHECK (per_1k_characters_usd >= 0),
  latency_class text NOT NULL DEFAULT 'medium' CHECK (latency_class IN ('low', 'medium', 'high')),
  context_tokens integer CHECK (context_tokens > 0),
  -- Engines that ship with Parley: they can be repriced or turned off, not deleted.
  built_in boolean NOT NULL DEFAULT false,
  active boolean NOT NULL DEFAULT true,
  is_default boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CHECK ((kind = 'llm') = (input_per_1k_tokens_usd IS NOT NULL AND output_per_1k_tokens_usd IS NOT NULL)),
  CHECK ((kind = 'stt') = (per_minute_usd IS NOT NULL)),
  CHECK ((kind = 'tts') = (per_1k_characters_usd IS NOT NULL)),
  CHECK (kind = 'llm' OR context_tokens IS NULL),
  CHECK (active OR NOT is_default)
);
CREATE UNIQUE INDEX catalog_models_kind_slug ON catalog_models (kind, slug);
-- At most one default per kind: what a call uses when its agent names no model.
CREATE UNIQUE INDEX catalog_models_one_default ON catalog_models (kind) WHERE is_default;

INSERT INTO catalog_models
  (id, kind, slug, name, provider, base_url, model, input_per_1k_tokens_usd, output_per_1k_tokens_usd, per_minute_usd,
   per_1k_characters_usd, latency_class, context_tokens, built_in, active, is_default)
VALUES
  ('5c1d4a52-7c0e-4d8e-9a0e-000000000001', 'llm', 'parley-playbook', 'Parley playbook engine (built-in, not a model)',
   'parley-playbook', NULL, 'parley-playbook', 0, 0, NULL, NULL, 'low', NULL, true, true, true),
  ('5c1d4a52-7c0e-4d8e-9a0e-000000000002', 'llm', 'openai-gpt-4o-mini', 'OpenAI GPT-4o mini (reference)',
   'openai-compatible', 'https://api.openai.com/v1', 'gpt-4o-mini', 0.00015, 0.0006, NULL, NULL, 'medium', 128000, false, false, false),
  ('5c1d4a52-7c0e-4d8e-9a0e-000000000003', 'stt', 'parley-sim', 'Simulated network transcript (built-in)',
   'parley-sim', NULL, 'parley-sim', NULL, NULL, 0, NULL, 'low', NULL, true, true, true),
  ('5c1d4a52-7c0e-4d8e-9a0e-000000000004', 'stt', 'openai-whisper-1', 'OpenAI Whisper (reference)',
   'openai-compatible', 'https://api.openai.com/v1', 'whisper-1', NULL, NULL, 0.006, NULL, 'high', NULL, false, false, false),
  ('5c1d4a52-7c0e-4d8e-9a0e-000000000005', 'tts', 'espeak-ng', 'eSpeak NG (built-in, offline)',
   'espeak-ng', NULL, 'espeak-ng', NULL, NULL, NULL, 0, 'low', NULL, true, true, true),
  ('5c1d4a52-7c0e-4d8e-9a0e-000000000006', 'tts', 'openai-tts-1', 'OpenAI TTS (reference)',
   'openai-compatible', 'https://api.openai.com/v1', 'tts-1', NULL, NULL, NULL, 0.015, 'medium', NULL, false, false, false);

-- Telephony rates per far-end country ('*' is the fallback for every other country): per-minute prices by
-- direction. (The monthly fee of a bought phone number is the numbers module's, set by NUMBER_MONTHLY_FEES_USD.)
CREATE TABLE telephony_rates (
  country text PRIMARY KEY CHECK (country = '*' OR country ~ '^[A-Z]{2}$'),
  inbound_per_minute_usd numeric(18, 8) NOT NULL CHECK (inbound_per_minute_usd >= 0),
  outbound_per_minute_usd numeric(18, 8) NOT NULL CHECK (outbound_per_minute_usd >= 0),
  updated_at timestamptz NOT NULL DEFAULT now()
);

INSERT INTO telephony_rates (country, inbound_per_minute_usd, outbound_per_minute_usd) VALUES
  ('US', 0.0085, 0.014),
  ('CA', 0.0085, 0.014),
  ('GB', 0.01, 0.03),
  ('DE', 0.01, 0.035),
  ('FR', 0.01, 0.035),
  ('AU', 0.01, 0.04),
  ('*', 0.02, 0.1);

-- Platform-wide pricing settings: one row.
CREATE TABLE pricing_settings (
  singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  -- Charged per call minute on top of telephony and models; 0 means no platform fee.
  platform_fee_per_minute_usd numeric(18, 8) NOT NULL CHECK (platform_fee_per_minute_usd >= 0),
  updated_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO pricing_settings (platform_fee_per_minute_usd) VALUES (0);
