-- Phone numbers: brought by the account (byo) or bought from the built-in carrier (purchased), each routing inbound
-- calls to at most one agent, and the monthly fees bought numbers are charged (read by billing).

CREATE TABLE phone_numbers (
  id uuid PRIMARY KEY,
  account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  -- E.164. "C" collation like every phone column (see contacts): E.164 is ASCII.
  number text COLLATE "C" NOT NULL CHECK (number ~ '^\+[1-9][0-9]{6,14}$'),
  country text NOT NULL CHECK (country ~ '^[A-Z]{2}$'),
  area_code text CHECK (area_code ~ '^[0-9]{1,6}$'),
  capabilities text[] NOT NULL DEFAULT '{voice}',
  source text NOT NULL CHECK (source IN ('byo', 'purchased')),
  monthly_fee_usd numeric(10, 2) NOT NULL DEFAULT 0 CHECK (monthly_fee_usd >= 0),
  -- The agent that takes inbound calls to the number; mirrored in agents.inbound_did in the same transaction.
  agent_id uuid REFERENCES agents (id) ON DELETE SET NULL,
  -- The last reputation check: null until the first one.
  reputation_score smallint CHECK (reputation_score BETWEEN 0 AND 100),
  reputation_label text CHECK (reputation_label IN ('clean', 'at_risk', 'spam_likely')),
  reputation_calls integer CHECK (reputation_calls >= 0),
  reputation_answered integer CHECK (reputation_answered >= 0),
  reputation_short integer CHECK (reputation_short >= 0),
  reputation_checked_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
-- A number belongs to one account on the whole platform, and an inbound call finds its account by the number alone.
CREATE UNIQUE INDEX phone_numbers_number_key ON phone_numbers (number);
-- An agent takes inbound calls on at most one number.
CREATE UNIQUE INDEX phone_numbers_agent_key ON phone_numbers (agent_id) WHERE agent_id IS NOT NULL;
CREATE INDEX phone_numbers_account_created_idx ON phone_numbers (account_id, created_at DESC, id DESC);
CREATE INDEX phone_numbers_account_unassigned_idx ON phone_numbers (account_id, created_at DESC, id DESC)
  WHERE agent_id IS NULL;

-- What bought numbers cost: one row per number per month, charged in advance. A released number keeps its
-- charges (phone_number_id becomes null; number and amount stay).
CREATE TABLE number_charges (
  id uuid PRIMARY KEY,
  account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  phone_number_id uuid REFERENCES phone_numbers (id) ON DELETE SET NULL,
  number text COLLATE "C" NOT NULL,
  description text NOT NULL,
  amount_usd numeric(10, 2) NOT NULL CHECK (amount_usd >= 0),
  period_start timestamptz NOT NULL,
  period_end timestamptz NOT NULL CHECK (period_end > period_start),
  created_at timestamptz NOT NULL DEFAULT now()
);
-- One charge per number per period: a renewal run twice charges once.
CREATE UNIQUE INDEX number_charges_period_key ON number_charges (phone_number_id, period_start);
CREATE INDEX number_charges_account_period_idx ON number_charges (account_id, period_start);
