import type { ColumnType } from 'kysely';
import type { DomainEventsTable } from '../../events/domain-events.js';

/** A copy of each domain event, keyed by the event's id: a redelivered event finds its row already there. */
export interface AuditEventsTable extends DomainEventsTable {
  recorded_at: ColumnType<Date, Date | undefined, never>;
}

export interface AuditTables {
  audit_events: AuditEventsTable;
}
