-- Webhook deliveries are claimed endpoint by endpoint: every endpoint with deliveries due gets its share of a batch,
-- so one endpoint's backlog (or a slow receiver) does not hold back the others. The due index leads with the endpoint.
-- Its predicate names next_attempt_at (always set on a pending delivery) so that only queries on the due time can use
-- it: the order checks, which look up an endpoint's pending deliveries by subject, keep their own index.
DROP INDEX webhook_deliveries_due_idx;
CREATE INDEX webhook_deliveries_endpoint_due_idx ON webhook_deliveries (endpoint_id, next_attempt_at)
  WHERE state = 'pending' AND next_attempt_at IS NOT NULL;

-- The endpoints a batch is sending to: a dispatcher's lane for new work claims only endpoints that no batch is sending
-- to, so an endpoint with nothing under way is served at once even while every other lane waits on a slow receiver.
ALTER TABLE webhook_dispatch_leases ADD COLUMN endpoint_ids uuid[] NOT NULL DEFAULT '{}';
