-- Campaigns and the dialer: a campaign calls the contacts of its lists through one agent, paced, inside calling
-- windows, with retries by outcome. Every dial is an attempt row whose key (campaign, contact, attempt number) makes
-- a second dial of the same attempt impossible, whatever restarts or runs twice.

CREATE TABLE campaigns (
  id uuid PRIMARY KEY,
  account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  name text NOT NULL,
  agent_id uuid NOT NULL REFERENCES agents (id),
  contact_list_ids uuid[] NOT NULL,
  from_number_ids uuid[] NOT NULL DEFAULT '{}',
  max_concurrency integer NOT NULL CHECK (max_concurrency BETWEEN 1 AND 1000),
  calls_per_minute integer NOT NULL CHECK (calls_per_minute BETWEEN 1 AND 10000),
  -- {"days": ["mon", …], "start": "09:00", "end": "20:00"}, in the callee's local time.
  schedule jsonb NOT NULL,
  -- {"busy": {"attempts", "spacingMinutes"}, "no_answer": …, "voicemail": …, "failed": …}
  retry_rules jsonb NOT NULL,
  max_attempts_per_contact integer NOT NULL CHECK (max_attempts_per_contact BETWEEN 1 AND 20),
  stop_at timestamptz,
  voicemail_action text NOT NULL CHECK (voicemail_action IN ('hang_up', 'leave_message')),
  status text NOT NULL DEFAULT 'draft' CHECK (status IN ('draft', 'running', 'paused', 'completed', 'cancelled')),
  -- Why a paused campaign is paused: manual, compliance (with the figures) or no_usable_number.
  paused_reason text CHECK (paused_reason IN ('manual', 'compliance', 'no_usable_number')),
  paused_details jsonb,
  -- Rotation of the caller numbers, and numbers resting after a bad reputation: {"<numberId>": "<until>"}.
  number_cursor bigint NOT NULL DEFAULT 0,
  resting_numbers jsonb NOT NULL DEFAULT '{}'::jsonb,
  -- The governor's concurrency (at most max_concurrency): halved by an abandoned call, raised slowly by clean ones.
  pace_limit real NOT NULL DEFAULT 1,
  -- The contacts were copied into campaign_contacts at the first start.
  contacts_loaded boolean NOT NULL DEFAULT false,
  started_at timestamptz,
  completed_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX campaigns_account_created_idx ON campaigns (account_id, created_at DESC, id DESC);
CREATE INDEX campaigns_running_idx ON campaigns (status) WHERE status = 'running';

-- The dialer's queue: one row per contact of a campaign. pending rows whose next_attempt_at has come are due.
CREATE TABLE campaign_contacts (
  campaign_id uuid NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
  account_id uuid NOT NULL,
  contact_id uuid NOT NULL,
  -- pending -> claimed (by a dialer, not yet dialled) -> in_call -> pending (a retry) or done. A claim older than a
  -- few minutes belongs to a dialer that died before dialling: it goes back to pending.
  state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'claimed', 'in_call', 'done')),
  claimed_at timestamptz,
  -- Attempts dialled so far; the next one has this number plus one.
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL,
  last_outcome text,
  PRIMARY KEY (campaign_id, contact_id)
);
CREATE INDEX campaign_contacts_due_idx ON campaign_contacts (campaign_id, next_attempt_at) WHERE state = 'pending';
CREATE INDEX campaign_contacts_claimed_idx ON campaign_contacts (claimed_at) WHERE state = 'claimed';

-- One row per attempt; the gate's decision is stored on it, then the call and its outcome.
CREATE TABLE campaign_attempts (
  id uuid PRIMARY KEY,
  account_id uuid NOT NULL,
  campaign_id uuid NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
  contact_id uuid NOT NULL,
  attempt_number integer NOT NULL,
  -- denied: the gate said no (the same attempt is tried again later for a passing reason); dialed: a call was placed;
  -- ended: the call ended and its outcome is known.
  status text NOT NULL CHECK (status IN ('denied', 'dialed', 'ended')),
  decision text NOT NULL,
  decided_at timestamptz NOT NULL,
  call_id uuid,
  from_number text,
  outcome text,
  live_answered boolean NOT NULL DEFAULT false,
  abandoned boolean NOT NULL DEFAULT false,
  talk_seconds integer,
  cost_usd numeric(14, 6),
  disposition text,
  ended_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (campaign_id, contact_id, attempt_number)
);
CREATE INDEX campaign_attempts_call_idx ON campaign_attempts (account_id, call_id) WHERE call_id IS NOT NULL;
-- Attempts of a contact across the account's campaigns (the 24-hour limit, abandoned contacts).
CREATE INDEX campaign_attempts_contact_idx ON campaign_attempts (account_id, contact_id, decided_at) WHERE status <> 'denied';
-- Abandon rates: the live-answered calls of a campaign in a window.
CREATE INDEX campaign_attempts_answered_idx ON campaign_attempts (campaign_id, ended_at) WHERE live_answered;
-- Pace: the campaign's calls in flight and its dials in the last minute.
CREATE INDEX campaign_attempts_in_flight_idx ON campaign_attempts (campaign_id) WHERE status = 'dialed';
CREATE INDEX campaign_attempts_dialed_idx ON campaign_attempts (campaign_id, decided_at) WHERE status <> 'denied';

-- Aggregates kept as attempts change, so statistics read a few rows at any size.
CREATE TABLE campaign_stats (
  campaign_id uuid PRIMARY KEY REFERENCES campaigns (id) ON DELETE CASCADE,
  account_id uuid NOT NULL,
  contacts_total integer NOT NULL DEFAULT 0,
  contacts_done integer NOT NULL DEFAULT 0,
  dialed integer NOT NULL DEFAULT 0,
  connected integer NOT NULL DEFAULT 0,
  live_answered integer NOT NULL DEFAULT 0,
  voicemail integer NOT NULL DEFAULT 0,
  busy integer NOT NULL DEFAULT 0,
  no_answer integer NOT NULL DEFAULT 0,
  failed integer NOT NULL DEFAULT 0,
  abandoned integer NOT NULL DEFAULT 0,
  talk_seconds bigint NOT NULL DEFAULT 0,
  talk_calls integer NOT NULL DEFAULT 0,
  cost_usd numeric(16, 6) NOT NULL DEFAULT 0
);

CREATE TABLE campaign_counters (
  campaign_id uuid NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
  account_id uuid NOT NULL,
  -- 'denial' (gate denials by reason) or 'disposition' (the histogram).
  kind text NOT NULL CHECK (kind IN ('denial', 'disposition')),
  key text NOT NULL,
  count integer NOT NULL DEFAULT 0,
  PRIMARY KEY (campaign_id, kind, key)
);

-- How long after it was answered the agent began to speak: over 2 s to a live person is an abandoned call.
ALTER TABLE calls ADD COLUMN agent_latency_ms integer;
