/**
 * On embedded PGlite (one connection, run on the main thread), how long does one account's heavy
 * request make another account wait? Tenant B lists its contacts (GET /v1/contacts?limit=25) every
 * 10 ms from this process while the app (a child process) serves, in turn:
 *
 *   1. tenant A importing a 200,000-row CSV (the contacts-import benchmark's generator);
 *   2. tenant C importing a 50,000-row CSV ten times in parallel;
 *   3. tenant A searching its 200,000 contacts with the longest `q` the API takes, and with 200 characters.
 *
 *   npx tsx bench/tenant-wait.ts             (IMPORT_ROWS=200000 PARALLEL_ROWS=50000 PARALLEL=10; ~3 min)
 *   DATABASE_URL=postgres://... npx tsx bench/tenant-wait.ts      (the same on PostgreSQL)
 */
import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generate } from './contacts-import.js';
import { call, probeLoop, startServer } from './server-process.js';

const IMPORT_ROWS = Number(process.env.IMPORT_ROWS ?? 200_000);
const PARALLEL_ROWS = Number(process.env.PARALLEL_ROWS ?? 50_000);
const PARALLEL = Number(process.env.PARALLEL ?? 10);

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'parley-tenant-wait-'));
  const server = await startServer({ tenants: 3 });
  try {
    const [a, b, c] = server.tenants as [
      (typeof server.tenants)[0],
      (typeof server.tenants)[0],
      (typeof server.tenants)[0],
    ];
    const { port } = server;
    await call(port, {
      method: 'POST',
      path: '/api/v1/contact-lists?name=b',
      key: b.key,
      contentType: 'text/csv',
      body: 'phone,name\n+14155550100,Bea\n+14155550101,Ben\n',
    });
    const other = () => call(port, { path: '/api/v1/contacts?limit=25', key: b.key });
    const measure = async (label: string, work: () => Promise<string>) => {
      for (let i = 0; i < 20; i++) await other();
      const probe = probeLoop(other);
      const started = performance.now();
      const outcome = await work();
      const seconds = ((performance.now() - started) / 1000).toFixed(2);
      const wait = await probe.stop();
      console.log(
        `  ${label.padEnd(44)} ${seconds} s; ${outcome}; tenant B's list: p50 ${wait.p50} ms, p99 ${wait.p99} ms, max ${wait.max} ms over ${wait.count} calls ${JSON.stringify(wait.statuses)}`,
      );
    };
    const importFile = async (key: string, body: Buffer, name: string) => {
      const result = await call(port, {
        method: 'POST',
        path: `/api/v1/contact-lists?name=${name}`,
        key,
        contentType: 'text/csv',
        body,
      });
      return result.status === 200
        ? `200 ${JSON.stringify(JSON.parse(result.body).counts)}`
        : `${result.status} ${result.body.slice(0, 160)}`;
    };

    console.log(`${process.env.DATABASE_URL ? 'PostgreSQL' : 'PGlite'}; tenant B lists 25 contacts every 10 ms`);
    await measure('idle, 3 s', async () => {
      await new Promise((resolve) => setTimeout(resolve, 3000));
      return 'nothing else running';
    });

    const bigPath = join(dir, 'big.csv');
    await generate(bigPath, IMPORT_ROWS);
    const big = readFileSync(bigPath);
    await measure(`A imports ${IMPORT_ROWS.toLocaleString('en-US')} rows`, () => importFile(a.key, big, 'big'));

    const smallPath = join(dir, 'small.csv');
    await generate(smallPath, PARALLEL_ROWS);
    const small = readFileSync(smallPath);
    await measure(`C imports ${PARALLEL_ROWS.toLocaleString('en-US')} rows ×${PARALLEL} in parallel`, async () => {
      const results = await Promise.all(
        Array.from({ length: PARALLEL }, (_, i) => importFile(c.key, small, `parallel-${i}`)),
      );
      const ok = results.filter((r) => r.startsWith('200')).length;
      return `${ok}/${PARALLEL} answered 200${ok < PARALLEL ? `; first failure: ${results.find((r) => !r.startsWith('200'))}` : ''}`;
    });

    for (const length of [100, 200]) {
      const q = 'Company 12 Last99 person@example.com '.repeat(10).slice(0, length);
      await measure(`A searches q of ${length} characters`, async () => {
        const result = await call(port, { path: `/api/v1/contacts?limit=25&q=${encodeURIComponent(q)}`, key: a.key });
        return `${result.status} ${result.status === 200 ? `total ${JSON.parse(result.body).total}` : result.body.slice(0, 120)}`;
      });
    }
    await measure('A searches q "last1234" (substring)', async () => {
      const result = await call(port, { path: `/api/v1/contacts?limit=25&q=last1234`, key: a.key });
      return `${result.status} total ${JSON.parse(result.body).total}`;
    });
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
