import type { Redis } from 'ioredis';
import type { Config } from './config.js';
import type { DatabaseHandle } from './db/client.js';
import type { Clock } from './lib/clock.js';
import type { CounterStore } from './lib/counter-store.js';
import type { InvalidationBus } from './lib/invalidation-bus.js';
import type { JobQueue } from './jobs/queue.js';
import { createAuthRepo } from './modules/auth/auth.repo.js';
import { createAuthService } from './modules/auth/auth.service.js';
import { createApiKeysRepo } from './modules/api-keys/api-keys.repo.js';
import { createApiKeysService } from './modules/api-keys/api-keys.service.js';
import { createSystemService } from './modules/system/system.service.js';
import { createAgentsRepo } from './modules/agents/agents.repo.js';
import { createAgentsService } from './modules/agents/agents.service.js';
import { createCallsRepo } from './modules/calls/calls.repo.js';
import { createCallsService } from './modules/calls/calls.service.js';
import { createContactsService } from './modules/contacts/contacts.service.js';
import { createDncService } from './modules/dnc/dnc.service.js';

/** What the composition root needs from the outside world. */
export interface CoreDeps {
  config: Config;
  database: DatabaseHandle;
  redis: Redis | null;
  counters: CounterStore;
  /** Cache invalidation across instances (Redis pub/sub, or in-process). */
  bus: InvalidationBus;
  /** Enqueue background work; pass { trx } to enqueue inside a transaction (outbox). */
  jobs: JobQueue;
  clock: Clock;
}

/** The composition root: every service, built once from plain factories. */
export function createServices(deps: CoreDeps) {
  const { config, clock, redis, counters } = deps;
  const db = deps.database.db;
  return {
    config,
    counters,
    jobs: deps.jobs,
    system: createSystemService({ db, redis, config, clock, databaseKind: deps.database.kind }),
    auth: createAuthService({ db, repo: createAuthRepo(db), clock, config, counters }),
    apiKeys: createApiKeysService({ repo: createApiKeysRepo(db), clock, bus: deps.bus }),
    agents: createAgentsService({ repo: createAgentsRepo(db), clock }),
    calls: createCallsService({ repo: createCallsRepo(db) }),
    contacts: createContactsService({ db, config, clock, databaseKind: deps.database.kind }),
    dnc: createDncService({ db, config, clock, databaseKind: deps.database.kind }),
  };
}

export type Services = ReturnType<typeof createServices>;
