import type { Config } from '../../config.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { randomBase62, sha256Hex } from '../../lib/crypto.js';
import { decoyPasswordHash, hashPassword, verifyPassword } from '../../lib/passwords.js';
import { AppError, invalidField, notFound } from '../../lib/errors.js';
import { requireUser, type Auth } from '../../lib/caller.js';
import type { CounterStore } from '../../lib/counter-store.js';
import type { AuthRepo } from './auth.repo.js';
import type { LoginInput, RegisterInput } from './auth.schemas.js';

export interface ClientInfo {
  ip: string | null;
  userAgent: string | null;
}

// Failed logins are counted per email and per client IP over this window.
const LOGIN_WINDOW_MS = 15 * 60_000;
// One IP may fail for several users (an office behind NAT), so it gets a larger budget than one email.
const IP_FAILURE_FACTOR = 5;

// Only touch last_seen_at once a minute per session: a write per request would dominate cheap reads.
const TOUCH_EVERY_MS = 60_000;
// 32 base62 characters is about 190 random bits, well above the 128 a session token needs.
const SESSION_TOKEN_LENGTH = 32;

export function createAuthService(deps: { repo: AuthRepo; clock: Clock; config: Config; counters: CounterStore }) {
  const { repo, clock, config, counters } = deps;

  /** A failure budget: a counter key and how many failures it allows per window. */
  type Budget = { key: string; limit: number };
  const emailBudget = (email: string): Budget => ({
    key: `login-fail:email:${email.trim().toLowerCase()}`,
    limit: config.loginMaxFailures,
  });
  const ipBudget = (ip: string | null): Budget => ({
    key: `login-fail:ip:${ip ?? 'unknown'}`,
    limit: config.loginMaxFailures * IP_FAILURE_FACTOR,
  });

  /**
   * Counts a password check before it runs, so each counter is failures plus checks in flight and parallel guesses
   * cannot all pass a check made before any of them failed. Past a budget the attempt is refused with 429 and
   * given back: only checks that ran are counted.
   */
  async function spendPasswordAttempt(budgets: Budget[], refusal: string) {
    const hits = await Promise.all(budgets.map((budget) => counters.hit(budget.key, LOGIN_WINDOW_MS)));
    const over = hits.filter((hit, i) => hit.count > budgets[i]!.limit);
    if (over.length === 0) return;
    await Promise.all(budgets.map((budget) => counters.unhit(budget.key)));
    const retryAfterSec = Math.max(1, Math.ceil(Math.max(...over.map((hit) => hit.resetMs)) / 1000));
    throw new AppError(
      'rate_limited',
      `${refusal}; wait ${retryAfterSec}s`,
      { retryAfterSec },
      { 'Retry-After': String(retryAfterSec) },
    );
  }

  async function startSession(userId: string, accountId: string, client: ClientInfo) {
    const token = randomBase62(SESSION_TOKEN_LENGTH);
    const now = clock.now();
    const expiresAt = new Date(now.getTime() + config.sessionTtlHours * 3_600_000);
    await repo.insertSession({ id: newId(), tokenHash: sha256Hex(token), userId, accountId, ...client, expiresAt });
    return { token, expiresAt };
  }

  /** A user, a new account, and the user as its owner; an email already taken is a 409. */
  async function createUserWithAccount(input: {
    email: string;
    password: string;
    name?: string;
    accountName?: string;
  }) {
    const email = input.email.trim();
    if (await repo.findUserByEmail(email)) {
      throw new AppError('conflict', 'An account with this email already exists; sign in instead');
    }
    const userId = newId();
    const accountId = newId();
    const passwordHash = await hashPassword(input.password);
    await repo.transaction((tx) =>
      tx.insertAccountWithOwner({
        accountId,
        accountName: input.accountName?.trim() || `${input.name?.trim() || email}'s account`,
        userId,
        email,
        name: input.name?.trim() || null,
        passwordHash,
      }),
    );
    return { userId, accountId, email };
  }

  return {
    /** Creates a user, a new account and the owner membership, and signs the user in; REGISTRATION decides who may. */
    async register(input: RegisterInput, client: ClientInfo) {
      if (config.registration !== 'open') {
        // Invitations to sign up do not exist yet, so `invite` lets nobody in on their own, like `closed`.
        throw new AppError('forbidden', 'Sign-up is closed on this server: ask its administrator to create your user');
      }
      const { userId, accountId } = await createUserWithAccount(input);
      const session = await startSession(userId, accountId, client);
      return { userId, accountId, session };
    },

    /** The platform administrator's way in when sign-up is closed: a user and its account, with a new password. */
    async createUser(input: { email: string; name?: string; accountName?: string }) {
      const password = randomBase62(20);
      const { userId, accountId, email } = await createUserWithAccount({ ...input, password });
      return { userId, accountId, email, password };
    },

    async login(input: LoginInput, client: ClientInfo) {
      const email = input.email.trim();
      const byEmail = emailBudget(email);
      const byIp = ipBudget(client.ip);
      await spendPasswordAttempt([byEmail, byIp], 'Too many failed sign-in attempts for this email or address');
      const user = await repo.findUserByEmail(email);
      const ok = await verifyPassword(user?.password_hash ?? (await decoyPasswordHash()), input.password);
      // A failure stays counted on both budgets.
      if (!user || !ok) throw new AppError('unauthorized', 'Email or password is incorrect');
      // Success clears the email's failures; the address only gets this attempt back (others may share it).
      await Promise.all([counters.reset(byEmail.key), counters.unhit(byIp.key)]);
      const [first] = await repo.listMemberships(user.id);
      if (!first) throw new AppError('forbidden', 'This user is not a member of any account');
      const session = await startSession(user.id, first.account_id, client);
      return { userId: user.id, accountId: first.account_id, session };
    },

    async logout(auth: Auth) {
      if (auth.sessionId && auth.userId) await repo.revokeSession(auth.sessionId, auth.userId, clock.now());
    },

    /** Moves the current session to another account the user belongs to; not a member answers 404. */
    async switchAccount(auth: Auth, accountId: string) {
      requireUser(auth);
      if (!auth.sessionId) throw new AppError('forbidden', 'Switching accounts needs a browser session');
      const memberships = await repo.listMemberships(auth.userId);
      const target = memberships.find((m) => m.account_id === accountId);
      if (!target) throw notFound('Account');
      await repo.switchSessionAccount(auth.sessionId, auth.userId, accountId);
      return { accountId, role: target.role };
    },

    /** Changes the password and signs out every other session of the user. */
    async changePassword(auth: Auth, input: { currentPassword: string; newPassword: string }) {
      requireUser(auth);
      const user = await repo.findUserById(auth.userId);
      if (!user) throw new AppError('forbidden', 'The current password is incorrect');
      // Same budget as signing in with this email: a stolen session must not become an unthrottled password oracle.
      const byEmail = emailBudget(user.email);
      await spendPasswordAttempt([byEmail], 'Too many wrong current passwords');
      if (!(await verifyPassword(user.password_hash, input.currentPassword))) {
        throw new AppError('forbidden', 'The current password is incorrect');
      }
      await counters.reset(byEmail.key);
      if (input.currentPassword === input.newPassword) {
        throw invalidField('body/newPassword', 'must differ from currentPassword');
      }
      const passwordHash = await hashPassword(input.newPassword);
      const now = clock.now();
      const revokedSessions = await repo.transaction(async (tx) => {
        await tx.updatePassword(auth.userId, passwordHash, now);
        return tx.revokeOtherSessions(auth.userId, auth.sessionId ?? null, now);
      });
      return { ok: true as const, revokedSessions };
    },

    async recentSessions(auth: Auth, limit: number) {
      requireUser(auth);
      const now = clock.now();
      const rows = await repo.listSessions(auth.userId, limit);
      return {
        sessions: rows.map((row) => ({
          id: row.id,
          ip: row.ip,
          userAgent: row.user_agent,
          createdAt: row.created_at.toISOString(),
          lastSeenAt: row.last_seen_at.toISOString(),
          expiresAt: row.expires_at.toISOString(),
          revokedAt: row.revoked_at?.toISOString() ?? null,
          active: row.revoked_at === null && row.expires_at > now,
          current: row.id === auth.sessionId,
        })),
      };
    },

    /** Signs out every other session of the user; the one making the request stays signed in. */
    async revokeAllSessions(auth: Auth) {
      requireUser(auth);
      const revoked = await repo.revokeOtherSessions(auth.userId, auth.sessionId ?? null, clock.now());
      return { revoked };
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

    /**
     * Grants or revokes the platform-administrator flag (the operator's command line, not an HTTP route). Takes
     * effect on the user's next request. Answers null when no user has this email.
     */
    async setPlatformAdmin(email: string, isPlatformAdmin: boolean) {
      const result = await repo.transaction((tx) => tx.setPlatformAdmin(email.trim(), isPlatformAdmin));
      return result ? { email: result.email, changed: result.wasPlatformAdmin !== isPlatformAdmin } : null;
    },

    /** The country numbers written without a country code are read in, for this account. */
    defaultCountry(accountId: string) {
      return repo.defaultCountry(accountId);
    },

    async me(auth: Auth) {
      const memberships = auth.userId ? await repo.listMemberships(auth.userId) : [];
      const user = auth.userId ? await repo.findUserById(auth.userId) : undefined;
      const account = await repo.findAccount(auth.accountId);
      return {
        user: user
          ? { id: user.id, email: user.email, name: user.name, isPlatformAdmin: user.is_platform_admin }
          : null,
        account: { id: auth.accountId, name: account?.name ?? '', role: auth.role },
        accounts: memberships.map((m) => ({ id: m.account_id, name: m.account_name, role: m.role })),
        scheme: auth.scheme,
        apiKeyId: auth.apiKeyId ?? null,
      };
    },
  };
}

export type AuthService = ReturnType<typeof createAuthService>;
