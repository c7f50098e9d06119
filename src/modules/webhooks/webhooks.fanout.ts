/**
 * The outbox side of webhooks: each domain event an endpoint subscribes to becomes one delivery per endpoint, written
 * inside the event's own transaction, so the delivery exists exactly when the event does and nothing is lost to a
 * crash. Built from configuration alone, before any service: the event carries all its body needs.
 */
import type { Clock } from '../../lib/clock.js';
import { workAdded } from '../../lib/wake.js';
import type { TransactionSubscriber } from '../../events/outbox.js';
import { DISPATCH_LOOP } from './webhooks.dispatcher.js';
import { isWebhookEvent, newDelivery, payloadOf } from './webhooks.payloads.js';
import { webhookQueries } from './webhooks.repo.js';
import { WEBHOOK_EVENT_TYPES } from './webhooks.tables.js';

export const WEBHOOK_FANOUT = 'webhooks.fanout';

/**
 * One delivery per enabled endpoint of the account that receives the event's type; deliveries of one call are thereby
 * numbered in the order its events happened. A commit that adds some wakes the dispatchers.
 */
export function createWebhookFanout(deps: { clock: Clock }): TransactionSubscriber {
  return {
    name: WEBHOOK_FANOUT,
    events: WEBHOOK_EVENT_TYPES,
    async run(event, tx) {
      if (!isWebhookEvent(event)) return { deliveries: 0 };
      const queries = webhookQueries(tx.trx);
      const endpoints = await queries.subscribedEndpoints(event.accountId, event.type);
      if (endpoints.length === 0) return { deliveries: 0 };
      const content = {
        eventId: event.id,
        type: event.type,
        subjectId: event.subject.id,
        occurredAt: event.occurredAt,
        data: payloadOf(event),
      };
      const now = deps.clock.now();
      const created = await queries.insertDeliveries(
        event.accountId,
        endpoints.map((endpoint) => newDelivery(endpoint.id, content, now)),
      );
      workAdded(DISPATCH_LOOP, tx.trx);
      return { deliveries: created };
    },
  };
}
