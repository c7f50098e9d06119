-- Outbound webhooks: endpoints an account registers, one delivery per (event, endpoint), and every attempt of it.

CREATE TABLE webhook_endpoints (
  id uuid PRIMARY KEY,
  account_id uuid NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  url text NOT NULL,
  description text,
  -- The event types it receives (a JSON array of strings).
  events jsonb NOT NULL,
  enabled boolean NOT NULL DEFAULT true,
  -- The signing secret, encrypted (AES-256-GCM) under the server's webhook key: signing needs the secret itself.
  secret_encrypted text NOT NULL,
  -- After a rotation the old secret still signs until previous_secret_expires_at.
  previous_secret_encrypted text,
  previous_secret_expires_at timestamptz,
  failure_streak integer NOT NULL DEFAULT 0,
  disabled_reason text,
  disabled_at timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX webhook_endpoints_account_idx ON webhook_endpoints (account_id, created_at DESC, id);

CREATE TABLE webhook_deliveries (
  id uuid PRIMARY KEY,
  account_id uuid NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  endpoint_id uuid NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
  -- The domain event delivered; null for a test event.
  event_id uuid,
  event_type text NOT NULL,
  -- What the event is about (a call id): deliveries of one subject go out in order.
  subject_id text,
  occurred_at timestamptz NOT NULL,
  -- Fan-out order, to break ties between events of the same instant.
  seq bigserial NOT NULL,
  -- The exact bytes sent (and signed), the same on every attempt.
  body text NOT NULL,
  state text NOT NULL CHECK (state IN ('pending', 'succeeded', 'failed', 'abandoned')),
  -- Attempts ever made (numbers the attempt rows), and attempts in the current round (a redelivery starts a new one).
  attempt_count integer NOT NULL DEFAULT 0,
  round_attempts integer NOT NULL DEFAULT 0,
  -- A pending delivery is due at this time (a claimed attempt pushes it out by a lease, so a crash is retried).
  next_attempt_at timestamptz,
  -- Set once its first attempt has ended: later events of the same subject wait until then.
  first_attempt_done boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  UNIQUE (endpoint_id, event_id)
);
CREATE INDEX webhook_deliveries_endpoint_idx ON webhook_deliveries (account_id, endpoint_id, created_at DESC, id);
CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at) WHERE state = 'pending';
CREATE INDEX webhook_deliveries_order_idx ON webhook_deliveries (endpoint_id, subject_id, occurred_at, seq) WHERE state = 'pending';
CREATE INDEX webhook_deliveries_created_idx ON webhook_deliveries (created_at);

CREATE TABLE webhook_attempts (
  delivery_id uuid NOT NULL REFERENCES webhook_deliveries(id) ON DELETE CASCADE,
  -- One row per attempt number: two workers can never both make attempt n.
  number integer NOT NULL,
  account_id uuid NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  started_at timestamptz NOT NULL,
  finished_at timestamptz,
  status_code integer,
  latency_ms integer,
  error text,
  -- The first 1 KB of the response body.
  response_excerpt text,
  PRIMARY KEY (delivery_id, number)
);

-- The key that encrypts signing secrets when WEBHOOK_SECRET_KEY is not set, generated once for every instance.
CREATE TABLE webhook_keys (
  name text PRIMARY KEY,
  value text NOT NULL
);
