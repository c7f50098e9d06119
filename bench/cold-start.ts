/**
 * Cold start of the real server on embedded PGlite, against a bare node:http server started the same way.
 *
 *   npx tsx bench/cold-start.ts            (RUNS=3 by default)
 *
 * Each run spawns `node --import tsx src/main.ts` (role all) on a free port and polls GET /api/health
 * until the first 200, then waits IDLE_MS and reads the process's resident memory, then sends SIGTERM
 * and times the exit. "fresh" starts on an empty data directory (initdb, every migration, the job
 * queue's schema); "existing" restarts on the directory the fresh run left behind. The baseline is this
 * same file re-run as a bare node:http server (`--bare-server`), with the same loader; a second
 * reference adds only PGlite to it (`--with-pglite`), to show what the embedded database costs by
 * itself. The compiled build (`npm run build`, then `node dist/main.js`, no loader) is measured the same way.
 * Medians are printed, with ratios against the bare baseline; the built server's ratio to its floor is taken within
 * each run (the floor measured just before and after it, A B A) and printed as min / median / max.
 *
 * With DATABASE_URL, the built server is also started on PostgreSQL (a scratch database, migrated by the first start,
 * dropped at the end), against the floor of a bare node:http server that connects with `pg` and answers after a
 * SELECT 1.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, get } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const RUNS = Number(process.env.RUNS ?? 3);
const IDLE_MS = Number(process.env.IDLE_MS ?? 2000);
const POLL_MS = 10;

if (process.argv.includes('--bare-server')) {
  await serveBare(
    process.argv.includes('--with-pglite') ? 'pglite' : process.argv.includes('--with-pg') ? 'postgres' : 'none',
  );
} else {
  await main();
}

/**
 * The baseline: the least a Node HTTP service can be, answering 200 on the same path. With a database it first opens
 * PGlite on DATA_DIR (or connects to DATABASE_URL) and answers after a SELECT 1: the floor for any service using it.
 */
async function serveBare(database: 'none' | 'pglite' | 'postgres') {
  let query: () => Promise<unknown> = () => Promise.resolve();
  let close: () => Promise<unknown> = () => Promise.resolve();
  if (database === 'pglite') {
    const pglite = new (await import('@electric-sql/pglite')).PGlite(process.env.DATA_DIR);
    await pglite.waitReady;
    query = () => pglite.query('SELECT 1');
    close = () => pglite.close();
  } else if (database === 'postgres') {
    const client = new (await import('pg')).default.Client(process.env.DATABASE_URL);
    await client.connect();
    query = () => client.query('SELECT 1');
    close = () => client.end();
  }
  const server = createServer((_req, res) => {
    void query().then(() => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"status":"ok"}');
    });
  });
  server.listen(Number(process.env.PORT), '127.0.0.1');
  process.on('SIGTERM', () => server.close(() => void close().then(() => process.exit(0))));
}

interface Sample {
  readyMs: number;
  rssMb: number;
  exitMs: number;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

function healthy(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const req = get({ host: '127.0.0.1', port, path: '/api/health', agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode === 200));
    });
    req.on('error', () => resolve(false));
  });
}

function residentMb(pid: number) {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'));
  return Number(line!.replace(/\D+/g, '')) / 1024;
}

/**
 * Spawns `node --import tsx <args>` (or `node <args>` for the compiled build), times the first healthy answer, idle
 * RSS, and the exit after SIGTERM.
 */
async function measure(args: string[], env: Record<string, string>, loader = true): Promise<Sample> {
  const port = await freePort();
  // PGlite unless the caller names a database.
  const { DATABASE_URL: _db, REDIS_URL: _redis, ...inherited } = process.env;
  const started = performance.now();
  const child = spawn(process.execPath, loader ? ['--import', 'tsx', ...args] : args, {
    cwd: ROOT,
    env: { ...inherited, HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  // The log (stdout, warn and above) is only shown if the start fails: it says why.
  let log = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (log = (log + chunk).slice(-4000)));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  let exitCode: number | null | undefined;
  void exited.then((code) => (exitCode = code));
  while (!(await healthy(port))) {
    if (exitCode !== undefined)
      throw new Error(`${args.join(' ')} exited with ${exitCode} before it was healthy; its log:\n${log}`);
    await sleep(POLL_MS);
  }
  const readyMs = performance.now() - started;
  await sleep(IDLE_MS);
  const rssMb = residentMb(child.pid!);
  const stopping = performance.now();
  child.kill('SIGTERM');
  const code = await exited;
  if (code !== 0) throw new Error(`${args.join(' ')} exited with ${code} after SIGTERM; its log:\n${log}`);
  return { readyMs, rssMb, exitMs: performance.now() - stopping };
}

function median(values: number[]) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function summarize(samples: Sample[]) {
  return {
    readyMs: median(samples.map((s) => s.readyMs)),
    rssMb: median(samples.map((s) => s.rssMb)),
    exitMs: median(samples.map((s) => s.exitMs)),
  };
}

function spread(values: number[]) {
  const sorted = [...values].sort((a, b) => a - b);
  return `${sorted[0]!.toFixed(2)} / ${median(sorted).toFixed(2)} / ${sorted.at(-1)!.toFixed(2)}`;
}

/** A scratch database on DATABASE_URL's server for the PostgreSQL runs, dropped by the returned function. */
async function scratchDatabase(serverUrl: string) {
  const pg = (await import('pg')).default;
  const name = `parley_cold_start_${process.pid}`;
  const admin = new pg.Client(serverUrl);
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${name}`);
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    },
  };
}

async function main() {
  const baseline: Sample[] = [];
  const pgliteFresh: Sample[] = [];
  const pgliteExisting: Sample[] = [];
  const fresh: Sample[] = [];
  const existing: Sample[] = [];
  const builtFresh: Sample[] = [];
  const builtExisting: Sample[] = [];
  const builtToFloor: number[] = [];
  const pgFloor: Sample[] = [];
  const builtPg: Sample[] = [];
  const builtPgToFloor: number[] = [];
  if (!existsSync(join(ROOT, 'dist/main.js'))) throw new Error('dist/main.js is missing: run `npm run build` first');
  const withDataDir = async (use: (dataDir: string) => Promise<void>) => {
    const dataDir = await mkdtemp(join(tmpdir(), 'parley-bench-cold-'));
    try {
      await use(dataDir);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  };
  const scratch = process.env.DATABASE_URL ? await scratchDatabase(process.env.DATABASE_URL) : null;
  try {
    // The first start on the scratch database migrates it; every measured start finds it migrated.
    const pgEnv = scratch
      ? { DATABASE_URL: scratch.url, DATA_DIR: await mkdtemp(join(tmpdir(), 'parley-bench-cold-pg-')) }
      : null;
    if (pgEnv) await measure(['dist/main.js'], pgEnv, false);
    for (let run = 0; run < RUNS; run++) {
      baseline.push(await measure(['bench/cold-start.ts', '--bare-server'], {}));
      await withDataDir(async (dataDir) => {
        fresh.push(await measure(['src/main.ts'], { DATA_DIR: dataDir }));
        existing.push(await measure(['src/main.ts'], { DATA_DIR: dataDir }));
      });
      await withDataDir(async (dataDir) => {
        builtFresh.push(await measure(['dist/main.js'], { DATA_DIR: dataDir }, false));
        const floorBefore = await measure(['bench/cold-start.ts', '--bare-server', '--with-pglite'], {
          DATA_DIR: dataDir,
        });
        const built = await measure(['dist/main.js'], { DATA_DIR: dataDir }, false);
        const floorAfter = await measure(['bench/cold-start.ts', '--bare-server', '--with-pglite'], {
          DATA_DIR: dataDir,
        });
        builtExisting.push(built);
        pgliteExisting.push(floorBefore, floorAfter);
        builtToFloor.push(built.readyMs / ((floorBefore.readyMs + floorAfter.readyMs) / 2));
      });
      await withDataDir(async (dataDir) => {
        pgliteFresh.push(
          await measure(['bench/cold-start.ts', '--bare-server', '--with-pglite'], { DATA_DIR: dataDir }),
        );
      });
      if (pgEnv) {
        const env = pgEnv;
        const floorBefore = await measure(['bench/cold-start.ts', '--bare-server', '--with-pg'], env);
        const built = await measure(['dist/main.js'], env, false);
        const floorAfter = await measure(['bench/cold-start.ts', '--bare-server', '--with-pg'], env);
        builtPg.push(built);
        pgFloor.push(floorBefore, floorAfter);
        builtPgToFloor.push(built.readyMs / ((floorBefore.readyMs + floorAfter.readyMs) / 2));
      }
      console.log(`run ${run + 1}/${RUNS} done`);
    }
  } finally {
    await scratch?.drop();
  }

  const base = summarize(baseline);
  const rows: Array<[string, ReturnType<typeof summarize>]> = [
    ['bare node:http (baseline)', base],
    ['bare node:http + PGlite, fresh data dir', summarize(pgliteFresh)],
    ['bare node:http + PGlite, existing data dir', summarize(pgliteExisting)],
    ['parley, PGlite, fresh data dir', summarize(fresh)],
    ['parley, PGlite, existing data dir', summarize(existing)],
    ['parley built (node dist/main.js), PGlite, fresh data dir', summarize(builtFresh)],
    ['parley built (node dist/main.js), PGlite, existing data dir', summarize(builtExisting)],
  ];
  if (scratch) {
    rows.push(['bare node:http + pg, PostgreSQL', summarize(pgFloor)]);
    rows.push(['parley built (node dist/main.js), PostgreSQL', summarize(builtPg)]);
  }
  console.log(
    `\ncold start, median of ${RUNS} runs (node ${process.version}, loader tsx, idle ${IDLE_MS} ms before reading RSS)\n`,
  );
  console.log('| process | first 200 on /api/health | × baseline | idle RSS | × baseline | SIGTERM to exit |');
  console.log('|---|---|---|---|---|---|');
  for (const [name, s] of rows) {
    console.log(
      `| ${name} | ${s.readyMs.toFixed(0)} ms | ${(s.readyMs / base.readyMs).toFixed(2)} | ${s.rssMb.toFixed(1)} MB | ` +
        `${(s.rssMb / base.rssMb).toFixed(2)} | ${s.exitMs.toFixed(0)} ms |`,
    );
  }
  console.log(
    `\nbuilt, PGlite, existing data dir ÷ its floor in the same run, min / median / max: ${spread(builtToFloor)}`,
  );
  if (scratch)
    console.log(`built, PostgreSQL ÷ its floor in the same run, min / median / max: ${spread(builtPgToFloor)}`);
  console.log(
    `load average at the end: ${loadavg()
      .map((v) => v.toFixed(1))
      .join(' / ')}`,
  );
}
