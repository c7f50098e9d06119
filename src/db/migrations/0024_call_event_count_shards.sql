-- Every turn of every call writes a call.turn event, and the statement trigger added it to one counter row per
-- (account, type): each turn's transaction held that row's lock until it committed, so an account's concurrent calls
-- took their turns one at a time on PostgreSQL. Counts are now kept in up to 16 rows per (account, type), one per
-- database connection (its backend pid), so concurrent transactions add to different rows; `total` sums them.
ALTER TABLE call_event_type_counts ADD COLUMN shard smallint NOT NULL DEFAULT 0;
ALTER TABLE call_event_type_counts DROP CONSTRAINT call_event_type_counts_pkey;
ALTER TABLE call_event_type_counts ADD PRIMARY KEY (account_id, type, shard);

CREATE OR REPLACE FUNCTION call_events_maintain_type_counts() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO call_event_type_counts AS c (account_id, type, shard, events)
      SELECT account_id, type, (pg_backend_pid() % 16)::smallint, count(*)
      FROM inserted_events GROUP BY account_id, type ORDER BY account_id, type
      ON CONFLICT (account_id, type, shard) DO UPDATE SET events = c.events + EXCLUDED.events;
  ELSIF TG_OP = 'UPDATE' THEN
    RAISE EXCEPTION 'call events are immutable';
  ELSIF TG_OP = 'DELETE' THEN
    -- Taken off one existing row of each (account, type); only the sum means anything. An UPDATE, not an upsert:
    -- when an account is deleted its counts may already be gone, and must stay gone.
    UPDATE call_event_type_counts AS c SET events = c.events - gone.events
      FROM (
        SELECT DISTINCT ON (g.account_id, g.type) g.account_id, g.type, g.events, s.shard
        FROM (SELECT account_id, type, count(*) AS events FROM deleted_events GROUP BY account_id, type) AS g
        JOIN call_event_type_counts AS s ON s.account_id = g.account_id AND s.type = g.type
        ORDER BY g.account_id, g.type, s.shard
      ) AS gone
      WHERE c.account_id = gone.account_id AND c.type = gone.type AND c.shard = gone.shard;
  ELSIF TG_OP = 'TRUNCATE' THEN
    DELETE FROM call_event_type_counts;
  END IF;
  RETURN NULL;
END;
$$;
