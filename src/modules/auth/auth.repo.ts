import type { Db } from '../../db/client.js';
import { createRepo, type Executor } from '../../db/repo.js';
import type { OutboxFactory } from '../../events/outbox.js';
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
export function authQueries(db: Executor) {
  return {
    async insertAccountWithOwner(input: {
      accountId: string;
      accountName: string;
      userId: string;
      email: string;
      name: string | null;
      passwordHash: string;
    }) {
      await db
        .insertInto('accounts')
        .values({ id: input.accountId, name: input.accountName, rate_limit_per_minute: null })
        .execute();
      await db
        .insertInto('users')
        .values({ id: input.userId, email: input.email, name: input.name, password_hash: input.passwordHash })
        .execute();
      await db
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

    async defaultCountry(accountId: string): Promise<string> {
      const row = await db
        .selectFrom('accounts')
        .select('default_country')
        .where('id', '=', accountId)
        .executeTakeFirst();
      return row?.default_country.trim() ?? 'US';
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
          join
            .onRef('memberships.user_id', '=', 'sessions.user_id')
            .onRef('memberships.account_id', '=', 'sessions.account_id'),
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

    listSessions(userId: string, limit: number) {
      return db
        .selectFrom('sessions')
        .select(['id', 'ip', 'user_agent', 'created_at', 'last_seen_at', 'expires_at', 'revoked_at'])
        .where('user_id', '=', userId)
        .orderBy('created_at', 'desc')
        .orderBy('id')
        .limit(limit)
        .execute();
    },

    /** Revokes every live session of the user except `keepSessionId` (null revokes them all). */
    async revokeOtherSessions(userId: string, keepSessionId: string | null, now: Date): Promise<number> {
      let query = db
        .updateTable('sessions')
        .set({ revoked_at: now })
        .where('user_id', '=', userId)
        .where('revoked_at', 'is', null)
        .where('expires_at', '>', now);
      if (keepSessionId) query = query.where('id', '!=', keepSessionId);
      const result = await query.executeTakeFirst();
      return Number(result.numUpdatedRows);
    },

    /** Moves a session to another account; the caller has already checked membership. */
    switchSessionAccount(sessionId: string, userId: string, accountId: string) {
      return db
        .updateTable('sessions')
        .set({ account_id: accountId })
        .where('id', '=', sessionId)
        .where('user_id', '=', userId)
        .execute();
    },

    /** Sets the platform-admin flag of the user with this email; answers the user's previous flag, or undefined for no such user. */
    async setPlatformAdmin(
      email: string,
      isPlatformAdmin: boolean,
    ): Promise<{ email: string; wasPlatformAdmin: boolean } | undefined> {
      const user = await db
        .selectFrom('users')
        .select(['id', 'email', 'is_platform_admin'])
        .where((eb) => eb(eb.fn('lower', ['email']), '=', email.toLowerCase()))
        .forUpdate()
        .executeTakeFirst();
      if (!user) return undefined;
      if (user.is_platform_admin !== isPlatformAdmin) {
        await db.updateTable('users').set({ is_platform_admin: isPlatformAdmin }).where('id', '=', user.id).execute();
      }
      return { email: user.email, wasPlatformAdmin: user.is_platform_admin };
    },

    updatePassword(userId: string, passwordHash: string, now: Date) {
      return db
        .updateTable('users')
        .set({ password_hash: passwordHash, password_changed_at: now })
        .where('id', '=', userId)
        .execute();
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

export function createAuthRepo(db: Db, outbox: OutboxFactory) {
  return createRepo(db, outbox, authQueries);
}

export type AuthRepo = ReturnType<typeof createAuthRepo>;
