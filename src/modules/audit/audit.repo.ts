import { createRepo, type Executor } from '../../db/repo.js';
import type { OutboxFactory } from '../../events/outbox.js';
import type { Db } from '../../db/client.js';
import { paginate, type Page } from '../../db/pagination.js';
import { eventColumns, type DomainEvent, type DomainEventType } from '../../events/domain-events.js';

export interface AuditFilters {
  type?: DomainEventType;
  subjectId?: string;
}

export function auditQueries(db: Executor) {
  return {
    /** Records the event once: a second delivery of the same event id changes nothing. */
    async record(accountId: string, event: DomainEvent): Promise<boolean> {
      const result = await db
        .insertInto('audit_events')
        .values({ ...eventColumns(event), account_id: accountId })
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
