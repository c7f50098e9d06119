/**
 * The Kysely schema: each module declares its own tables in <module>.tables.ts,
 * and this interface joins them. Column types mirror the SQL migrations.
 */
import type { AuthTables } from '../modules/auth/auth.tables.js';
import type { ApiKeysTables } from '../modules/api-keys/api-keys.tables.js';

export interface Database extends AuthTables, ApiKeysTables {}
