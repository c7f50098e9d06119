import type { ColumnType, Generated } from 'kysely';
import type { MemberRole } from '../../lib/permissions.js';

type CreatedAt = ColumnType<Date, Date | string | undefined, never>;

export interface AccountsTable {
  id: string;
  name: string;
  timezone: Generated<string>;
  default_country: Generated<string>;
  rate_limit_per_minute: number | null;
  status: Generated<'active' | 'suspended'>;
  created_at: CreatedAt;
}

export interface UsersTable {
  id: string;
  email: string;
  name: string | null;
  password_hash: string;
  is_platform_admin: Generated<boolean>;
  password_changed_at: Generated<Date>;
  created_at: CreatedAt;
}

export type { MemberRole };

export interface MembershipsTable {
  account_id: string;
  user_id: string;
  role: MemberRole;
  created_at: CreatedAt;
}

export interface SessionsTable {
  id: string;
  token_hash: string;
  user_id: string;
  account_id: string;
  ip: string | null;
  user_agent: string | null;
  created_at: CreatedAt;
  last_seen_at: Generated<Date>;
  expires_at: Date;
  revoked_at: Date | null;
}

export interface AuthTables {
  accounts: AccountsTable;
  users: UsersTable;
  memberships: MembershipsTable;
  sessions: SessionsTable;
}
