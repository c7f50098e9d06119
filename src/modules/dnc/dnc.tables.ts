import type { ColumnType } from 'kysely';

export interface DncEntriesTable {
  account_id: string;
  phone_e164: string;
  reason: string | null;
  created_at: ColumnType<Date, Date | string | undefined, never>;
}

export interface DncTables {
  dnc_entries: DncEntriesTable;
}
