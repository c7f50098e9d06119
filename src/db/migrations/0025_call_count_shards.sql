-- A call's status changes (queued, dialing, ringing, connected, ended) each moved a count between two rows of
-- call_counts shared by every call of the same agent and campaign, and held their locks until commit: concurrent
-- calls started and ended one at a time on PostgreSQL. As with the event counts, each (account, status, agent,
-- campaign, has a recording) now has up to 16 rows, one per database connection (its backend pid); `total` sums them.
ALTER TABLE call_counts ADD COLUMN shard smallint NOT NULL DEFAULT 0;
DROP INDEX call_counts_key;
CREATE UNIQUE INDEX call_counts_key
  ON call_counts (account_id, status, agent_id, campaign_id, has_recording, shard) NULLS NOT DISTINCT;

CREATE OR REPLACE FUNCTION calls_maintain_counts() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  mine smallint := (pg_backend_pid() % 16)::smallint;
BEGIN
  -- Rows are upserted in key order so concurrent writers lock them in the same order and cannot deadlock.
  IF TG_OP = 'INSERT' THEN
    INSERT INTO call_counts AS c (account_id, status, agent_id, campaign_id, has_recording, shard, calls)
      SELECT account_id, status, agent_id, campaign_id, recording_storage_key IS NOT NULL, mine, count(*)
      FROM new_calls
      GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5
      ON CONFLICT (account_id, status, agent_id, campaign_id, has_recording, shard)
      DO UPDATE SET calls = c.calls + EXCLUDED.calls;
  ELSIF TG_OP = 'UPDATE' THEN
    INSERT INTO call_counts AS c (account_id, status, agent_id, campaign_id, has_recording, shard, calls)
      SELECT account_id, status, agent_id, campaign_id, has_recording, mine, sum(delta) FROM (
        SELECT account_id, status, agent_id, campaign_id, recording_storage_key IS NOT NULL AS has_recording, 1 AS delta
          FROM new_calls
        UNION ALL
        SELECT account_id, status, agent_id, campaign_id, recording_storage_key IS NOT NULL, -1 FROM old_calls
      ) AS changes
      GROUP BY 1, 2, 3, 4, 5 HAVING sum(delta) <> 0 ORDER BY 1, 2, 3, 4, 5
      ON CONFLICT (account_id, status, agent_id, campaign_id, has_recording, shard)
      DO UPDATE SET calls = c.calls + EXCLUDED.calls;
  ELSIF TG_OP = 'DELETE' THEN
    -- Taken off one existing row of each combination; only the sum means anything. An UPDATE, not an upsert: when
    -- an account is deleted its counts may already be gone, and must stay gone.
    UPDATE call_counts AS c SET calls = c.calls - gone.calls
      FROM (
        SELECT DISTINCT ON (g.account_id, g.status, g.agent_id, g.campaign_id, g.has_recording)
          g.account_id, g.status, g.agent_id, g.campaign_id, g.has_recording, g.calls, s.shard
        FROM (
          SELECT account_id, status, agent_id, campaign_id, recording_storage_key IS NOT NULL AS has_recording,
            count(*) AS calls
          FROM old_calls GROUP BY 1, 2, 3, 4, 5
        ) AS g
        JOIN call_counts AS s ON s.account_id = g.account_id AND s.status = g.status
          AND s.has_recording = g.has_recording AND s.agent_id IS NOT DISTINCT FROM g.agent_id
          AND s.campaign_id IS NOT DISTINCT FROM g.campaign_id
        ORDER BY g.account_id, g.status, g.agent_id, g.campaign_id, g.has_recording, s.shard
      ) AS gone
      WHERE c.account_id = gone.account_id AND c.status = gone.status AND c.has_recording = gone.has_recording
        AND c.agent_id IS NOT DISTINCT FROM gone.agent_id AND c.campaign_id IS NOT DISTINCT FROM gone.campaign_id
        AND c.shard = gone.shard;
  ELSIF TG_OP = 'TRUNCATE' THEN
    DELETE FROM call_counts;
  END IF;
  RETURN NULL;
END;
$$;
