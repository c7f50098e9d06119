-- Post-call analysis. After a call that was answered, a job writes what it came to: a summary, the outcome, whether
-- the agent's mission succeeded, next steps, a callback time when one was asked for, and the values of the fields the
-- agent declares. One row per call, written once.
CREATE TABLE call_analyses (
  call_id uuid PRIMARY KEY REFERENCES calls (id) ON DELETE CASCADE,
  account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  summary text NOT NULL,
  outcome text NOT NULL,
  mission_succeeded boolean NOT NULL,
  mission_reason text NOT NULL,
  next_steps jsonb NOT NULL DEFAULT '[]',
  -- The words the callee asked to be called back with ("tomorrow after 3"); null when no callback was asked for.
  callback_asked text,
  callback_at timestamptz,
  -- The zone callback_at was read in: the contact's, else the number's, else the account's.
  callback_time_zone text,
  -- The declared fields' values by name (null: not said).
  fields jsonb NOT NULL DEFAULT '{}',
  -- model: the agent's LLM wrote it; transcript: the built-in extractor read it from the transcript.
  method text NOT NULL CHECK (method IN ('model', 'transcript')),
  model text,
  analyzed_at timestamptz NOT NULL
);
CREATE INDEX call_analyses_account_idx ON call_analyses (account_id);

-- The callback due time on the call itself (the analysis's callback_at), for follow-up tasks and campaign retries.
ALTER TABLE calls ADD COLUMN callback_at timestamptz;

-- What an agent asks the analysis to extract from its calls: [{ "name", "type", "description" }].
ALTER TABLE agents ADD COLUMN analysis_fields jsonb NOT NULL DEFAULT '[]';
