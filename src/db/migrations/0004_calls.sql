-- Calls and what a call leaves behind: transcript turns, cost line items and events.
-- Written by the call engine (queued -> dialing -> ringing -> connected -> completed, or failed / busy / no_answer);
-- read by GET /v1/calls and friends.

CREATE TABLE calls (
  id uuid PRIMARY KEY,
  account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  -- Agents are soft-deleted, so a past call keeps its agent and the agent's name.
  agent_id uuid REFERENCES agents (id) ON DELETE SET NULL,
  -- The agent version the call started with (DESIGN §4: a call is pinned to it).
  agent_version integer CHECK (agent_version >= 1),
  contact_id uuid REFERENCES contacts (id) ON DELETE SET NULL,
  -- Campaigns come in a later issue; the foreign key is added then.
  campaign_id uuid,
  direction text NOT NULL CHECK (direction IN ('inbound', 'outbound')),
  status text NOT NULL DEFAULT 'queued'
    CHECK (status IN ('queued', 'dialing', 'ringing', 'connected', 'completed', 'failed', 'busy', 'no_answer')),
  disposition text,
  from_number text,
  to_number text,
  started_at timestamptz,
  answered_at timestamptz,
  ended_at timestamptz,
  duration_seconds integer CHECK (duration_seconds >= 0),
  -- Kept equal to the sum of call_cost_items.amount_usd by the trigger below.
  total_cost_usd numeric(14, 6) NOT NULL DEFAULT 0,
  recording_storage_key text,
  -- Why the call ended: caller_hangup, agent_hangup, busy, no_answer, voicemail, transferred, error: <detail>, ...
  end_reason text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CHECK (answered_at IS NULL OR started_at IS NULL OR answered_at >= started_at),
  CHECK (ended_at IS NULL OR started_at IS NULL OR ended_at >= started_at)
);

-- GET /v1/calls sorts by (created_at DESC, id DESC) within an account: one index per filter, each ending in that
-- order, so any single filter reads just one page of index entries. Date ranges use the first index.
CREATE INDEX calls_account_created_idx ON calls (account_id, created_at DESC, id DESC);
CREATE INDEX calls_account_status_created_idx ON calls (account_id, status, created_at DESC, id DESC);
CREATE INDEX calls_account_agent_created_idx ON calls (account_id, agent_id, created_at DESC, id DESC)
  WHERE agent_id IS NOT NULL;
CREATE INDEX calls_account_contact_created_idx ON calls (account_id, contact_id, created_at DESC, id DESC)
  WHERE contact_id IS NOT NULL;
CREATE INDEX calls_account_campaign_created_idx ON calls (account_id, campaign_id, created_at DESC, id DESC)
  WHERE campaign_id IS NOT NULL;
CREATE INDEX calls_account_with_recording_created_idx ON calls (account_id, created_at DESC, id DESC)
  WHERE recording_storage_key IS NOT NULL;
CREATE INDEX calls_account_without_recording_created_idx ON calls (account_id, created_at DESC, id DESC)
  WHERE recording_storage_key IS NULL;

-- How many calls an account has per (status, agent, campaign, has a recording): `total` for any mix of those
-- filters (or none) is a sum over the account's few rows here -- one per combination in use, typically
-- (agents + campaigns) x statuses -- instead of a count over millions of calls. Only contactId and date ranges
-- fall back to an indexed count(*). Maintained only by the triggers below.
CREATE TABLE call_counts (
  account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  status text NOT NULL,
  agent_id uuid,
  campaign_id uuid,
  has_recording boolean NOT NULL,
  calls bigint NOT NULL
);
CREATE UNIQUE INDEX call_counts_key ON call_counts (account_id, status, agent_id, campaign_id, has_recording) NULLS NOT DISTINCT;

-- Statement-level triggers with transition tables: a bulk insert of a million calls is one upsert per
-- combination, not a million. An update moves counts only when a counted column changed. Rows are upserted in key
-- order so concurrent writers lock them in the same order and cannot deadlock.
CREATE FUNCTION calls_maintain_counts() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO call_counts AS c (account_id, status, agent_id, campaign_id, has_recording, calls)
      SELECT account_id, status, agent_id, campaign_id, recording_storage_key IS NOT NULL, count(*)
      FROM new_calls
      GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5
      ON CONFLICT (account_id, status, agent_id, campaign_id, has_recording) DO UPDATE SET calls = c.calls + EXCLUDED.calls;
  ELSIF TG_OP = 'UPDATE' THEN
    INSERT INTO call_counts AS c (account_id, status, agent_id, campaign_id, has_recording, calls)
      SELECT account_id, status, agent_id, campaign_id, has_recording, sum(delta) FROM (
        SELECT account_id, status, agent_id, campaign_id, recording_storage_key IS NOT NULL AS has_recording, 1 AS delta
          FROM new_calls
        UNION ALL
        SELECT account_id, status, agent_id, campaign_id, recording_storage_key IS NOT NULL, -1 FROM old_calls
      ) AS changes
      GROUP BY 1, 2, 3, 4, 5 HAVING sum(delta) <> 0 ORDER BY 1, 2, 3, 4, 5
      ON CONFLICT (account_id, status, agent_id, campaign_id, has_recording) DO UPDATE SET calls = c.calls + EXCLUDED.calls;
  ELSIF TG_OP = 'DELETE' THEN
    -- An UPDATE, not an upsert: when an account is deleted its counts may already be gone, and must stay gone.
    UPDATE call_counts AS c SET calls = c.calls - gone.calls
      FROM (
        SELECT account_id, status, agent_id, campaign_id, recording_storage_key IS NOT NULL AS has_recording, count(*) AS calls
        FROM old_calls GROUP BY 1, 2, 3, 4, 5
      ) AS gone
      WHERE c.account_id = gone.account_id AND c.status = gone.status AND c.has_recording = gone.has_recording
        AND c.agent_id IS NOT DISTINCT FROM gone.agent_id AND c.campaign_id IS NOT DISTINCT FROM gone.campaign_id;
  ELSIF TG_OP = 'TRUNCATE' THEN
    DELETE FROM call_counts;
  END IF;
  RETURN NULL;
END;
$$;

CREATE TRIGGER calls_counts_insert AFTER INSERT ON calls
  REFERENCING NEW TABLE AS new_calls
  FOR EACH STATEMENT EXECUTE FUNCTION calls_maintain_counts();
CREATE TRIGGER calls_counts_update AFTER UPDATE ON calls
  REFERENCING OLD TABLE AS old_calls NEW TABLE AS new_calls
  FOR EACH STATEMENT EXECUTE FUNCTION calls_maintain_counts();
CREATE TRIGGER calls_counts_delete AFTER DELETE ON calls
  REFERENCING OLD TABLE AS old_calls
  FOR EACH STATEMENT EXECUTE FUNCTION calls_maintain_counts();
CREATE TRIGGER calls_counts_truncate AFTER TRUNCATE ON calls
  FOR EACH STATEMENT EXECUTE FUNCTION calls_maintain_counts();

CREATE TABLE call_transcript_turns (
  call_id uuid NOT NULL REFERENCES calls (id) ON DELETE CASCADE,
  account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  seq integer NOT NULL CHECK (seq >= 0),
  speaker text NOT NULL CHECK (speaker IN ('agent', 'caller', 'system', 'tool')),
  text text NOT NULL,
  -- Offsets from the start of the call, in milliseconds.
  start_ms integer CHECK (start_ms >= 0),
  end_ms integer CHECK (end_ms >= 0),
  PRIMARY KEY (call_id, seq),
  CHECK (end_ms IS NULL OR start_ms IS NULL OR end_ms >= start_ms)
);

CREATE TABLE call_cost_items (
  id uuid PRIMARY KEY,
  call_id uuid NOT NULL REFERENCES calls (id) ON DELETE CASCADE,
  account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  kind text NOT NULL CHECK (kind IN ('telephony', 'llm', 'stt', 'tts', 'recording', 'platform')),
  description text NOT NULL,
  quantity numeric(18, 6) NOT NULL CHECK (quantity >= 0),
  -- What quantity counts: minute, second, 1k_tokens, character, ...
  unit text NOT NULL,
  unit_price_usd numeric(18, 8) NOT NULL CHECK (unit_price_usd >= 0),
  -- Rounded to 6 places, the scale of calls.total_cost_usd, so the items add up to the total exactly.
  amount_usd numeric(14, 6) NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX call_cost_items_call_idx ON call_cost_items (call_id, created_at, id);

-- calls.total_cost_usd is derived: whatever writes cost items, the call's total stays their sum.
-- One function serves the three triggers: each names its transition table changed_items, and the update trigger
-- also passes the old rows, so an item moved to another call refreshes both calls.
CREATE FUNCTION call_cost_items_refresh_totals() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  affected_calls uuid[];
BEGIN
  IF TG_OP = 'UPDATE' THEN
    SELECT array_agg(call_id) INTO affected_calls
      FROM (SELECT call_id FROM changed_items UNION SELECT call_id FROM replaced_items) AS ids;
  ELSE
    SELECT array_agg(DISTINCT call_id) INTO affected_calls FROM changed_items;
  END IF;
  UPDATE calls SET
    total_cost_usd = coalesce((SELECT sum(i.amount_usd) FROM call_cost_items i WHERE i.call_id = calls.id), 0),
    updated_at = now()
  WHERE calls.id = ANY (affected_calls);
  RETURN NULL;
END;
$$;
CREATE TRIGGER call_cost_items_totals_insert AFTER INSERT ON call_cost_items
  REFERENCING NEW TABLE AS changed_items
  FOR EACH STATEMENT EXECUTE FUNCTION call_cost_items_refresh_totals();
CREATE TRIGGER call_cost_items_totals_update AFTER UPDATE ON call_cost_items
  REFERENCING OLD TABLE AS replaced_items NEW TABLE AS changed_items
  FOR EACH STATEMENT EXECUTE FUNCTION call_cost_items_refresh_totals();
CREATE TRIGGER call_cost_items_totals_delete AFTER DELETE ON call_cost_items
  REFERENCING OLD TABLE AS changed_items
  FOR EACH STATEMENT EXECUTE FUNCTION call_cost_items_refresh_totals();

CREATE TABLE call_events (
  id uuid PRIMARY KEY,
  account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  call_id uuid NOT NULL REFERENCES calls (id) ON DELETE CASCADE,
  type text NOT NULL
    CHECK (type IN ('call.queued', 'call.dialing', 'call.ringing', 'call.connected', 'call.completed', 'call.failed')),
  data jsonb NOT NULL DEFAULT '{}'::jsonb,
  occurred_at timestamptz NOT NULL DEFAULT now()
);
-- GET /v1/events (newest first, optionally by type) and GET /v1/calls/{id}/events (one call's timeline).
CREATE INDEX call_events_account_occurred_idx ON call_events (account_id, occurred_at DESC, id DESC);
CREATE INDEX call_events_account_type_occurred_idx ON call_events (account_id, type, occurred_at DESC, id DESC);
CREATE INDEX call_events_account_call_occurred_idx ON call_events (account_id, call_id, occurred_at DESC, id DESC);

-- Events per (account, type), so GET /v1/events can answer `total` without counting millions of rows.
-- Events are written once and never change type; they go away only with their call (or account).
CREATE TABLE call_event_type_counts (
  account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  type text NOT NULL,
  events bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (account_id, type)
);

CREATE FUNCTION call_events_maintain_type_counts() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO call_event_type_counts AS c (account_id, type, events)
      SELECT account_id, type, count(*) FROM inserted_events GROUP BY account_id, type ORDER BY account_id, type
      ON CONFLICT (account_id, type) DO UPDATE SET events = c.events + EXCLUDED.events;
  ELSIF TG_OP = 'UPDATE' THEN
    RAISE EXCEPTION 'call events are immutable';
  ELSIF TG_OP = 'DELETE' THEN
    UPDATE call_event_type_counts AS c SET events = c.events - gone.events
      FROM (SELECT account_id, type, count(*) AS events FROM deleted_events GROUP BY account_id, type) AS gone
      WHERE c.account_id = gone.account_id AND c.type = gone.type;
  ELSIF TG_OP = 'TRUNCATE' THEN
    DELETE FROM call_event_type_counts;
  END IF;
  RETURN NULL;
END;
$$;

CREATE TRIGGER call_events_type_counts_insert AFTER INSERT ON call_events
  REFERENCING NEW TABLE AS inserted_events
  FOR EACH STATEMENT EXECUTE FUNCTION call_events_maintain_type_counts();
-- An update could move an event between types or accounts and leave the counts wrong: events are append-only.
CREATE TRIGGER call_events_immutable BEFORE UPDATE ON call_events
  FOR EACH STATEMENT EXECUTE FUNCTION call_events_maintain_type_counts();
CREATE TRIGGER call_events_type_counts_delete AFTER DELETE ON call_events
  REFERENCING OLD TABLE AS deleted_events
  FOR EACH STATEMENT EXECUTE FUNCTION call_events_maintain_type_counts();
CREATE TRIGGER call_events_type_counts_truncate AFTER TRUNCATE ON call_events
  FOR EACH STATEMENT EXECUTE FUNCTION call_events_maintain_type_counts();
