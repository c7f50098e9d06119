-- Domain events: what changed in an account, written in the same transaction as the change.
-- Subscribers (the audit log today; webhooks, the CRM timeline and billing later) receive each one through a job.
CREATE TABLE domain_events (
  id uuid PRIMARY KEY,
  account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  type text NOT NULL,
  subject_type text NOT NULL,
  subject_id text NOT NULL,
  actor_user_id uuid,
  actor_api_key_id uuid,
  data jsonb NOT NULL DEFAULT '{}',
  occurred_at timestamptz NOT NULL
);
CREATE INDEX domain_events_account_time ON domain_events (account_id, occurred_at DESC, id DESC);
-- The retention job deletes by age across accounts.
CREATE INDEX domain_events_time ON domain_events (occurred_at);

-- The audit log: one row per domain event, keyed by the event's id, so a redelivered event is recorded once.
CREATE TABLE audit_events (
  id uuid PRIMARY KEY,
  account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  type text NOT NULL,
  subject_type text NOT NULL,
  subject_id text NOT NULL,
  actor_user_id uuid,
  actor_api_key_id uuid,
  data jsonb NOT NULL DEFAULT '{}',
  occurred_at timestamptz NOT NULL,
  recorded_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX audit_events_account_time ON audit_events (account_id, occurred_at DESC, id DESC);
CREATE INDEX audit_events_account_subject ON audit_events (account_id, subject_id, occurred_at DESC);
