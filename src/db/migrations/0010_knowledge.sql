-- Knowledge: each agent's knowledge base, split into chunks of about 500 tokens and indexed for full-text search in
-- the agent's language (a text-search configuration such as 'english', or 'simple'). Chunks are rebuilt whenever the
-- knowledge changes; the index row says what text they were built from, so a change not yet indexed shows as pending.

CREATE TABLE knowledge_chunks (
  id uuid PRIMARY KEY,
  account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  agent_id uuid NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
  seq integer NOT NULL CHECK (seq >= 0),
  -- The markdown headings above the chunk, joined with " > " (empty before the first heading).
  heading text NOT NULL DEFAULT '',
  content text NOT NULL,
  tokens integer NOT NULL CHECK (tokens >= 0),
  language regconfig NOT NULL DEFAULT 'simple',
  -- Headings weigh more than body text in the ranking.
  search tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector(language, heading), 'A') || setweight(to_tsvector(language, content), 'B')
  ) STORED,
  -- The same lexemes prefixed with the agent's id ("<agent id hex>_warranti"), written after each re-index: its GIN
  -- index finds one agent's chunks for a word without reading any other chunk, which a plain GIN on `search` cannot
  -- (the planner then scans every chunk of the agent and reads each tsvector).
  scoped tsvector,
  -- An embedding from the configured embeddings upstream, when there is one (cosine similarity is computed in code).
  embedding real[],
  UNIQUE (account_id, agent_id, seq)
);
CREATE INDEX knowledge_chunks_scoped_idx ON knowledge_chunks USING gin (scoped);

CREATE TABLE knowledge_indexes (
  account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  agent_id uuid NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
  -- sha256 of the language and the knowledge text the chunks were built from.
  source_hash text NOT NULL,
  language regconfig NOT NULL,
  chunks integer NOT NULL CHECK (chunks >= 0),
  characters integer NOT NULL CHECK (characters >= 0),
  embedded boolean NOT NULL DEFAULT false,
  indexed_at timestamptz NOT NULL,
  PRIMARY KEY (account_id, agent_id)
);

-- Retrieved knowledge is part of a call's timeline.
ALTER TABLE call_events DROP CONSTRAINT call_events_type_check;
ALTER TABLE call_events ADD CONSTRAINT call_events_type_check CHECK (type IN (
  'call.queued', 'call.dialing', 'call.ringing', 'call.connected', 'call.turn', 'call.voicemail', 'call.transferred',
  'call.disposition_set', 'call.dnc_added', 'call.completed', 'call.failed', 'call.knowledge_retrieved',
  'campaign.started', 'campaign.compliance_paused'
));
