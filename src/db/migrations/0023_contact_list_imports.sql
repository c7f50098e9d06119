-- Imports that answer at once (Prefer: respond-async) and go on in the background: a list exists from the moment its
-- file is received, in state processing, with its progress; the sweep fails the imports whose process stopped. Every
-- list now keeps its import report (the first 100 rows that could not be imported), whichever way it was imported.
ALTER TABLE contact_lists
  ADD COLUMN import_state text NOT NULL DEFAULT 'completed'
    CHECK (import_state IN ('processing', 'completed', 'failed')),
  ADD COLUMN import_rows_processed integer NOT NULL DEFAULT 0,
  ADD COLUMN import_bytes_read bigint NOT NULL DEFAULT 0,
  ADD COLUMN import_bytes_total bigint NOT NULL DEFAULT 0,
  -- 0 to 1: reading the file, then saving its contacts.
  ADD COLUMN import_fraction real NOT NULL DEFAULT 1,
  ADD COLUMN import_errors jsonb NOT NULL DEFAULT '[]',
  -- Why a failed import stopped: { code, message, details } as the API's error body has them.
  ADD COLUMN import_failure jsonb,
  -- Written with the progress, in database time: an import whose heartbeat is old lost its process.
  ADD COLUMN import_heartbeat_at timestamptz NOT NULL DEFAULT now(),
  ADD COLUMN import_finished_at timestamptz;

-- Lists imported before: complete, every row processed.
UPDATE contact_lists SET import_rows_processed = row_count, import_finished_at = created_at;

-- The sweep reads the few imports in progress, across accounts.
CREATE INDEX contact_lists_importing_idx ON contact_lists (import_heartbeat_at) WHERE import_state = 'processing';
