import type { Insertable, Selectable } from 'kysely';
import type { Executor } from '../db/repo.js';
import type { DomainEvent, DomainEventsTable } from './domain-events.js';

const toEvent = (row: Selectable<DomainEventsTable>): DomainEvent => ({
  id: row.id,
  type: row.type,
  accountId: row.account_id,
  subject: { type: row.subject_type, id: row.subject_id },
  actor: row.actor_user_id || row.actor_api_key_id ? { userId: row.actor_user_id, apiKeyId: row.actor_api_key_id } : null,
  data: row.data,
  occurredAt: row.occurred_at,
});

/** The domain_events table. Written only through the outbox; read by subscribers' jobs and retention. */
export function domainEventQueries(db: Executor) {
  return {
    insert(event: DomainEvent) {
      const row: Insertable<DomainEventsTable> = {
        id: event.id,
        account_id: event.accountId,
        type: event.type,
        subject_type: event.subject.type,
        subject_id: event.subject.id,
        actor_user_id: event.actor?.userId ?? null,
        actor_api_key_id: event.actor?.apiKeyId ?? null,
        data: JSON.stringify(event.data),
        occurred_at: event.occurredAt,
      };
      return db.insertInto('domain_events').values(row).execute();
    },

    /** A subscriber's job carries only the event id; the event is read back here, whatever its account. */
    async find(id: string): Promise<DomainEvent | undefined> {
      const row = await db.selectFrom('domain_events').selectAll().where('id', '=', id).executeTakeFirst();
      return row && toEvent(row);
    },

    /** Retention, across accounts. */
    async deleteBefore(before: Date): Promise<number> {
      const result = await db.deleteFrom('domain_events').where('occurred_at', '<', before).executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
