/**
 * GET /v1/calls against an account with 1,000,000 calls, on PostgreSQL.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres [REDIS_URL=redis://127.0.0.1:6379] npx tsx bench/calls-list.ts
 *
 * Creates a fresh database and seeds it, then starts the real app and a bare node:http server that sends the same
 * statements through `pg`, each in a child process of its own, and loads them with autocannon from this process in
 * alternating windows (app, bare, bare, app, …), so both see the same machine. Each window gives req/s and the CPU
 * the server process spent per request (its main thread, and the whole process), read from /proc. With REDIS_URL
 * the app runs twice, without Redis then with it (cached API keys, leased rate-limit tokens). Then it times
 * `total`: the trigger-kept counts against count(*). The database is dropped at the end.
 *
 * Env: CALLS (default 1000000), SECONDS per window (2), PAIRS of windows per filter (8), FILTERS (names to keep,
 * comma-separated: none,status,agent-status,date), PROFILE (a directory: the app and the bare server write --cpu-prof files under app/ and bare/),
 * SERVER_NODE_ARGS (node options for both servers, e.g. --max-semi-space-size=32).
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import type { Database } from '../src/db/types.js';
import { systemClock } from '../src/lib/clock.js';
import { sha256Hex } from '../src/lib/crypto.js';
import { apiKeyQueries } from '../src/modules/api-keys/api-keys.repo.js';
import { callQueries, type CallFilters } from '../src/modules/calls/calls.repo.js';
import { openInfrastructure } from '../src/runtime.js';
import { signUp } from '../test/helpers.js';
import { AGENTS, CONTACTS, createBenchDatabase, seedCalls } from './calls-data.js';

const CALLS = Number(process.env.CALLS ?? 1_000_000);
const SECONDS = Number(process.env.SECONDS ?? 2);
const PAIRS = Number(process.env.PAIRS ?? 8);
const CONNECTIONS = 50;
const TICKS_PER_SECOND = 100; // getconf CLK_TCK on Linux

interface Statement {
  sql: string;
  parameters: readonly unknown[];
}

/** One request's statements in steady state: the key lookup (when keys are not cached), then page and total at once. */
interface RequestStatements {
  lookup: Statement | null;
  concurrent: Statement[];
}

interface Scenario {
  name: string;
  label: string;
  filters: CallFilters;
  query: string;
}

const ms = (value: number) => `${value.toFixed(1)} ms`;
const seconds = (start: number) => `${((performance.now() - start) / 1000).toFixed(1)} s`;
const load = () => loadavg()[0]!.toFixed(1);
const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};
const spread = (values: number[], digits = 0) =>
  `${Math.min(...values).toFixed(digits)} / ${median(values).toFixed(digits)} / ${Math.max(...values).toFixed(digits)}`;

/** The filters measured: both paths of `total` (the counts table, and count(*) for dates and contacts). */
function scenarios(agentId: string): Scenario[] {
  const monthAgo = new Date(Date.now() - 30 * 86_400_000);
  const all: Scenario[] = [
    { name: 'none', label: 'no filter', filters: {}, query: '' },
    { name: 'status', label: 'status=no_answer', filters: { status: 'no_answer' }, query: 'status=no_answer' },
    {
      name: 'agent-status',
      label: 'agentId+status=busy',
      filters: { agentId, status: 'busy' },
      query: `agentId=${agentId}&status=busy`,
    },
    {
      name: 'date',
      label: 'dateFrom=30 days ago (count(*) path)',
      filters: { createdFrom: monthAgo },
      query: `dateFrom=${monthAgo.toISOString()}`,
    },
  ];
  const keep = process.env.FILTERS?.split(',');
  return keep ? all.filter((s) => keep.includes(s.name)) : all;
}

/** CPU ticks a process has used: its main thread (whose id is the pid) and all its threads. */
function cpuTicks(pid: number) {
  const ticks = (path: string) => {
    // Fields after the command name (which is in parentheses and may hold spaces): utime and stime are 12 and 13.
    const fields = readFileSync(path, 'utf8').split(') ')[1]!.split(' ');
    return Number(fields[11]) + Number(fields[12]);
  };
  return { main: ticks(`/proc/${pid}/task/${pid}/stat`), all: ticks(`/proc/${pid}/stat`) };
}

/** Read and write system calls a process has made (each socket read or write is one). */
function syscalls(pid: number) {
  const io = Object.fromEntries(
    readFileSync(`/proc/${pid}/io`, 'utf8')
      .trim()
      .split('\n')
      .map((line) => line.split(': ')),
  ) as Record<string, string>;
  return Number(io.syscr) + Number(io.syscw);
}

interface Window {
  rps: number;
  p50: number;
  /** µs of CPU per request: the server's main thread, and its whole process. */
  mainCpu: number;
  processCpu: number;
  /** Read and write system calls per request. */
  syscalls: number;
}

async function loadWindow(server: ChildServer, url: string, apiKey: string, duration: number): Promise<Window> {
  const before = cpuTicks(server.pid);
  const callsBefore = syscalls(server.pid);
  const result = await autocannon({
    url,
    connections: CONNECTIONS,
    duration,
    headers: { authorization: `Bearer ${apiKey}` },
  });
  const after = cpuTicks(server.pid);
  const callsAfter = syscalls(server.pid);
  const failed = result.non2xx + result.errors;
  if (failed) throw new Error(`${url}: ${failed} failed requests`);
  const requests = result.requests.total;
  const perRequest = (ticks: number) => (ticks * (1_000_000 / TICKS_PER_SECOND)) / requests;
  return {
    rps: requests / result.duration,
    p50: result.latency.p50,
    mainCpu: perRequest(after.main - before.main),
    processCpu: perRequest(after.all - before.all),
    syscalls: (callsAfter - callsBefore) / requests,
  };
}

interface ChildServer {
  pid: number;
  port: number;
  keyLookupPerRequest: boolean;
  stop(): Promise<void>;
}

/** This script in a child process (`--app` or `--bare`), answering its port as one JSON line on stdout. */
async function startChild(role: '--app' | '--bare', env: Record<string, string>, nodeArgs: string[] = []) {
  const extra = process.env.SERVER_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
  const child = spawn(
    process.execPath,
    [...extra, ...nodeArgs, '--import', 'tsx', fileURLToPath(import.meta.url), role],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, ...env },
    },
  );
  let output = '';
  const ready = await new Promise<{ port: number; keyLookupPerRequest: boolean }>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk;
      const line = output.split('\n').find((l) => l.startsWith('{'));
      if (line && output.includes('\n')) resolve(JSON.parse(line));
    });
    child.on('exit', (code) => reject(new Error(`${role} exited with ${code}: ${output}`)));
  });
  return {
    pid: child.pid!,
    ...ready,
    stop: () =>
      new Promise<void>((resolve) => {
        child.removeAllListeners('exit');
        child.on('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  } satisfies ChildServer;
}

/** The app as `npm start` serves it, on the bench database (REDIS_URL in the environment or not). */
async function serveApp() {
  const config = loadConfig({
    DATABASE_URL: process.env.DATABASE_URL!,
    LOG_LEVEL: 'silent',
    ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {}),
  });
  const infra = await openInfrastructure(config, { redisKeyPrefix: `parley-bench:${Date.now()}:` });
  const { app } = await buildApp({ config, ...infra, clock: systemClock, logger: false });
  await app.listen({ host: '127.0.0.1', port: 0 });
  process.on('SIGTERM', () => {
    void (async () => {
      await app.close();
      await infra.close();
      process.exit(0);
    })();
  });
  const { port } = app.server.address() as AddressInfo;
  console.log(JSON.stringify({ port, keyLookupPerRequest: !infra.bus.reachesAllInstances }));
}

/**
 * A bare node:http server that sends each filter's statements through pg (the app's pool size) and answers the
 * rows as JSON: the floor for serving this SQL over HTTP on this machine. The path is the filter's name.
 */
async function serveBare() {
  const statements = JSON.parse(process.env.BARE_STATEMENTS!) as Record<string, RequestStatements>;
  const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.BARE_POOL_SIZE) });
  const answer = async (res: ServerResponse, request: RequestStatements) => {
    if (request.lookup) await pool.query(request.lookup.sql, request.lookup.parameters as unknown[]);
    const [page, total] = await Promise.all(
      request.concurrent.map((q) => pool.query(q.sql, q.parameters as unknown[])),
    );
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ calls: page!.rows, total: total?.rows[0], limit: 25, offset: 0 }));
  };
  const server = createServer((req, res) => {
    const request = statements[(req.url ?? '/').slice(1).split('?')[0]!];
    if (!request) {
      res.writeHead(404).end();
      return;
    }
    answer(res, request).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500);
      res.end(String(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  process.on('SIGTERM', () => {
    server.closeAllConnections();
    server.close();
    void pool.end().finally(() => process.exit(0));
  });
  console.log(JSON.stringify({ port: (server.address() as AddressInfo).port, keyLookupPerRequest: false }));
}

/**
 * Every statement one request sends in steady state, recorded by running the same repo functions the request
 * runs: the API-key lookup (unless the app caches resolved keys, as it does with Redis), then page and `total`.
 */
async function recordEndpointSql(
  databaseUrl: string,
  apiKey: string,
  accountId: string,
  filters: CallFilters,
  keyLookupPerRequest: boolean,
): Promise<RequestStatements> {
  const recorded: Statement[] = [];
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

interface Sides {
  app: Window[];
  bare: Window[];
}

function report(label: string, total: number, sides: Sides, loads: string[]) {
  const rps = (w: Window[]) => w.map((x) => x.rps);
  const main = (w: Window[]) => w.map((x) => x.mainCpu);
  const all = (w: Window[]) => w.map((x) => x.processCpu);
  // Pairwise: each app window against the bare window next to it, so a change of load hits both alike.
  const pairs = sides.app.map((a, i) => [a, sides.bare[i]!] as const);
  const rpsRatio = pairs.map(([a, b]) => a.rps / b.rps);
  const cpuRatio = pairs.map(([a, b]) => b.mainCpu / a.mainCpu);
  const processRatio = pairs.map(([a, b]) => b.processCpu / a.processCpu);
  console.log(`  ${label} (total ${total.toLocaleString('en')}; load ${loads.join(' → ')})`);
  for (const side of ['app', 'bare'] as const) {
    const w = sides[side];
    console.log(
      `    ${side.padEnd(4)} req/s ${spread(rps(w))}, p50 ${ms(median(w.map((x) => x.p50)))}; ` +
        `µs CPU/req main thread ${spread(main(w))}, process ${spread(all(w))}   (min / median / max); ` +
        `${median(w.map((x) => x.syscalls)).toFixed(1)} reads+writes/req`,
    );
  }
  console.log(
    `    app ÷ bare: req/s ${spread(rpsRatio, 2)}; CPU/req (bare ÷ app) main thread ${spread(cpuRatio, 2)}, ` +
      `process ${spread(processRatio, 2)}`,
  );
}

/** For each filter: a warm-up window each, then PAIRS pairs of windows alternating which side goes first. */
async function compare(
  app: ChildServer,
  bare: ChildServer,
  apiKey: string,
  scenarioList: Scenario[],
  totals: Map<string, number>,
) {
  for (const scenario of scenarioList) {
    const appUrl = `http://127.0.0.1:${app.port}/api/v1/calls?limit=25&${scenario.query}`;
    const bareUrl = `http://127.0.0.1:${bare.port}/${scenario.name}`;
    const sides: Sides = { app: [], bare: [] };
    const run = {
      app: () => loadWindow(app, appUrl, apiKey, SECONDS),
      bare: () => loadWindow(bare, bareUrl, apiKey, SECONDS),
    };
    await run.app();
    await run.bare();
    const loads = [load()];
    for (let pair = 0; pair < PAIRS; pair++) {
      const order = pair % 2 === 0 ? (['app', 'bare'] as const) : (['bare', 'app'] as const);
      for (const side of order) sides[side].push(await run[side]());
    }
    loads.push(load());
    report(scenario.label, totals.get(scenario.name)!, sides, loads);
  }
}

/** Sequential timings of one async operation: median and mean. */
async function timeIt(runs: number, operation: () => Promise<unknown>) {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await operation();
    times.push(performance.now() - t0);
  }
  return { p50: median(times), mean: times.reduce((s, x) => s + x, 0) / times.length };
}

/** `total` alone: the trigger-kept counts table against a plain count(*) of the same rows, checking they agree. */
async function compareTotals(repo: ReturnType<typeof callQueries>, accountId: string, agentId: string) {
  const all = scenarios(agentId);
  const counted = all.filter((s) => s.name !== 'date');
  counted.push({ name: 'recording', label: 'hasRecording=false', filters: { hasRecording: false }, query: '' });
  for (const { label, filters } of counted) {
    const counts = await timeIt(200, () => repo.countFromCounts(accountId, filters));
    const scan = await timeIt(10, () => repo.countByScan(accountId, filters));
    const [fromCounts, fromScan] = [
      await repo.countFromCounts(accountId, filters),
      await repo.countByScan(accountId, filters),
    ];
    if (fromCounts !== fromScan)
      throw new Error(`${label}: counts table says ${fromCounts}, count(*) says ${fromScan}`);
    console.log(
      `  ${label}: counts table p50 ${ms(counts.p50)} (mean ${ms(counts.mean)}) vs count(*) p50 ${ms(scan.p50)} (mean ${ms(scan.mean)})` +
        `: ${(scan.p50 / counts.p50).toFixed(0)}x; both say ${fromCounts.toLocaleString('en')}`,
    );
  }
  const date = all.find((s) => s.name === 'date');
  if (date) {
    const scan = await timeIt(10, () => repo.countByScan(accountId, date.filters));
    console.log(`  ${date.label}: p50 ${ms(scan.p50)} (mean ${ms(scan.mean)})`);
  }
}

async function main(databaseUrl: string) {
  // Migrations, the account and its key, from an app in this process that never listens.
  const config = loadConfig({ DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent' });
  const infra = await openInfrastructure(config);
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

    const repo = callQueries(db);
    const firstAgent = await db
      .selectFrom('agents')
      .select('id')
      .where('account_id', '=', owner.accountId)
      .orderBy('id')
      .executeTakeFirstOrThrow();
    const scenarioList = scenarios(firstAgent.id);
    const totals = new Map<string, number>();
    for (const s of scenarioList) totals.set(s.name, await repo.count(owner.accountId, s.filters));

    const redisUrl = process.env.REDIS_URL;
    const modes = redisUrl ? [null, redisUrl] : [null];
    for (const redis of modes) {
      const profile = process.env.PROFILE;
      const appServer = await startChild(
        '--app',
        { DATABASE_URL: databaseUrl, REDIS_URL: redis ?? '' },
        profile ? ['--cpu-prof', `--cpu-prof-dir=${profile}/app`] : [],
      );
      const statements: Record<string, RequestStatements> = {};
      for (const s of scenarioList) {
        statements[s.name] = await recordEndpointSql(
          databaseUrl,
          owner.apiKey,
          owner.accountId,
          s.filters,
          appServer.keyLookupPerRequest,
        );
      }
      const bareServer = await startChild(
        '--bare',
        {
          DATABASE_URL: databaseUrl,
          BARE_STATEMENTS: JSON.stringify(statements),
          BARE_POOL_SIZE: String(config.databasePoolSize),
        },
        profile ? ['--cpu-prof', `--cpu-prof-dir=${profile}/bare`] : [],
      );
      console.log(
        `\nGET /api/v1/calls?limit=25 ${redis ? 'with Redis (API keys cached, rate-limit tokens leased)' : 'without Redis (API keys looked up on every request)'}; ` +
          `${CONNECTIONS} connections, ${PAIRS} pairs of ${SECONDS} s windows (app, bare, bare, app, …), pool ${config.databasePoolSize}`,
      );
      try {
        await compare(appServer, bareServer, owner.apiKey, scenarioList, totals);
      } finally {
        await Promise.all([appServer.stop(), bareServer.stop()]);
      }
    }

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

if (process.argv[2] === '--app') await serveApp();
else if (process.argv[2] === '--bare') await serveBare();
else {
  if (!process.env.DATABASE_URL) {
    console.error('bench/calls-list.ts needs DATABASE_URL (a PostgreSQL server it may create a database on)');
    process.exit(2);
  }
  const database = await createBenchDatabase(process.env.DATABASE_URL);
  const startedAt = performance.now();
  try {
    await main(database.url);
  } finally {
    await database.drop();
    console.log(`\nbench database dropped; whole run ${seconds(startedAt)}`);
  }
}
