import { sql } from 'kysely';
import type { Redis } from 'ioredis';
import type { Db } from '../../db/client.js';
import type { Config } from '../../config.js';
import type { Clock } from '../../lib/clock.js';

export const SERVICE_VERSION = '1.0.0';

type ComponentStatus = 'ok' | 'down' | 'disabled';

async function probe(check: () => Promise<unknown>): Promise<ComponentStatus> {
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
}) {
  const { db, redis, config, clock } = deps;

  async function checkComponents() {
    const [database, cache] = await Promise.all([
      probe(() => sql`SELECT 1`.execute(db)),
      redis ? probe(() => redis.ping()) : Promise.resolve<ComponentStatus>('disabled'),
    ]);
    return { database, redis: cache };
  }

  return {
    async health() {
      const components = await checkComponents();
      const healthy = components.database === 'ok' && components.redis !== 'down';
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
        auth: { schemes: ['api_key', 'session'], apiKeyPrefix: 'va_', sessionCookie: 'vsid', registrationOpen: true },
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
        components.database !== 'ok' ? 'major_outage' : components.redis === 'down' ? 'degraded' : 'operational';
      return {
        status: status as 'operational' | 'degraded' | 'major_outage',
        components: [
          { name: 'api', status: 'ok' as ComponentStatus },
          { name: 'database', status: components.database },
          { name: 'redis', status: components.redis },
        ],
        checkedAt: clock.now().toISOString(),
      };
    },
  };
}

export type SystemService = ReturnType<typeof createSystemService>;
