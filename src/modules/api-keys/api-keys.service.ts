import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { sha256Hex } from '../../lib/crypto.js';
import { notFound, AppError } from '../../lib/errors.js';
import type { Auth } from '../../lib/caller.js';
import type { InvalidationBus } from '../../lib/invalidation-bus.js';
import type { ApiKeysRepo } from './api-keys.repo.js';
import type { CreateApiKeyInput } from './api-keys.schemas.js';
import { envelope, type Page } from '../../db/pagination.js';
import { actorOf } from '../../events/domain-events.js';
import { displayPrefix, generateApiKey, isWellFormedApiKey } from './api-keys.format.js';

// lastUsedAt is advisory: write it at most once a minute per key, not on every request.
const TOUCH_EVERY_MS = 60_000;
// A resolved key is reused for a few seconds, saving a query per request. A deletion evicts it everywhere at
// once through the bus, and an instance that may have missed a message drops its whole cache; the TTL only bounds
// staleness on a connection that looks alive but silently lost messages.
const CACHE_TTL_MS = 10_000;
const CACHE_MAX_KEYS = 10_000;
/** Bus topics: an API key was deleted (id), or an account's status or limits changed (account id). */
export const API_KEY_REVOKED = 'api-key.revoked';
export const ACCOUNT_CHANGED = 'account.changed';

type KeyRow = Awaited<ReturnType<ApiKeysRepo['list']>>['items'][number];

const toApiKey = (row: KeyRow) => ({
  id: row.id,
  name: row.name,
  displayPrefix: row.display_prefix,
  createdAt: row.created_at.toISOString(),
  lastUsedAt: row.last_used_at?.toISOString() ?? null,
});

/**
 * Resolved keys by key hash. Only used while the bus reaches every instance; a generation counter keeps a lookup
 * that raced with an invalidation from caching what was just invalidated.
 */
function createKeyCache(bus: InvalidationBus, now: () => number) {
  const entries = new Map<string, { auth: Auth; until: number }>();
  let generation = 0;
  const evict = (matches: (auth: Auth) => boolean) => {
    generation++;
    for (const [hash, entry] of entries) if (matches(entry.auth)) entries.delete(hash);
  };
  bus.subscribe(API_KEY_REVOKED, (id) => evict((auth) => auth.apiKeyId === id));
  bus.subscribe(ACCOUNT_CHANGED, (accountId) => evict((auth) => auth.accountId === accountId));
  // Listening stopped or resumed: a deletion may have gone unheard, so nothing cached before can be trusted.
  bus.onMissedMessages(() => evict(() => true));
  return {
    generation: () => generation,
    get(hash: string): Auth | null {
      if (!bus.reachesAllInstances) return null;
      const entry = entries.get(hash);
      if (!entry || entry.until <= now()) return null;
      return entry.auth;
    },
    set(hash: string, auth: Auth, lookupGeneration: number) {
      if (!bus.reachesAllInstances || lookupGeneration !== generation) return;
      if (entries.size >= CACHE_MAX_KEYS) entries.delete(entries.keys().next().value!);
      entries.set(hash, { auth, until: now() + CACHE_TTL_MS });
    },
  };
}

export function createApiKeysService(deps: { repo: ApiKeysRepo; clock: Clock; bus: InvalidationBus }) {
  const { repo, clock, bus } = deps;
  const lastTouched = new Map<string, number>();
  const cache = createKeyCache(bus, () => clock.now().getTime());

  /** lastUsedAt, written at most once a minute per key. */
  async function touch(auth: Auth) {
    const now = clock.now().getTime();
    if (now - (lastTouched.get(auth.apiKeyId!) ?? 0) <= TOUCH_EVERY_MS) return;
    lastTouched.set(auth.apiKeyId!, now);
    await repo.touch(auth.accountId, auth.apiKeyId!, new Date(now));
  }

  return {
    /** Creates a key. The plaintext is in this answer only; the database keeps its SHA-256. */
    async create(auth: Auth, input: CreateApiKeyInput) {
      const key = generateApiKey();
      const row = await repo.transaction(async (tx) => {
        const inserted = await tx.insert(auth.accountId, {
          id: newId(),
          name: input.name.trim(),
          displayPrefix: displayPrefix(key),
          keyHash: sha256Hex(key),
          createdByUserId: auth.userId ?? null,
        });
        await tx.emit({
          type: 'api_key.created',
          accountId: auth.accountId,
          subject: { type: 'api_key', id: inserted.id },
          data: { name: inserted.name, displayPrefix: inserted.display_prefix },
          actor: actorOf(auth),
        });
        return inserted;
      });
      return { ...toApiKey(row), key };
    },

    async list(auth: Auth, page: Page) {
      const { items, total } = await repo.list(auth.accountId, page);
      return envelope('apiKeys', items.map(toApiKey), total, page);
    },

    async delete(auth: Auth, id: string) {
      await repo.transaction(async (tx) => {
        if (!(await tx.delete(auth.accountId, id))) throw notFound('API key');
        await tx.emit({
          type: 'api_key.deleted',
          accountId: auth.accountId,
          subject: { type: 'api_key', id },
          actor: actorOf(auth),
        });
      });
      lastTouched.delete(id);
      await bus.publish(API_KEY_REVOKED, id);
      return { id, deleted: true as const };
    },

    /** Resolves a bearer token; a deleted key is evicted on every instance, so it fails on the very next request. */
    async authenticate(token: string): Promise<Auth | null> {
      if (!isWellFormedApiKey(token)) return null;
      const hash = sha256Hex(token);
      const cached = cache.get(hash);
      if (cached) {
        await touch(cached);
        return cached;
      }
      const lookupGeneration = cache.generation();
      const row = await repo.findForAuth(hash);
      if (!row) return null;
      if (row.status === 'suspended') throw new AppError('forbidden', 'This account is suspended');
      const auth: Auth = {
        accountId: row.account_id,
        apiKeyId: row.id,
        role: 'admin',
        isPlatformAdmin: false,
        scheme: 'api_key',
        rateLimitPerMinute: row.rate_limit_per_minute,
      };
      cache.set(hash, auth, lookupGeneration);
      await touch(auth);
      return auth;
    },
  };
}

export type ApiKeysService = ReturnType<typeof createApiKeysService>;
