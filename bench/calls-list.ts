/**
 * GET /v1/calls against an account with 1,000,000 calls, on PostgreSQL.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npx tsx bench/calls-list.ts
 *
 * Creates a fresh database, seeds it, serves the real app on 127.0.0.1, loads it with autocannon (in a worker
 * thread, so the app keeps the main thread), then replays the endpoint's own SQL straight through `pg` as the
 * baselines (every statement of a request; and the page SELECT alone), and prints app/baseline ratios. Separately it times `total`: the trigger-kept counts vs count(*).
 * The database is dropped at the end. Env: CALLS (default 1000000), SECONDS per load run (default 10).
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';
import pg from 'pg';
import { sql } from 'kysely';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { systemClock } from '../src/lib/clock.js';
import { openInfrastructure } from '../src/runtime.js';
import { Kysely, PostgresDialect } from 'kysely';
import { callQueries, type CallFilters } from '../src/modules/calls/calls.repo.js';
import { apiKeyQueries } from '../src/modules/api-keys/api-keys.repo.js';
import { sha256Hex } from '../src/lib/crypto.js';
import type { Database } from '../src/db/types.js';
import { signUp } from '../test/helpers.js';
import { AGENTS, CONTACTS, createBenchDatabase, seedCalls } from './calls-data.js';

const CALLS = Number(process.env.CALLS ?? 1_000_000);
const SECONDS = Number(process.env.SECONDS ?? 10);
const CONNECTIONS = 50;

if (!process.env.DATABASE_URL) {
  console.error('bench/calls-list.ts needs DATABASE_URL (a PostgreSQL server it may create a database on)');
  process.exit(2);
}

interface Measured {
  rps: number;
  p50: number;
  p99: number;
}

const ms = (value: number) => `${value.toFixed(2)} ms`;
const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
const seconds = (start: number) => `${((performance.now() - start) / 1000).toFixed(1)} s`;

async function loadApp(url: string, apiKey: string, duration: number): Promise<Measured & { failed: number }> {
  const result = await autocannon({
    url,
    connections: CONNECTIONS,
    duration,
    workers: 1,
    headers: { authorization: `Bearer ${apiKey}` },
  });
  return {
    rps: result.requests.total / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    failed: result.non2xx + result.errors,
  };
}

/** The baseline: the endpoint's page SQL, straight through pg, from CONNECTIONS clients at once. */
async function loadDirect(
  databaseUrl: string,
  text: string,
  values: readonly unknown[],
  duration: number,
): Promise<Measured> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: CONNECTIONS });
  const latencies: number[] = [];
  try {
    const clients = await Promise.all(Array.from({ length: CONNECTIONS }, () => pool.connect()));
    const started = performance.now();
    const deadline = started + duration * 1000;
    await Promise.all(
      clients.map(async (client) => {
        while (performance.now() < deadline) {
          const t0 = performance.now();
          await client.query(text, values as unknown[]);
          latencies.push(performance.now() - t0);
        }
        client.release();
      }),
    );
    const elapsed = (performance.now() - started) / 1000;
    latencies.sort((a, b) => a - b);
    return { rps: latencies.length / elapsed, p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
  } finally {
    await pool.end();
  }
}

interface RecordedQuery {
  sql: string;
  parameters: readonly unknown[];
}

/**
 * Every statement one GET /v1/calls request sends in steady state, recorded by running the same repo functions
 * the request runs: the API-key lookup (unless the app caches resolved keys, as it does with Redis or PGlite),
 * then the page and `total` (which the service sends at the same time).
 */
async function recordEndpointSql(
  databaseUrl: string,
  apiKey: string,
  accountId: string,
  filters: CallFilters,
  keyLookupPerRequest: boolean,
) {
  const recorded: RecordedQuery[] = [];
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  const recorder = new Kysely<Database>({
    dialect: new PostgresDialect({ pool }),
    log: (event) => void recorded.push({ sql: event.query.sql, parameters: event.query.parameters }),
  });
  try {
    await apiKeyQueries(recorder).findForAuth(sha256Hex(apiKey));
    const calls = callQueries(recorder);
    await calls.listPage(accountId, filters, { limit: 25, offset: 0 });
    await calls.count(accountId, filters);
  } finally {
    await recorder.destroy();
  }
  const [lookup, ...rest] = recorded;
  return { lookup: keyLookupPerRequest ? lookup! : null, concurrent: rest };
}

/** The full baseline: one request's statements in the request's order, from CONNECTIONS loops over a pool of `poolSize`. */
async function loadDirectRequest(
  databaseUrl: string,
  statements: Awaited<ReturnType<typeof recordEndpointSql>>,
  poolSize: number,
  duration: number,
): Promise<Measured> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: poolSize });
  const latencies: number[] = [];
  try {
    const started = performance.now();
    const deadline = started + duration * 1000;
    await Promise.all(
      Array.from({ length: CONNECTIONS }, async () => {
        while (performance.now() < deadline) {
          const t0 = performance.now();
          if (statements.lookup) await pool.query(statements.lookup.sql, statements.lookup.parameters as unknown[]);
          await Promise.all(statements.concurrent.map((q) => pool.query(q.sql, q.parameters as unknown[])));
          latencies.push(performance.now() - t0);
        }
      }),
    );
    const elapsed = (performance.now() - started) / 1000;
    latencies.sort((a, b) => a - b);
    return { rps: latencies.length / elapsed, p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
  } finally {
    await pool.end();
  }
}

/**
 * A bare node:http server that sends the same statements through pg (same pool size) and answers the rows as
 * JSON: the floor for serving this SQL over HTTP on this machine, with the load generator taking the same CPU.
 */
async function startBareHttp(
  databaseUrl: string,
  statements: Awaited<ReturnType<typeof recordEndpointSql>>,
  poolSize: number,
) {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: poolSize });
  // Handlers still running: the load generator hangs up at its deadline with requests in flight, and a handler
  // may be between its two steps (key lookup, then page and total) when that happens.
  const inFlight = new Set<Promise<void>>();
  const answer = async (res: ServerResponse) => {
    if (statements.lookup) await pool.query(statements.lookup.sql, statements.lookup.parameters as unknown[]);
    const [page, total] = await Promise.all(
      statements.concurrent.map((q) => pool.query(q.sql, q.parameters as unknown[])),
    );
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ calls: page!.rows, total: total?.rows[0], limit: 25, offset: 0 }));
  };
  const server = createServer((_req, res) => {
    const handled = answer(res)
      .catch((error: unknown) => {
        if (!res.headersSent) res.writeHead(500);
        res.end(String(error));
      })
      .finally(() => inFlight.delete(handled));
    inFlight.add(handled);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    /** Stops accepting, drops the connections, lets the handlers still running finish, and only then ends the pool. */
    async close() {
      const closed = new Promise((resolve) => server.close(resolve));
      server.closeAllConnections();
      await closed;
      await Promise.all(inFlight);
      await pool.end();
    },
  };
}

/** Sequential timings of one async operation: median and mean. */
async function timeIt(runs: number, operation: () => Promise<unknown>) {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await operation();
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 50), mean: times.reduce((s, x) => s + x, 0) / times.length };
}

/** The filters measured: both paths of `total` (the counts table, and count(*) for dates and contacts). */
function scenarios(agentId: string): { name: string; filters: CallFilters; query: string }[] {
  const monthAgo = new Date(Date.now() - 30 * 86_400_000);
  return [
    { name: 'no filter', filters: {}, query: '' },
    { name: 'status=no_answer', filters: { status: 'no_answer' }, query: 'status=no_answer' },
    { name: 'agentId+status=busy', filters: { agentId, status: 'busy' }, query: `agentId=${agentId}&status=busy` },
    {
      name: 'dateFrom=30 days ago (count(*) path)',
      filters: { createdFrom: monthAgo },
      query: `dateFrom=${monthAgo.toISOString()}`,
    },
  ];
}

/**
 * The app under load against three baselines, for each filter:
 * - "same SQL": every statement the request sends (page and total; plus the key lookup when keys are not cached)
 *   through pg with the app's pool size, so the ratio is the cost of everything that is not the database;
 * - "bare node:http": the same statements behind a bare HTTP server, loaded the same way: what any HTTP service
 *   pays on this machine, so app/bare is the cost of Fastify, auth, rate limiting, validation and serialization;
 * - "page only": just the page SELECT from CONNECTIONS dedicated clients, the floor for any list endpoint.
 */
async function compareWithBaseline(
  address: string,
  apiKey: string,
  databaseUrl: string,
  repo: ReturnType<typeof callQueries>,
  accountId: string,
  agentId: string,
  poolSize: number,
  keyLookupPerRequest: boolean,
) {
  for (const scenario of scenarios(agentId)) {
    const url = `${address}/api/v1/calls?limit=25&${scenario.query}`;
    const probe = await fetch(url, { headers: { authorization: `Bearer ${apiKey}` } });
    if (probe.status !== 200) throw new Error(`${scenario.name}: HTTP ${probe.status} ${await probe.text()}`);
    const { total } = (await probe.json()) as { total: number };
    await loadApp(url, apiKey, 2); // warm-up
    const viaApp = await loadApp(url, apiKey, SECONDS);
    if (viaApp.failed) throw new Error(`${scenario.name}: ${viaApp.failed} failed requests`);
    const statements = await recordEndpointSql(databaseUrl, apiKey, accountId, scenario.filters, keyLookupPerRequest);
    await loadDirectRequest(databaseUrl, statements, poolSize, 2); // warm-up
    const sameSql = await loadDirectRequest(databaseUrl, statements, poolSize, SECONDS);
    const bare = await startBareHttp(databaseUrl, statements, poolSize);
    const bareHttp = await loadApp(bare.url, apiKey, 2)
      .then(() => loadApp(bare.url, apiKey, SECONDS))
      .finally(() => bare.close());
    const compiled = repo.pageQuery(accountId, scenario.filters, { limit: 25, offset: 0 }).compile();
    const pageOnly = await loadDirect(databaseUrl, compiled.sql, compiled.parameters, SECONDS);
    const ratio = (base: Measured) =>
      `throughput ${(viaApp.rps / base.rps).toFixed(2)}, p50 ${(viaApp.p50 / base.p50).toFixed(2)}, p99 ${(viaApp.p99 / base.p99).toFixed(2)}`;
    console.log(`  ${scenario.name} (total ${total.toLocaleString('en')})`);
    console.log(`    app:            ${viaApp.rps.toFixed(0)} req/s, p50 ${ms(viaApp.p50)}, p99 ${ms(viaApp.p99)}`);
    console.log(
      `    bare node:http: ${bareHttp.rps.toFixed(0)} req/s, p50 ${ms(bareHttp.p50)}, p99 ${ms(bareHttp.p99)}  -> app/baseline ${ratio(bareHttp)}`,
    );
    console.log(
      `    same SQL (pg):  ${sameSql.rps.toFixed(0)} req/s, p50 ${ms(sameSql.p50)}, p99 ${ms(sameSql.p99)}  -> app/baseline ${ratio(sameSql)}`,
    );
    console.log(
      `    page only (pg): ${pageOnly.rps.toFixed(0)} q/s, p50 ${ms(pageOnly.p50)}, p99 ${ms(pageOnly.p99)}  -> app/baseline ${ratio(pageOnly)}`,
    );
  }
}

/** `total` alone: the trigger-kept counts table against a plain count(*) of the same rows, checking they agree. */
async function compareTotals(repo: ReturnType<typeof callQueries>, accountId: string, agentId: string) {
  for (const { name, filters } of scenarios(agentId)
    .slice(0, 3)
    .concat({ name: 'hasRecording=false', filters: { hasRecording: false }, query: '' })) {
    const counts = await timeIt(200, () => repo.countFromCounts(accountId, filters));
    const scan = await timeIt(10, () => repo.countByScan(accountId, filters));
    const [fromCounts, fromScan] = [
      await repo.countFromCounts(accountId, filters),
      await repo.countByScan(accountId, filters),
    ];
    if (fromCounts !== fromScan) throw new Error(`${name}: counts table says ${fromCounts}, count(*) says ${fromScan}`);
    console.log(
      `  ${name}: counts table p50 ${ms(counts.p50)} (mean ${ms(counts.mean)}) vs count(*) p50 ${ms(scan.p50)} (mean ${ms(scan.mean)})` +
        `: ${(scan.p50 / counts.p50).toFixed(0)}x; both say ${fromCounts.toLocaleString('en')}`,
    );
  }
  const { name, filters } = scenarios(agentId)[3]!;
  const scan = await timeIt(10, () => repo.countByScan(accountId, filters));
  console.log(`  ${name}: p50 ${ms(scan.p50)} (mean ${ms(scan.mean)})`);
}

async function main(databaseUrl: string) {
  const config = loadConfig({
    DATABASE_URL: databaseUrl,
    LOG_LEVEL: 'silent',
    ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {}),
  });
  const infra = await openInfrastructure(config, { redisKeyPrefix: `parley-bench:${Date.now()}:` });
  const { app } = await buildApp({ config, ...infra, clock: systemClock, logger: false });
  try {
    await app.ready();
    const owner = await signUp(app);
    const db = infra.database.db;
    await db
      .updateTable('accounts')
      .set({ rate_limit_per_minute: 100_000_000 })
      .where('id', '=', owner.accountId)
      .execute();

    const seeder = new pg.Client({ connectionString: databaseUrl });
    await seeder.connect();
    const seedStart = performance.now();
    try {
      await seedCalls(seeder, owner.accountId, CALLS);
    } finally {
      await seeder.end();
    }
    const size = await sql<{ size: string }>`SELECT pg_size_pretty(pg_total_relation_size('calls')) AS size`.execute(
      db,
    );
    console.log(
      `seeded ${CALLS.toLocaleString('en')} calls (+ ${CONTACTS.toLocaleString('en')} contacts, ${AGENTS} agents) in ${seconds(seedStart)}; ` +
        `calls with its indexes: ${size.rows[0]!.size}`,
    );

    const address = await app.listen({ host: '127.0.0.1', port: 0 });
    const repo = callQueries(db);
    const firstAgent = await db
      .selectFrom('agents')
      .select('id')
      .where('account_id', '=', owner.accountId)
      .orderBy('id')
      .executeTakeFirstOrThrow();
    console.log(
      `\nGET /api/v1/calls?limit=25, ${CONNECTIONS} connections, ${SECONDS} s each (app pool ${config.databasePoolSize}, the DATABASE_POOL_SIZE default)`,
    );
    const keyLookupPerRequest = !infra.bus.reachesAllInstances;
    console.log(
      `API keys ${keyLookupPerRequest ? 'looked up on every request (no Redis)' : 'cached between requests (Redis pub/sub invalidation)'}`,
    );
    await compareWithBaseline(
      address,
      owner.apiKey,
      databaseUrl,
      repo,
      owner.accountId,
      firstAgent.id,
      config.databasePoolSize,
      keyLookupPerRequest,
    );
    console.log('\nCost of `total` alone (sequential, one connection):');
    await compareTotals(repo, owner.accountId, firstAgent.id);
    const combinations = await sql<{
      n: number;
    }>`SELECT count(*) AS n FROM call_counts WHERE account_id = ${owner.accountId}`.execute(db);
    console.log(
      `  (call_counts holds ${combinations.rows[0]!.n} rows for this account: the most a counted total sums)`,
    );
  } finally {
    await app.close();
    await infra.close();
  }
}

const database = await createBenchDatabase(process.env.DATABASE_URL);
const startedAt = performance.now();
try {
  await main(database.url);
} finally {
  await database.drop();
  console.log(`\nbench database dropped; whole run ${seconds(startedAt)}`);
}
