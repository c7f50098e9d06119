-- Webhook endpoints whose attempts time out go to a penalty lane: claimed apart, one delivery per endpoint per batch,
-- and sent on a few places of each worker, so a host that never answers does not hold the places of the others.
-- timed_out_at is when the endpoint's last attempt timed out; an attempt that ends otherwise clears it.
ALTER TABLE webhook_endpoints ADD COLUMN timed_out_at timestamptz;
