import type { Db } from '../db/client.js';
import type { Outbox, OutboxFactory } from '../db/repo.js';
import type { Clock } from '../lib/clock.js';
import { newId } from '../lib/ids.js';
import type { JobQueue } from '../jobs/queue.js';
import type { SubscriptionRoute, TransactionSubscriber } from '../jobs/registry.js';
import type { Services } from '../services.js';
import type { DomainEvent } from './domain-events.js';
import { domainEventQueries } from './domain-events.repo.js';

/** Delivered or not, a domain event is kept this long; subscribers that need history keep their own (the audit log). */
export const DOMAIN_EVENT_RETENTION_DAYS = 30;

/**
 * The outbox of a transaction: `send` enqueues a job and `emit` records a domain event, enqueues one job per
 * subscriber that wants it and runs the subscribers that act in the transaction itself, all on the transaction, so
 * they exist exactly when the change commits.
 */
export function createOutboxFactory(deps: {
  jobs: JobQueue;
  subscriptions: readonly SubscriptionRoute[];
  clock: Clock;
  /** Subscribers that write in the event's transaction, with the services they run on (built after the outbox). */
  inTransaction?: { subscribers: readonly TransactionSubscriber[]; services: () => Services };
}): OutboxFactory {
  const { jobs, subscriptions, clock, inTransaction } = deps;
  return (trx): Outbox => ({
    send: (name, data, options) => jobs.send(name, data, { ...options, trx }),
    async emit(input) {
      const event: DomainEvent = { ...input, data: input.data ?? {}, id: newId(), occurredAt: clock.now() };
      await domainEventQueries(trx).insert(event);
      // One statement for all of the event's subscribers: an event's cost grows with its statements, not its readers.
      const queues = subscriptions
        .filter(({ events }) => events === 'all' || events.includes(event.type))
        .map(({ queue }) => queue);
      await jobs.enqueueAll(queues, { eventId: event.id }, { trx });
      for (const subscriber of inTransaction?.subscribers ?? []) {
        if (subscriber.events.includes(event.type)) await subscriber.run(event, inTransaction!.services(), { trx });
      }
      return event;
    },
  });
}

export function createDomainEventsService(deps: { db: Db; clock: Clock }) {
  const queries = domainEventQueries(deps.db);
  return {
    find: (id: string) => queries.find(id),
    /** Deletes events older than the retention period; run daily by the worker. */
    prune() {
      return queries.deleteBefore(new Date(deps.clock.now().getTime() - DOMAIN_EVENT_RETENTION_DAYS * 86_400_000));
    },
  };
}

export type DomainEventsService = ReturnType<typeof createDomainEventsService>;
