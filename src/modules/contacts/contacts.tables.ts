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
