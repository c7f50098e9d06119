-- Agents and the saved versions of their prompts (DESIGN §4).
CREATE TABLE agents (
  id uuid PRIMARY KEY,
  account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 120),
  status text NOT NULL DEFAULT 'draft' CHECK (status IN ('draft', 'active', 'paused')),
  -- Bumped by every saved change to a prompt part or the first message; agent_versions holds each one.
  version integer NOT NULL DEFAULT 1 CHECK (version >= 1),
  voice_id text,
  live_llm_id text,
  first_message text NOT NULL DEFAULT '',
  -- The prompt parts, in the order they are assembled into the system prompt.
  soul text NOT NULL DEFAULT '',
  mission text NOT NULL DEFAULT '',
  playbook text NOT NULL DEFAULT '',
  examples text NOT NULL DEFAULT '',
  objections text NOT NULL DEFAULT '',
  closers text NOT NULL DEFAULT '',
  notes text NOT NULL DEFAULT '',
  faq text NOT NULL DEFAULT '',
  knowledge text NOT NULL DEFAULT '',
  transfer_number text CHECK (transfer_number ~ '^\+[1-9][0-9]{6,14}$'),
  transfer_when text NOT NULL DEFAULT '',
  voicemail_action text NOT NULL DEFAULT 'hang_up' CHECK (voicemail_action IN ('hang_up', 'leave_message')),
  voicemail_message text NOT NULL DEFAULT '',
  -- Maintained by phone-number assignment: the one number routed to this agent.
  inbound_did text,
  -- Maintained by the call engine: when the agent's last call completed.
  last_call_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  -- Soft delete: past calls keep their agent_id and can still show the agent's name.
  deleted_at timestamptz
);
CREATE INDEX agents_account_list_idx ON agents (account_id, created_at DESC, id DESC) WHERE deleted_at IS NULL;
CREATE INDEX agents_account_status_idx ON agents (account_id, status, created_at DESC, id DESC) WHERE deleted_at IS NULL;
-- A number routes inbound calls to exactly one agent.
CREATE UNIQUE INDEX agents_inbound_did_key ON agents (inbound_did) WHERE inbound_did IS NOT NULL;

CREATE TABLE agent_versions (
  id uuid PRIMARY KEY,
  agent_id uuid NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
  account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  version integer NOT NULL CHECK (version >= 1),
  -- Full snapshot of every prompt part and the first message, keyed by their API names.
  parts jsonb NOT NULL,
  -- API names of the parts that differ from the previous version (for version 1: the non-empty ones).
  changed_parts text[] NOT NULL,
  created_by_user_id uuid REFERENCES users (id) ON DELETE SET NULL,
  created_by_api_key_id uuid REFERENCES api_keys (id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (agent_id, version)
);
