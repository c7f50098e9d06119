-- Webhook deliveries: one row write per attempt. The attempts move into their delivery's row, and a dispatcher leases
-- a whole batch with one row instead of writing a lease into each delivery it claims.

-- Every attempt of a delivery, oldest first, as JSON Lines: one JSON object per line, {number, startedAt, finishedAt,
-- statusCode, latencyMs, error, responseBody}, appended as each attempt ends and parsed only when the log is read
-- (text is appended without parsing what is there). An attempt cut off with its process has finishedAt null.
ALTER TABLE webhook_deliveries ADD COLUMN attempts text NOT NULL DEFAULT '';
UPDATE webhook_deliveries d
SET attempts = a.lines
FROM (
  SELECT delivery_id,
         string_agg(json_build_object(
           'number', number, 'startedAt', started_at, 'finishedAt', finished_at, 'statusCode', status_code,
           'latencyMs', latency_ms, 'error', error, 'responseBody', response_excerpt)::text || E'\n', '' ORDER BY number)
           AS lines
  FROM webhook_attempts
  GROUP BY delivery_id
) a
WHERE a.delivery_id = d.id;
-- An attempt under way when the service stopped for this upgrade: recorded as cut off; the delivery is due again.
UPDATE webhook_deliveries d
SET attempts = attempts || json_build_object(
      'number', attempt_count, 'startedAt', attempt_started_at, 'finishedAt', null, 'statusCode', null,
      'latencyMs', null, 'error', null, 'responseBody', null)::text || E'\n',
    next_attempt_at = attempt_started_at
WHERE attempt_started_at IS NOT NULL AND state = 'pending'
  AND NOT EXISTS (SELECT 1 FROM webhook_attempts a WHERE a.delivery_id = d.id AND a.number = d.attempt_count);
DROP TABLE webhook_attempts;

-- True when, as the delivery was written, an earlier one of the same subject to the same endpoint had not had its
-- first attempt yet: only such a delivery needs to check, when claimed, that it goes out after that one.
ALTER TABLE webhook_deliveries ADD COLUMN follows_unsent boolean NOT NULL DEFAULT false;
UPDATE webhook_deliveries SET follows_unsent = true WHERE state = 'pending' AND subject_id IS NOT NULL;

-- A batch of deliveries one dispatcher is attempting, until leased_until (renewed while it works). Claims are taken
-- one at a time (an advisory lock) and skip every leased delivery. A lease that runs out belonged to a process that
-- died: its attempts are recorded as cut off, and the deliveries are attempted again.
CREATE TABLE webhook_dispatch_leases (
  id uuid PRIMARY KEY,
  started_at timestamptz NOT NULL,
  leased_until timestamptz NOT NULL,
  delivery_ids uuid[] NOT NULL
);
ALTER TABLE webhook_deliveries DROP COLUMN leased_until;
ALTER TABLE webhook_deliveries DROP COLUMN attempt_started_at;

-- Retention deletes by endpoint (the endpoint index has created_at); one index fewer to write with every attempt.
DROP INDEX webhook_deliveries_created_idx;
