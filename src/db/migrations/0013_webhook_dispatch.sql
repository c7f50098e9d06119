-- Webhook deliveries are claimed by a dispatcher in batches instead of one job each.

-- A claimed delivery is leased to one dispatcher until leased_until; an attempt lost with its process is made again
-- after that. attempt_started_at is when the attempt under way started (null when none is): an attempt row is written
-- once the attempt ends, and one claimed again while this is still set was cut off, which is then recorded.
-- Neither column is indexed, so a claim rewrites the row in place without touching the indexes (room is left on each
-- page for that).
ALTER TABLE webhook_deliveries ADD COLUMN leased_until timestamptz;
ALTER TABLE webhook_deliveries ADD COLUMN attempt_started_at timestamptz;
ALTER TABLE webhook_deliveries SET (fillfactor = 70);

-- Deliveries are written in the transaction of their event, once: the uniqueness no longer needs an index that every
-- change of a delivery would have to maintain.
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_endpoint_id_event_id_key;
