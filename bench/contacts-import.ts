/**
 * Contact import benchmark: POST /v1/contact-lists with a generated CSV over real HTTP, on PostgreSQL
 * (DATABASE_URL) and on PGlite, at 100k and 1M rows; against the floor of PostgreSQL COPY of the same
 * file into a bare table (psql \copy), timed right before and right after each import (ABBA).
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npx tsx bench/contacts-import.ts [rows...]
 *   MODES=pglite ... (only PGlite; the COPY floor still needs DATABASE_URL)
 *
 * Besides wall time it prints the CPU time of the app's process during the import (PGlite runs inside it),
 * which moves far less than wall time when other work shares the machine.
 * Each import runs in a child process of its own (V8 old space capped at 128 MB), so its peak RSS
 * (getrusage maxRSS) is its own. While
 * an import runs, a probe runs `SELECT 1` every 50 ms through the app's database: its slowest answer is
 * how long the import kept the database from everyone else.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createReadStream, createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { request } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { sql } from 'kysely';

const AREAS = ['212', '415', '312', '617', '206', '303', '512', '646', '718', '404'];
const FORMATS = [
  (a: string, e: string, l: string) => `(${a}) ${e}-${l}`,
  (a: string, e: string, l: string) => `+1 ${a} ${e} ${l}`,
  (a: string, e: string, l: string) => `${a}.${e}.${l}`,
  (a: string, e: string, l: string) => `+1${a}${e}${l}`,
  (a: string, e: string, l: string) => `${a}-${e}-${l}`,
];

/** Row i's phone: mostly US numbers in assorted formats, some international, ~1% repeats, ~2% junk. */
function phoneOf(i: number): string {
  if (i % 50 === 7) return i % 100 === 7 ? 'n/a' : `555-01${i % 10}`;
  if (i % 100 === 13 && i > 1000) return phoneOf(i - 1000);
  if (i % 20 === 3)
    return i % 40 === 3
      ? `+44 7911 ${String(i % 1000000).padStart(6, '0')}`
      : `+49 151 2${String(i % 10000000).padStart(7, '0')}`;
  const j = Math.floor(i / 10000);
  return FORMATS[i % FORMATS.length]!(
    AREAS[j % 10]!,
    String(234 + Math.floor(j / 10)),
    String(i % 10000).padStart(4, '0'),
  );
}

export async function generate(path: string, rows: number) {
  const out = createWriteStream(path);
  let chunk = 'Record ID,First Name,Last Name,Email,Phone Number,Company Name,Lifecycle Stage\n';
  for (let i = 0; i < rows; i++) {
    chunk += `${i},First${i},Last${i},person${i}@example.com,${phoneOf(i)},Company ${i % 5000},${i % 3 ? 'lead' : 'customer'}\n`;
    if (chunk.length > 1 << 20) {
      if (!out.write(chunk)) await once(out, 'drain');
      chunk = '';
    }
  }
  out.end(chunk);
  await once(out, 'finish');
}

/** The floor: COPY of the same file into a bare table of text columns on the same PostgreSQL. */
function copyFloor(databaseUrl: string, path: string): number {
  const table = `bench_copy_${randomBytes(4).toString('hex')}`;
  const psql = (command: string) =>
    spawnSync('psql', [databaseUrl, '-v', 'ON_ERROR_STOP=1', '-q', '-c', command], { encoding: 'utf8' });
  const created = psql(`CREATE TABLE ${table} (a text, b text, c text, d text, e text, f text, g text)`);
  if (created.status !== 0) throw new Error(`psql failed: ${created.stderr}`);
  const started = performance.now();
  const copied = psql(`\\copy ${table} FROM '${path}' CSV HEADER`);
  const seconds = (performance.now() - started) / 1000;
  psql(`DROP TABLE ${table}`);
  if (copied.status !== 0) throw new Error(`COPY failed: ${copied.stderr}`);
  return seconds;
}

const loadAverage = () =>
  loadavg()
    .map((load) => load.toFixed(2))
    .join(' ');

interface ChildResult {
  seconds: number;
  /** CPU time of the app's process (all its threads, PGlite included) during the import: steadier than wall time on a busy machine. */
  cpuSeconds: number;
  status: number;
  counts: Record<string, number>;
  rssBeforeMb: number;
  maxRssMb: number;
  heapPeakMb: number;
  longestProbeMs: number;
}

/** One import, in this process: build the app, sign up, POST the file over HTTP, report. */
async function child(mode: 'pglite' | 'postgres', path: string) {
  const { loadConfig } = await import('../src/config.js');
  const { buildApp } = await import('../src/app.js');
  const { openInfrastructure } = await import('../src/runtime.js');
  const { systemClock } = await import('../src/lib/clock.js');
  const dataDir = mkdtempSync(join(tmpdir(), 'parley-bench-'));
  let dropDatabase = async () => {};
  let databaseUrl: string | undefined;
  if (mode === 'postgres') {
    const name = `parley_bench_${randomBytes(4).toString('hex')}`;
    const admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.end();
    const url = new URL(process.env.DATABASE_URL!);
    url.pathname = `/${name}`;
    databaseUrl = url.toString();
    dropDatabase = async () => {
      const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    };
  }
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    DATA_DIR: dataDir,
    CSV_BODY_LIMIT_BYTES: String(1024 * 1024 * 1024),
    RATE_LIMIT_PER_MINUTE: '100000',
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
  });
  const infra = await openInfrastructure(config);
  const { app } = await buildApp({ config, ...infra, clock: systemClock, logger: false } as Parameters<
    typeof buildApp
  >[0]);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const port = (app.server.address() as { port: number }).port;

  const register = await app.inject({
    method: 'POST',
    url: '/api/v1/auth/register',
    payload: { email: `bench-${randomBytes(4).toString('hex')}@example.com`, password: 'correct horse battery' },
  });
  const cookie = `vsid=${register.cookies.find((c) => c.name === 'vsid')!.value}`;
  const key = (
    await app.inject({ method: 'POST', url: '/api/v1/api-keys', headers: { cookie }, payload: { name: 'bench' } })
  ).json().key as string;

  const rssBeforeMb = Math.round(process.memoryUsage().rss / 1024 / 1024);
  let heapPeak = 0;
  const heapSampler = setInterval(() => (heapPeak = Math.max(heapPeak, process.memoryUsage().heapUsed)), 100);
  // The gap between two probe answers, less the 50 ms pause, counts both a held connection and a busy
  // event loop (PGlite runs each statement synchronously on the main thread).
  let probing = true;
  let longestProbeMs = 0;
  const probe = (async () => {
    let last = performance.now();
    while (probing) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      await sql`SELECT 1`.execute(infra.database.db);
      const now = performance.now();
      longestProbeMs = Math.max(longestProbeMs, now - last - 50);
      last = now;
    }
  })();

  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const { status, body } = await new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/api/v1/contact-lists?name=bench',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'text/csv', 'content-length': statSync(path).size },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on('error', reject);
    createReadStream(path).pipe(req);
  });
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  probing = false;
  await probe;
  clearInterval(heapSampler);

  await app.close();
  await infra.close();
  await dropDatabase();
  rmSync(dataDir, { recursive: true, force: true });
  const result: ChildResult = {
    seconds,
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    status,
    counts: status === 200 ? JSON.parse(body).counts : { error: body as unknown as number },
    rssBeforeMb,
    maxRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
    heapPeakMb: Math.round(heapPeak / 1024 / 1024),
    longestProbeMs: Math.round(longestProbeMs),
  };
  console.log(JSON.stringify(result));
}

function runChild(mode: string, path: string): Promise<ChildResult> {
  const script = fileURLToPath(import.meta.url);
  // A fixed old-space cap: V8 otherwise grows its heap lazily with the allocation rate, which hides whether
  // the working set is flat. The cap is the same at every size; an import that needed more would fail.
  const proc = spawn(process.execPath, ['--max-old-space-size=128', '--import', 'tsx', script, '--child', mode, path], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  proc.stdout.on('data', (chunk: Buffer) => (output += chunk));
  return new Promise((resolve, reject) => {
    proc.on('exit', (code) => {
      const line = output.trim().split('\n').pop() ?? '';
      if (code !== 0) reject(new Error(`child ${mode} exited with ${code}: ${output}`));
      else resolve(JSON.parse(line) as ChildResult);
    });
  });
}

async function main() {
  const args = process.argv.slice(2);
  if (args[0] === '--child') return child(args[1] as 'pglite' | 'postgres', args[2]!);
  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) throw new Error('Set DATABASE_URL: the COPY floor and the PostgreSQL run need a server');
  const sizes = args.filter((a) => /^\d+$/.test(a)).map(Number);
  if (sizes.length === 0) sizes.push(100_000, 1_000_000);
  const modes = (process.env.MODES ?? 'postgres,pglite').split(',') as Array<'postgres' | 'pglite'>;
  const dir = mkdtempSync(join(tmpdir(), 'parley-bench-csv-'));
  try {
    for (const rows of sizes) {
      const path = join(dir, `contacts-${rows}.csv`);
      await generate(path, rows);
      const mb = statSync(path).size / 1024 / 1024;
      console.log(`\n${rows.toLocaleString('en-US')} rows, ${mb.toFixed(1)} MB (load ${loadAverage()})`);
      // ABBA: COPY right before and right after each import, so the ratio compares runs under the same load.
      for (const mode of modes) {
        const copyBefore = copyFloor(databaseUrl, path);
        const result = await runChild(mode, path);
        const copyAfter = copyFloor(databaseUrl, path);
        if (result.status !== 200) throw new Error(`${mode} import failed: ${JSON.stringify(result)}`);
        const copySeconds = (copyBefore + copyAfter) / 2;
        const rate = rows / result.seconds;
        console.log(
          `  COPY into a bare table ${copyBefore.toFixed(2)} s before, ${copyAfter.toFixed(2)} s after = ${Math.round(rows / copySeconds).toLocaleString('en-US')} rows/s`,
        );
        console.log(
          `  ${mode.padEnd(8)} import ${result.seconds.toFixed(2)} s (CPU ${result.cpuSeconds.toFixed(2)} s) = ${Math.round(rate).toLocaleString('en-US')} rows/s` +
            ` = ${(result.seconds / copySeconds).toFixed(1)}x COPY (${((rate / (rows / copySeconds)) * 100).toFixed(1)}%); RSS ${result.rssBeforeMb} MB before, ${result.maxRssMb} MB peak (JS heap peak ${result.heapPeakMb} MB);` +
            ` longest stall of another query ${result.longestProbeMs} ms; load ${loadAverage()}; counts ${JSON.stringify(result.counts)}`,
        );
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// Run as a script (not when imported for its generator).
if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
