-- The outbound calls each number placed, kept by the numbers module for its reputation: written when a call ends
-- (call.completed / call.failed), so the module reads no other module's table. Rows older than two days are of no
-- use (the reputation looks at 24 hours) and are deleted as the number's next calls end.
CREATE TABLE number_calls (
  account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  call_id uuid NOT NULL,
  from_number text COLLATE "C" NOT NULL,
  ended_at timestamptz NOT NULL,
  answered boolean NOT NULL,
  -- Answered and over within seconds (hung up at once).
  short boolean NOT NULL,
  -- One row per call: the end event delivered twice writes it once.
  PRIMARY KEY (account_id, call_id)
);
CREATE INDEX number_calls_window ON number_calls (account_id, from_number, ended_at);

-- The calls that ended before this table existed.
INSERT INTO number_calls (account_id, call_id, from_number, ended_at, answered, short)
SELECT account_id, id, from_number, coalesce(ended_at, updated_at), answered_at IS NOT NULL,
       answered_at IS NOT NULL AND coalesce(duration_seconds < 10, false)
FROM calls
WHERE direction = 'outbound'
  AND status IN ('completed', 'failed', 'busy', 'no_answer')
  AND from_number IS NOT NULL
  AND coalesce(ended_at, updated_at) >= now() - interval '2 days'
ON CONFLICT DO NOTHING;
