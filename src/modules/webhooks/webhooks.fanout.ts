/**
 * The outbox side of webhooks: each domain event an endpoint subscribes to becomes one delivery per endpoint, written
 * inside the event's own transaction, so the delivery exists exactly when the event does and nothing is lost to a
 * crash. Built from configuration alone, before any service: the event carries all its body needs.
 */
import type { Clock } from '../../lib/clock.js';
import { workAdded } from '../../lib/wake.js';
import type { TxHandle } from '../../db/repo.js';
import type { DomainEvent } from '../../events/domain-events.js';
import type { TransactionSubscriber } from '../../events/outbox.js';
import { DISPATCH_LOOP } from './webhooks.dispatcher.js';
import { isWebhookEvent, newDelivery, payloadOf } from './webhooks.payloads.js';
import { webhookQueries } from './webhooks.repo.js';
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from './webhooks.tables.js';

export const WEBHOOK_FANOUT = 'webhooks.fanout';

/**
 * One delivery per enabled endpoint of the account that receives the event's type; deliveries of one call are thereby
 * numbered in the order its events happened. The events of one transaction take two statements per account: its
 * endpoints read once, and every delivery written at once. A commit that adds some wakes the dispatchers.
 */
export function createWebhookFanout(deps: { clock: Clock }): TransactionSubscriber {
  async function fanOut(events: readonly DomainEvent[], tx: TxHandle) {
    const byAccount = new Map<string, DomainEvent<WebhookEventType>[]>();
    for (const event of events) {
      if (!isWebhookEvent(event)) continue;
      const theirs = byAccount.get(event.accountId);
      if (theirs) theirs.push(event);
      else byAccount.set(event.accountId, [event]);
    }
    const queries = webhookQueries(tx.trx);
    let deliveries = 0;
    for (const [accountId, theirs] of byAccount) {
      const types = [...new Set(theirs.map((event) => event.type))];
      const endpoints = await queries.subscribedEndpoints(accountId, types);
      if (endpoints.length === 0) continue;
      const now = deps.clock.now();
      const rows = theirs.flatMap((event) => {
        const receiving = endpoints.filter((endpoint) => endpoint.events.includes(event.type));
        if (receiving.length === 0) return [];
        const content = {
          eventId: event.id,
          type: event.type,
          subjectId: event.subject.id,
          occurredAt: event.occurredAt,
          data: payloadOf(event),
        };
        return receiving.map((endpoint) => newDelivery(endpoint.id, content, now));
      });
      deliveries += await queries.insertDeliveries(accountId, rows);
    }
    if (deliveries > 0) workAdded(DISPATCH_LOOP, tx.trx);
    return { deliveries };
  }

  return {
    name: WEBHOOK_FANOUT,
    events: WEBHOOK_EVENT_TYPES,
    run: (event, tx) => fanOut([event], tx),
    runAll: fanOut,
  };
}
