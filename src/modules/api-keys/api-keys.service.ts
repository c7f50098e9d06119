import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { sha256Hex } from '../../lib/crypto.js';
import { notFound, AppError } from '../../http/errors.js';
import { requireRole, type Auth } from '../../http/auth.js';
import type { ApiKeysRepo } from './api-keys.repo.js';
import { displayPrefix, generateApiKey, isWellFormedApiKey } from './api-key-format.js';

// lastUsedAt is advisory: write it at most once a minute per key, not on every request.
const TOUCH_EVERY_MS = 60_000;

type KeyRow = Awaited<ReturnType<ApiKeysRepo['list']>>[number];

const toApiKey = (row: KeyRow) => ({
  id: row.id,
  name: row.name,
  displayPrefix: row.display_prefix,
  createdAt: row.created_at.toISOString(),
  lastUsedAt: row.last_used_at?.toISOString() ?? null,
});

export function createApiKeysService(deps: { repo: ApiKeysRepo; clock: Clock }) {
  const { repo, clock } = deps;
  const lastTouched = new Map<string, number>();

  return {
    /** Creates a key. The plaintext is in this answer only; the database keeps its SHA-256. */
    async create(auth: Auth, input: { name: string }) {
      requireRole(auth, 'admin');
      const key = generateApiKey();
      const row = await repo.insert(auth.accountId, {
        id: newId(),
        name: input.name.trim(),
        displayPrefix: displayPrefix(key),
        keyHash: sha256Hex(key),
        createdByUserId: auth.userId ?? null,
      });
      return { ...toApiKey(row), key };
    },

    async list(auth: Auth) {
      return { apiKeys: (await repo.list(auth.accountId)).map(toApiKey) };
    },

    async delete(auth: Auth, id: string) {
      requireRole(auth, 'admin');
      if (!(await repo.delete(auth.accountId, id))) throw notFound('API key');
      lastTouched.delete(id);
      return { id, deleted: true as const };
    },

    /** Resolves a bearer token; a deleted key is gone from the table, so it fails on the very next request. */
    async authenticate(token: string): Promise<Auth | null> {
      if (!isWellFormedApiKey(token)) return null;
      const row = await repo.findForAuth(sha256Hex(token));
      if (!row) return null;
      if (row.status === 'suspended') throw new AppError('forbidden', 'This account is suspended');
      const now = clock.now().getTime();
      if (now - (lastTouched.get(row.id) ?? 0) > TOUCH_EVERY_MS) {
        lastTouched.set(row.id, now);
        await repo.touch(row.account_id, row.id, new Date(now));
      }
      return {
        accountId: row.account_id,
        apiKeyId: row.id,
        role: 'admin',
        isPlatformAdmin: false,
        scheme: 'api_key',
        rateLimitPerMinute: row.rate_limit_per_minute,
      };
    },
  };
}

export type ApiKeysService = ReturnType<typeof createApiKeysService>;
