import type { Db } from '../../db/client.js';
import type { MemberRole } from './auth.tables.js';

export interface SessionAuthRow {
  session_id: string;
  user_id: string;
  account_id: string;
  role: MemberRole;
  is_platform_admin: boolean;
  rate_limit_per_minute: number | null;
  account_status: 'active' | 'suspended';
  last_seen_at: Date;
}

/**
 * Users and sessions are global (a user may belong to several accounts); account-scoped reads
 * join through memberships so that a session only ever sees an account it is a member of.
 */
export function createAuthRepo(db: Db) {
  return {
    async insertAccountWithOwner(
      executor: Db,
      input: { accountId: string; accountName: string; userId: string; email: string; name: string | null; passwordHash: string },
    ) {
      await executor.insertInto('accounts').values({ id: input.accountId, name: input.accountName, rate_limit_per_minute: null }).execute();
      await executor
        .insertInto('users')
        .values({ id: input.userId, email: input.email, name: input.name, password_hash: input.passwordHash })
        .execute();
      await executor
        .insertInto('memberships')
        .values({ account_id: input.accountId, user_id: input.userId, role: 'owner' })
        .execute();
    },

    findUserByEmail(email: string) {
      return db
        .selectFrom('users')
        .selectAll()
        .where((eb) => eb(eb.fn('lower', ['email']), '=', email.toLowerCase()))
        .executeTakeFirst();
    },

    findAccount(accountId: string) {
      return db.selectFrom('accounts').selectAll().where('id', '=', accountId).executeTakeFirst();
    },

    findUserById(userId: string) {
      return db.selectFrom('users').selectAll().where('id', '=', userId).executeTakeFirst();
    },

    /** The user's memberships, oldest first: the first is the account a fresh login lands in. */
    listMemberships(userId: string) {
      return db
        .selectFrom('memberships')
        .innerJoin('accounts', 'accounts.id', 'memberships.account_id')
        .select(['accounts.id as account_id', 'accounts.name as account_name', 'memberships.role', 'accounts.status'])
        .where('memberships.user_id', '=', userId)
        .orderBy('memberships.created_at')
        .orderBy('accounts.id')
        .execute();
    },

    insertSession(input: {
      id: string;
      tokenHash: string;
      userId: string;
      accountId: string;
      ip: string | null;
      userAgent: string | null;
      expiresAt: Date;
    }) {
      return db
        .insertInto('sessions')
        .values({
          id: input.id,
          token_hash: input.tokenHash,
          user_id: input.userId,
          account_id: input.accountId,
          ip: input.ip,
          user_agent: input.userAgent,
          expires_at: input.expiresAt,
          revoked_at: null,
        })
        .execute();
    },

    /** A live session with the caller's role in its current account, or undefined. */
    findLiveSession(tokenHash: string, now: Date): Promise<SessionAuthRow | undefined> {
      return db
        .selectFrom('sessions')
        .innerJoin('memberships', (join) =>
          join.onRef('memberships.user_id', '=', 'sessions.user_id').onRef('memberships.account_id', '=', 'sessions.account_id'),
        )
        .innerJoin('users', 'users.id', 'sessions.user_id')
        .innerJoin('accounts', 'accounts.id', 'sessions.account_id')
        .select([
          'sessions.id as session_id',
          'sessions.user_id',
          'sessions.account_id',
          'memberships.role',
          'users.is_platform_admin',
          'accounts.rate_limit_per_minute',
          'accounts.status as account_status',
          'sessions.last_seen_at',
        ])
        .where('sessions.token_hash', '=', tokenHash)
        .where('sessions.revoked_at', 'is', null)
        .where('sessions.expires_at', '>', now)
        .executeTakeFirst();
    },

    touchSession(sessionId: string, now: Date) {
      return db.updateTable('sessions').set({ last_seen_at: now }).where('id', '=', sessionId).execute();
    },

    /** Housekeeping across all accounts: sessions that expired or were revoked over a day ago. */
    async deleteDeadSessions(before: Date): Promise<number> {
      const result = await db
        .deleteFrom('sessions')
        .where((eb) => eb.or([eb('expires_at', '<', before), eb('revoked_at', '<', before)]))
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },

    revokeSession(sessionId: string, userId: string, now: Date) {
      return db
        .updateTable('sessions')
        .set({ revoked_at: now })
        .where('id', '=', sessionId)
        .where('user_id', '=', userId)
        .where('revoked_at', 'is', null)
        .execute();
    },
  };
}

export type AuthRepo = ReturnType<typeof createAuthRepo>;
