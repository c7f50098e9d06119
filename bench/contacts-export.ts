/**
 * On embedded PGlite (one connection, on the main thread), how long does one account's contact export or search make
 * another account wait? Tenant B lists its agents (GET /v1/agents) every 10 ms from this process while the app (a
 * child process) serves tenant A, who has imported CONTACTS contacts (the contacts-import benchmark's generator):
 *
 *   1. nothing (the baseline);
 *   2. A exporting every contact (GET /v1/exports/contacts.csv, read as fast as this process can);
 *   3. A searching: a word most contacts match, punctuation alone, a phrase of common words that matches nothing
 *      (the search's worst case: the index hands on every contact), and a rare word.
 *
 *   npx tsx bench/contacts-export.ts                 (CONTACTS=200000; ~2 min)
 *   DATABASE_URL=postgres://... npx tsx bench/contacts-export.ts      (the same on PostgreSQL)
 */
import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generate } from './contacts-import.js';
import { call, probeLoop, startServer } from './server-process.js';

const CONTACTS = Number(process.env.CONTACTS ?? 200_000);

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'parley-contacts-export-'));
  const server = await startServer({ tenants: 2 });
  try {
    const [a, b] = server.tenants as [(typeof server.tenants)[0], (typeof server.tenants)[0]];
    const { port } = server;
    const other = () => call(port, { path: '/api/v1/agents?limit=25', key: b.key });
    const measure = async (label: string, work: () => Promise<string>) => {
      for (let i = 0; i < 20; i++) await other();
      const probe = probeLoop(other);
      const started = performance.now();
      const outcome = await work();
      const seconds = ((performance.now() - started) / 1000).toFixed(2);
      const wait = await probe.stop();
      console.log(
        `  ${label.padEnd(40)} ${seconds} s; ${outcome}; tenant B's GET /v1/agents: p50 ${wait.p50} ms, p99 ${wait.p99} ms, max ${wait.max} ms over ${wait.count} calls ${JSON.stringify(wait.statuses)}`,
      );
    };

    const path = join(dir, 'contacts.csv');
    await generate(path, CONTACTS);
    const imported = await call(port, {
      method: 'POST',
      path: '/api/v1/contact-lists?name=big',
      key: a.key,
      contentType: 'text/csv',
      body: readFileSync(path),
    });
    if (imported.status !== 200) throw new Error(`import failed: ${imported.status} ${imported.body.slice(0, 200)}`);
    console.log(
      `${process.env.DATABASE_URL ? 'PostgreSQL' : 'PGlite'}; tenant A has ${CONTACTS.toLocaleString('en-US')} contacts (imported in ${(imported.ms / 1000).toFixed(1)} s); tenant B lists its agents every 10 ms`,
    );

    await measure('idle, 3 s', async () => {
      await new Promise((resolve) => setTimeout(resolve, 3000));
      return 'nothing else running';
    });
    await measure('A exports every contact', async () => {
      const result = await call(port, { path: '/api/v1/exports/contacts.csv', key: a.key });
      const lines = result.body.split('\r\n').length - 2;
      return `${result.status}, ${lines.toLocaleString('en-US')} rows, ${(result.body.length / 1024 / 1024).toFixed(1)} MB`;
    });
    for (const q of ['First1', '%_%', 'example com person', 'person199999']) {
      await measure(`A searches q=${q}`, async () => {
        const result = await call(port, { path: `/api/v1/contacts?limit=25&q=${encodeURIComponent(q)}`, key: a.key });
        if (result.status !== 200) return `${result.status} ${JSON.parse(result.body).error}`;
        const body = JSON.parse(result.body);
        return `200, total ${body.total}${body.totalExact === false ? ' (counting stopped)' : ''}`;
      });
    }
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
