import type { ColumnType } from 'kysely';

export interface ApiKeysTable {
  id: string;
  account_id: string;
  created_by_user_id: string | null;
  name: string;
  display_prefix: string;
  key_hash: string;
  created_at: ColumnType<Date, Date | string | undefined, never>;
  last_used_at: Date | null;
}

export interface ApiKeysTables {
  api_keys: ApiKeysTable;
}
