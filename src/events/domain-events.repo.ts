import { sql } from 'kysely';
import type { Executor } from '../db/repo.js';
import { eventColumns, eventFromColumns, type DomainEvent } from './domain-events.js';

/** The domain_events table. Written only through the outbox; read by subscribers' jobs and retention. */
export function domainEventQueries(db: Executor) {
  return {
    insert(event: DomainEvent) {
      return db.insertInto('domain_events').values(eventColumns(event)).execute();
    },

    /** Several events in one statement, in the order given (one array per column). */
    async insertAll(events: readonly DomainEvent[]) {
      if (events.length === 0) return;
      const rows = events.map(eventColumns);
      const column = <T>(pick: (row: (typeof rows)[number]) => T) => rows.map(pick);
      await sql`
        INSERT INTO domain_events
          (id, account_id, type, subject_type, subject_id, actor_user_id, actor_api_key_id, data, occurred_at)
        SELECT id, account_id, type, subject_type, subject_id, actor_user_id, actor_api_key_id, data::jsonb, occurred_at
        FROM unnest(
          ${column((r) => r.id)}::uuid[], ${column((r) => r.account_id)}::uuid[], ${column((r) => r.type)}::text[],
          ${column((r) => r.subject_type)}::text[], ${column((r) => r.subject_id)}::text[],
          ${column((r) => r.actor_user_id)}::uuid[], ${column((r) => r.actor_api_key_id)}::uuid[],
          ${column((r) => r.data)}::text[], ${column((r) => r.occurred_at.toISOString())}::timestamptz[]
        ) AS e(id, account_id, type, subject_type, subject_id, actor_user_id, actor_api_key_id, data, occurred_at)
      `.execute(db);
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
