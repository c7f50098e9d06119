import type { ColumnType, Generated } from 'kysely';

type CreatedAt = ColumnType<Date, Date | string | undefined, never>;

/** Imported columns without a field of their own, by their header in the file. */
export type ContactAttributes = Record<string, string>;

export interface ContactsTable {
  id: string;
  account_id: string;
  first_name: string | null;
  last_name: string | null;
  phone_e164: string;
  email: string | null;
  company: string | null;
  timezone: string | null;
  attributes: ColumnType<ContactAttributes, string | undefined, string>;
  dnc: Generated<boolean>;
  created_at: CreatedAt;
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

export const DUPLICATE_POLICIES = ['skip', 'update'] as const;
export type DuplicatePolicy = (typeof DUPLICATE_POLICIES)[number];

export interface ContactListsTable {
  id: string;
  account_id: string;
  name: string;
  default_country: string;
  duplicate_policy: DuplicatePolicy;
  row_count: number;
  imported_count: number;
  updated_count: number;
  duplicate_count: number;
  invalid_count: number;
  dnc_count: number;
  created_at: CreatedAt;
  import_state: ColumnType<ImportState, ImportState | undefined, ImportState>;
  import_rows_processed: Generated<number>;
  /** bigint: read as a string by the driver, converted where it is read. */
  import_bytes_read: ColumnType<string | number | bigint, number | undefined, number>;
  import_bytes_total: ColumnType<string | number | bigint, number | undefined, number>;
  import_fraction: Generated<number>;
  import_errors: ColumnType<ImportRowError[], string | undefined, string>;
  import_failure: ColumnType<ImportFailure | null, string | null | undefined, string | null>;
  import_heartbeat_at: ColumnType<Date, Date | string | undefined, Date | string>;
  import_finished_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
}

export const IMPORT_STATES = ['processing', 'completed', 'failed'] as const;
export type ImportState = (typeof IMPORT_STATES)[number];

/** A row an import could not take. */
export interface ImportRowError {
  /** Row of the file as a spreadsheet numbers it: the header is row 1. */
  row: number;
  phone: string;
  reason: string;
  message: string;
}

/** Why an import stopped, as the API's error body says it. */
export interface ImportFailure {
  code: string;
  message: string;
  details?: Record<string, unknown>;
}

export interface ContactListMembersTable {
  list_id: string;
  contact_id: string;
  account_id: string;
}

export interface ContactsTables {
  contacts: ContactsTable;
  contact_lists: ContactListsTable;
  contact_list_members: ContactListMembersTable;
}
