import { createRepo, type Executor, type OutboxFactory } from '../../db/repo.js';
import type { Db } from '../../db/client.js';
import { paginate, type Page } from '../../http/pagination.js';
import type { DomainEvent } from '../../events/domain-events.js';

export interface AuditFilters {
  type?: string;
  subjectId?: string;
}

export function auditQueries(db: Executor) {
  return {
    /** Records the event once: a second delivery of the same event id changes nothing. */
    async record(accountId: string, event: DomainEvent): Promise<boolean> {
      const result = await db
        .insertInto('audit_events')
        .values({
          id: event.id,
          account_id: accountId,
          type: event.type,
          subject_type: event.subject.type,
          subject_id: event.subject.id,
          actor_user_id: event.actor?.userId ?? null,
          actor_api_key_id: event.actor?.apiKeyId ?? null,
          data: JSON.stringify(event.data),
          occurred_at: event.occurredAt,
        })
        .onConflict((oc) => oc.column('id').doNothing())
        .executeTakeFirst();
      return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0;
    },

    list(accountId: string, filters: AuditFilters, page: Page) {
      let matching = db.selectFrom('audit_events').where('account_id', '=', accountId);
      if (filters.type !== undefined) matching = matching.where('type', '=', filters.type);
      if (filters.subjectId !== undefined) matching = matching.where('subject_id', '=', filters.subjectId);
      return paginate(matching, page, (q) => q.selectAll().orderBy('occurred_at', 'desc').orderBy('id', 'desc'));
    },
  };
}

export function createAuditRepo(db: Db, outbox: OutboxFactory) {
  return createRepo(db, outbox, auditQueries);
}

export type AuditRepo = ReturnType<typeof createAuditRepo>;
