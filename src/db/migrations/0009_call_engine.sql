-- The call engine: calls that really run. A live call keeps a heartbeat so a call left behind by a process that died
-- can be found and closed; what it used so far (tokens, characters, speech) is kept on the row for its costs.

ALTER TABLE calls
  ADD COLUMN heartbeat_at timestamptz,
  -- The process running the call (random per process), so a restarted embedded server knows the call is not its own.
  ADD COLUMN runner_id text,
  -- The voice provider that carried the call, and its own id for it.
  ADD COLUMN provider text,
  ADD COLUMN provider_call_id text,
  -- What the call used so far: {"llmInputTokens", "llmOutputTokens", "ttsCharacters", "sttMs"}.
  ADD COLUMN usage jsonb NOT NULL DEFAULT '{}'::jsonb;

-- Live calls of an account (the concurrency limit counts them) and, across accounts, the ones whose heartbeat stopped.
CREATE INDEX calls_live_idx ON calls (account_id, status) WHERE status IN ('dialing', 'ringing', 'connected');
CREATE INDEX calls_live_heartbeat_idx ON calls (heartbeat_at) WHERE status IN ('dialing', 'ringing', 'connected');
-- The queue: an account's waiting calls, oldest first.
CREATE INDEX calls_queued_idx ON calls (account_id, created_at, id) WHERE status = 'queued';

-- Events that belong to no single call (a campaign starting or pausing) have no call id.
ALTER TABLE call_events ALTER COLUMN call_id DROP NOT NULL;
ALTER TABLE call_events DROP CONSTRAINT call_events_type_check;
ALTER TABLE call_events ADD CONSTRAINT call_events_type_check CHECK (type IN (
  'call.queued', 'call.dialing', 'call.ringing', 'call.connected', 'call.turn', 'call.voicemail', 'call.transferred',
  'call.disposition_set', 'call.dnc_added', 'call.completed', 'call.failed',
  'campaign.started', 'campaign.compliance_paused'
));

-- Secrets the service generates for itself (the key that signs recording URLs), kept in the database so every
-- instance of a deployment uses the same one.
CREATE TABLE server_secrets (
  name text PRIMARY KEY,
  value text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
