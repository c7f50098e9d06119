import type { ColumnType, JSONColumnType } from 'kysely';

export interface AuditEventsTable {
  /** The domain event's id: a redelivered event finds its row already there. */
  id: string;
  account_id: string;
  type: string;
  subject_type: string;
  subject_id: string;
  actor_user_id: string | null;
  actor_api_key_id: string | null;
  data: JSONColumnType<Record<string, unknown>, string, never>;
  occurred_at: ColumnType<Date, Date, never>;
  recorded_at: ColumnType<Date, Date | undefined, never>;
}

export interface AuditTables {
  audit_events: AuditEventsTable;
}
