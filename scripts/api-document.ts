/**
 * The API document (OpenAPI 3.1) exactly as the running service serves it at /api/v1/openapi.json, written without a
 * database, a queue or a listening port: the app is built on stand-ins that refuse any query, and only its route
 * schemas are read. The dashboard's client types are generated from this document (scripts/web.mjs).
 *
 *   node --import tsx scripts/api-document.ts <out.json>   the document
 *   node --import tsx scripts/api-document.ts <out.ts>     its TypeScript types (openapi-typescript), for openapi-fetch
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import openapiTS, { astToString } from 'openapi-typescript';
import { Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, type Driver } from 'kysely';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { systemClock } from '../src/lib/clock.js';
import { createLocalBroadcast } from '../src/lib/broadcast.js';
import { createMemoryCounterStore } from '../src/lib/counter-store.js';
import { createLocalBus } from '../src/lib/invalidation-bus.js';
import { createProviders } from '../src/runtime.js';
import type { Db } from '../src/db/client.js';
import type { JobQueue } from '../src/jobs/queue.js';

function refuse(): never {
  throw new Error('the API document is written without a database: building the app must not query it');
}

/** A Kysely that compiles queries but refuses to run any. */
function refusingDb(): Db {
  const driver: Driver = {
    async init() {},
    acquireConnection: refuse,
    beginTransaction: refuse,
    commitTransaction: refuse,
    rollbackTransaction: refuse,
    async releaseConnection() {},
    async destroy() {},
  };
  return new Kysely({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => driver,
      createIntrospector: (db) => new PostgresIntrospector(db),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
  }) as Db;
}

export async function apiDocument(): Promise<Record<string, unknown>> {
  const storageDir = mkdtempSync(join(tmpdir(), 'parley-api-document-'));
  try {
    const config = loadConfig({ LOG_LEVEL: 'silent', DATA_DIR: ':memory:', STORAGE_DIR: storageDir });
    const jobs = new Proxy({} as JobQueue, { get: (_target, name) => (name === 'then' ? undefined : refuse) });
    const { app } = await buildApp({
      config,
      database: { db: refusingDb(), kind: 'postgres', close: async () => {} },
      redis: null,
      counters: createMemoryCounterStore(),
      bus: createLocalBus({ singleProcess: true }),
      broadcast: createLocalBroadcast(),
      jobs,
      providers: await createProviders(config),
      clock: systemClock,
      logger: false,
    });
    await app.ready();
    const document = app.swagger() as unknown as Record<string, unknown>;
    await app.close();
    return document;
  } finally {
    rmSync(storageDir, { recursive: true, force: true });
  }
}

/** The document's types, as openapi-typescript writes them: `paths`, `components`, `operations`. */
export async function apiTypes(document: Record<string, unknown>): Promise<string> {
  const header =
    '// Generated from the API document by scripts/api-document.ts: do not edit (npm run build:web writes it).\n';
  return header + astToString(await openapiTS(document as unknown as Parameters<typeof openapiTS>[0]));
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].replace(/^.*\//, '/'))) {
  const out = process.argv[2];
  if (!out) {
    console.error('usage: node --import tsx scripts/api-document.ts <out.json | out.ts>');
    process.exit(2);
  }
  const document = await apiDocument();
  writeFileSync(out, out.endsWith('.ts') ? await apiTypes(document) : `${JSON.stringify(document, null, 2)}\n`);
}
