import { sql } from 'kysely';
import type { Redis } from 'ioredis';
import type { Db } from '../../db/client.js';
import type { Config } from '../../config.js';
import type { Clock } from '../../lib/clock.js';
import type { ObjectStorage } from '../../providers/storage/index.js';

export const SERVICE_VERSION = '1.0.0';

type ComponentStatus = 'ok' | 'down' | 'disabled';

async function probe(check: () => Promise<unknown>): Promise<'ok' | 'down'> {
  try {
    await check();
    return 'ok';
  } catch {
    return 'down';
  }
}

export function createSystemService(deps: {
  db: Db;
  redis: Redis | null;
  config: Config;
  clock: Clock;
  databaseKind: 'pglite' | 'postgres';
  /** Where recordings go: a directory that cannot be written, or a bucket out of reach, loses every recording. */
  objects: ObjectStorage;
}) {
  const { db, redis, config, clock, objects } = deps;

  async function checkComponents() {
    const [database, cache, objectStorage] = await Promise.all([
      probe(() => sql`SELECT 1`.execute(db)),
      redis ? probe(() => redis.ping()) : Promise.resolve<ComponentStatus>('disabled'),
      probe(() => objects.check()),
    ]);
    return { database, redis: cache, objectStorage };
  }

  return {
    async health() {
      const components = await checkComponents();
      const healthy = components.database === 'ok' && components.redis !== 'down' && components.objectStorage === 'ok';
      return {
        healthy,
        body: {
          status: healthy ? ('ok' as const) : ('down' as const),
          version: SERVICE_VERSION,
          storage: deps.databaseKind,
          ...components,
        },
      };
    },

    publicConfig() {
      return {
        version: SERVICE_VERSION,
        apiBasePath: '/api',
        publicBaseUrl: config.publicBaseUrl,
        auth: {
          schemes: ['api_key', 'session'],
          apiKeyPrefix: 'va_',
          sessionCookie: 'vsid',
          // Anyone may sign up only when REGISTRATION is open; invite and closed send newcomers to an administrator.
          registrationOpen: config.registration === 'open',
        },
        limits: {
          requestsPerMinutePerKey: config.rateLimitPerMinute,
          anonymousRequestsPerMinutePerIp: config.anonymousRateLimitPerMinute,
          jsonBodyLimitBytes: config.jsonBodyLimitBytes,
          csvBodyLimitBytes: config.csvBodyLimitBytes,
          maxPageSize: 500,
        },
      };
    },

    async publicStatus() {
      const components = await checkComponents();
      const status =
        components.database !== 'ok'
          ? 'major_outage'
          : components.redis === 'down' || components.objectStorage === 'down'
            ? 'degraded'
            : 'operational';
      return {
        status: status as 'operational' | 'degraded' | 'major_outage',
        components: [
          { name: 'api', status: 'ok' as ComponentStatus },
          { name: 'database', status: components.database },
          { name: 'redis', status: components.redis },
          { name: 'object_storage', status: components.objectStorage },
        ],
        checkedAt: clock.now().toISOString(),
      };
    },
  };
}

export type SystemService = ReturnType<typeof createSystemService>;
