import type { Selectable } from 'kysely';
import type { Auth } from '../../lib/caller.js';
import { envelope } from '../../db/pagination.js';
import { actorFromColumns, type DomainEvent } from '../../events/domain-events.js';
import type { AuditRepo } from './audit.repo.js';
import type { AuditEventsTable } from './audit.tables.js';
import type { ListAuditEventsQuery } from './audit.schemas.js';

const toAuditEvent = (row: Selectable<AuditEventsTable>) => ({
  id: row.id,
  type: row.type,
  subject: { type: row.subject_type, id: row.subject_id },
  actor: actorFromColumns(row),
  data: row.data,
  occurredAt: row.occurred_at.toISOString(),
});

/** The account's audit log: every domain event, kept for good, newest first. */
export function createAuditService(deps: { repo: AuditRepo }) {
  const { repo } = deps;
  return {
    /** The subscriber's handler: idempotent on the event id. */
    record(event: DomainEvent) {
      return repo.record(event.accountId, event);
    },

    async list(auth: Auth, query: ListAuditEventsQuery) {
      const { limit, offset, ...filters } = query;
      const { items, total } = await repo.list(auth.accountId, filters, { limit, offset });
      return envelope('auditEvents', items.map(toAuditEvent), total, query);
    },
  };
}

export type AuditService = ReturnType<typeof createAuditService>;
