import type { Executor } from '../db/repo.js';
import { eventColumns, eventFromColumns, type DomainEvent } from './domain-events.js';

/** The domain_events table. Written only through the outbox; read by subscribers' jobs and retention. */
export function domainEventQueries(db: Executor) {
  return {
    insert(event: DomainEvent) {
      return db.insertInto('domain_events').values(eventColumns(event)).execute();
    },

    /** A subscriber's job carries only the event id; the event is read back here, whatever its account. */
    async find(id: string): Promise<DomainEvent | undefined> {
      const row = await db.selectFrom('domain_events').selectAll().where('id', '=', id).executeTakeFirst();
      return row && eventFromColumns(row);
    },

    /** Retention, across accounts. */
    async deleteBefore(before: Date): Promise<number> {
      const result = await db.deleteFrom('domain_events').where('occurred_at', '<', before).executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
