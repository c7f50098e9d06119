import type { Db } from '../db/client.js';
import type { Clock } from '../lib/clock.js';
import { domainEventQueries } from './domain-events.repo.js';

/** Delivered or not, a domain event is kept this long; subscribers that need history keep their own (the audit log). */
export const DOMAIN_EVENT_RETENTION_DAYS = 30;

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
