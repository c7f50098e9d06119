-- Webhook deliveries are claimed endpoint by endpoint: every endpoint with deliveries due gets its share of a batch,
-- so one endpoint's backlog (or a slow receiver) does not hold back the others. The due index leads with the endpoint.
-- Its predicate names next_attempt_at (always set on a pending delivery) so that only queries on the due time can use
-- it: the order checks, which look up an endpoint's pending deliveries by subject, keep their own index.
DROP INDEX webhook_deliveries_due_idx;
CREATE INDEX webhook_deliveries_endpoint_due_idx ON webhook_deliveries (endpoint_id, next_attempt_at)
  WHERE state = 'pending' AND next_attempt_at IS NOT NULL;

