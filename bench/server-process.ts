/**
 * The real app in a child process of its own, for benchmarks that measure how one client's request
 * affects another's: the load and the probes run in the parent, so the parent's own event loop is
 * never what is measured.
 *
 *   const server = await startServer({ tenants: 2 });   // PGlite in a temporary directory
 *   ... requests to server.port with server.tenants[i].key ...
 *   await server.stop();
 *
 * The child registers the tenants (one account and API key each) and prints them as one JSON line.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';

export interface Tenant {
  key: string;
  accountId: string;
}

export interface ServerProcess {
  port: number;
  tenants: Tenant[];
  stop(): Promise<void>;
}

/** Starts the app on a free port; DATABASE_URL in env selects PostgreSQL (a database of its own), else PGlite. */
export async function startServer(options: { tenants: number; env?: Record<string, string> }): Promise<ServerProcess> {
  const script = fileURLToPath(import.meta.url);
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', script, '--serve', String(options.tenants)], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, ...options.env },
  });
  let output = '';
  const ready = await new Promise<{ port: number; tenants: Tenant[] }>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk;
      const line = output.split('\n').find((l) => l.startsWith('{'));
      if (line && output.includes('\n')) resolve(JSON.parse(line));
    });
    child.on('exit', (code) => reject(new Error(`server exited with ${code}: ${output}`)));
  });
  return {
    ...ready,
    stop: () =>
      new Promise<void>((resolve) => {
        child.removeAllListeners('exit');
        child.on('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

async function serve(tenantCount: number) {
  const { loadConfig } = await import('../src/config.js');
  const { buildApp } = await import('../src/app.js');
  const { openInfrastructure } = await import('../src/runtime.js');
  const { systemClock } = await import('../src/lib/clock.js');
  const pg = (await import('pg')).default;
  const dataDir = mkdtempSync(join(tmpdir(), 'parley-bench-'));
  let databaseUrl: string | undefined;
  let dropDatabase = async () => {};
  if (process.env.DATABASE_URL) {
    const name = `parley_bench_${randomBytes(4).toString('hex')}`;
    const admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.end();
    const url = new URL(process.env.DATABASE_URL);
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
    RATE_LIMIT_PER_MINUTE: '1000000',
    ANON_RATE_LIMIT_PER_MINUTE: '1000000',
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
  });
  const infra = await openInfrastructure(config);
  const { app } = await buildApp({ config, ...infra, clock: systemClock, logger: false } as Parameters<
    typeof buildApp
  >[0]);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const tenants: Tenant[] = [];
  for (let i = 0; i < tenantCount; i++) {
    const email = `bench-${randomBytes(4).toString('hex')}@example.com`;
    const register = await app.inject({
      method: 'POST',
      url: '/api/v1/auth/register',
      payload: { email, password: 'correct horse battery' },
    });
    const cookie = `vsid=${register.cookies.find((c) => c.name === 'vsid')!.value}`;
    const key = (
      await app.inject({ method: 'POST', url: '/api/v1/api-keys', headers: { cookie }, payload: { name: 'bench' } })
    ).json().key as string;
    tenants.push({ key, accountId: register.json().accountId });
  }
  process.on('SIGTERM', () => {
    void (async () => {
      await app.close();
      await infra.close();
      await dropDatabase();
      rmSync(dataDir, { recursive: true, force: true });
      process.exit(0);
    })();
  });
  console.log(JSON.stringify({ port: (app.server.address() as { port: number }).port, tenants }));
}

/** One HTTP request; resolves with the status, the body and how long it took (ms). */
export function call(
  port: number,
  options: { method?: string; path: string; key?: string; contentType?: string; body?: string | Buffer },
): Promise<{ status: number; body: string; ms: number }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = {};
    if (options.key) headers.authorization = `Bearer ${options.key}`;
    if (options.contentType) headers['content-type'] = options.contentType;
    if (options.body !== undefined) headers['content-length'] = Buffer.byteLength(options.body);
    const req = request(
      { host: '127.0.0.1', port, method: options.method ?? 'GET', path: options.path, headers, agent: false },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text, ms: performance.now() - started }));
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

/** Calls `probe` back to back (with `pauseMs` between calls) until stop() is called; returns every latency. */
export function probeLoop(probe: () => Promise<{ ms: number; status: number }>, pauseMs = 10) {
  const latencies: number[] = [];
  const statuses = new Map<number, number>();
  let running = true;
  const done = (async () => {
    while (running) {
      const { ms, status } = await probe();
      latencies.push(ms);
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
      await new Promise((resolve) => setTimeout(resolve, pauseMs));
    }
  })();
  return {
    async stop() {
      running = false;
      await done;
      return summarize(latencies, statuses);
    },
  };
}

export function summarize(latencies: number[], statuses = new Map<number, number>()) {
  const sorted = [...latencies].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
  return {
    count: sorted.length,
    p50: Math.round(at(0.5)),
    p99: Math.round(at(0.99)),
    max: Math.round(sorted[sorted.length - 1] ?? 0),
    statuses: Object.fromEntries(statuses),
  };
}

if (process.argv[2] === '--serve') await serve(Number(process.argv[3]));
