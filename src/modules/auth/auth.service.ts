import type { Db } from '../../db/client.js';
import type { Config } from '../../config.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { randomBase62, sha256Hex } from '../../lib/crypto.js';
import { decoyPasswordHash, hashPassword, verifyPassword } from '../../lib/passwords.js';
import { AppError } from '../../http/errors.js';
import type { Auth } from '../../http/auth.js';
import type { AuthRepo } from './auth.repo.js';

export interface ClientInfo {
  ip: string | null;
  userAgent: string | null;
}

export interface RegisterInput {
  email: string;
  password: string;
  name?: string;
  accountName?: string;
}

// Only touch last_seen_at once a minute per session: a write per request would dominate cheap reads.
const TOUCH_EVERY_MS = 60_000;
// 32 base62 characters is about 190 random bits, well above the 128 the issue asks for.
const SESSION_TOKEN_LENGTH = 32;

export function createAuthService(deps: { db: Db; repo: AuthRepo; clock: Clock; config: Config }) {
  const { db, repo, clock, config } = deps;

  async function startSession(userId: string, accountId: string, client: ClientInfo) {
    const token = randomBase62(SESSION_TOKEN_LENGTH);
    const now = clock.now();
    const expiresAt = new Date(now.getTime() + config.sessionTtlHours * 3_600_000);
    await repo.insertSession({ id: newId(), tokenHash: sha256Hex(token), userId, accountId, ...client, expiresAt });
    return { token, expiresAt };
  }

  return {
    /** Creates a user, a new account and the owner membership, and signs the user in. */
    async register(input: RegisterInput, client: ClientInfo) {
      const email = input.email.trim();
      if (await repo.findUserByEmail(email)) {
        throw new AppError('conflict', 'An account with this email already exists; sign in instead');
      }
      const userId = newId();
      const accountId = newId();
      const passwordHash = await hashPassword(input.password);
      await db.transaction().execute((trx) =>
        repo.insertAccountWithOwner(trx, {
          accountId,
          accountName: input.accountName?.trim() || `${input.name?.trim() || email}'s account`,
          userId,
          email,
          name: input.name?.trim() || null,
          passwordHash,
        }),
      );
      const session = await startSession(userId, accountId, client);
      return { userId, accountId, session };
    },

    async login(input: { email: string; password: string }, client: ClientInfo) {
      const user = await repo.findUserByEmail(input.email.trim());
      const ok = await verifyPassword(user?.password_hash ?? (await decoyPasswordHash()), input.password);
      if (!user || !ok) throw new AppError('unauthorized', 'Email or password is incorrect');
      const [first] = await repo.listMemberships(user.id);
      if (!first) throw new AppError('forbidden', 'This user is not a member of any account');
      const session = await startSession(user.id, first.account_id, client);
      return { userId: user.id, accountId: first.account_id, session };
    },

    async logout(auth: Auth) {
      if (auth.sessionId && auth.userId) await repo.revokeSession(auth.sessionId, auth.userId, clock.now());
    },

    /** Resolves a vsid cookie value to the caller, or null if it is unknown, expired or revoked. */
    async authenticateSession(token: string): Promise<Auth | null> {
      if (token.length !== SESSION_TOKEN_LENGTH) return null;
      const now = clock.now();
      const row = await repo.findLiveSession(sha256Hex(token), now);
      if (!row) return null;
      if (row.account_status === 'suspended' && !row.is_platform_admin) {
        throw new AppError('forbidden', 'This account is suspended');
      }
      if (now.getTime() - row.last_seen_at.getTime() > TOUCH_EVERY_MS) await repo.touchSession(row.session_id, now);
      return {
        accountId: row.account_id,
        userId: row.user_id,
        sessionId: row.session_id,
        role: row.role,
        isPlatformAdmin: row.is_platform_admin,
        scheme: 'session',
        rateLimitPerMinute: row.rate_limit_per_minute,
      };
    },

    /** Deletes sessions that ended more than a day ago; run periodically by the worker. */
    purgeDeadSessions() {
      return repo.deleteDeadSessions(new Date(clock.now().getTime() - 86_400_000));
    },

    async me(auth: Auth) {
      const memberships = auth.userId ? await repo.listMemberships(auth.userId) : [];
      const user = auth.userId ? await repo.findUserById(auth.userId) : undefined;
      const account = await repo.findAccount(auth.accountId);
      return {
        user: user ? { id: user.id, email: user.email, name: user.name, isPlatformAdmin: user.is_platform_admin } : null,
        account: { id: auth.accountId, name: account?.name ?? '', role: auth.role },
        accounts: memberships.map((m) => ({ id: m.account_id, name: m.account_name, role: m.role })),
        scheme: auth.scheme,
        apiKeyId: auth.apiKeyId ?? null,
      };
    },
  };
}

export type AuthService = ReturnType<typeof createAuthService>;
