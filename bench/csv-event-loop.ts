/**
 * Does a hostile CSV upload starve other requests? GET /api/health latency, probed every 10 ms from
 * this process, while the app (a child process, PGlite) parses a small file built to be slow to parse:
 * a one-column header followed by 250,000 lines of "," (500 KB), every row with more fields than the
 * header. Sent to both CSV endpoints, one after the other, and compared with the same probe while idle
 * and during a well-formed file of the same size.
 *
 *   npx tsx bench/csv-event-loop.ts          (ROWS=250000 by default; ~1 min)
 */
import { call, probeLoop, startServer } from './server-process.js';

const ROWS = Number(process.env.ROWS ?? 250_000);

async function main() {
  const server = await startServer({ tenants: 1 });
  const { port } = server;
  const key = server.tenants[0]!.key;
  const health = () => call(port, { path: '/api/health' });
  const ragged = `Phone\n${',\n'.repeat(ROWS)}`;
  // The same size, well formed: 250,000 two-field rows of one character each, the header with two fields.
  const regular = `Phone,x\n${',\n'.repeat(ROWS)}`;
  const uploads = [
    { label: 'idle (no upload)', path: null, body: '' },
    { label: 'POST /v1/contact-lists, well-formed 500 KB', path: '/api/v1/contact-lists?name=regular', body: regular },
    { label: 'POST /v1/contact-lists, ragged 500 KB', path: '/api/v1/contact-lists?name=ragged', body: ragged },
    { label: 'POST /v1/dnc/bulk, ragged 500 KB', path: '/api/v1/dnc/bulk', body: ragged },
  ];
  console.log(
    `${ROWS.toLocaleString('en-US')} rows, ${(ragged.length / 1024).toFixed(0)} KB; /api/health probed every 10 ms`,
  );
  for (const upload of uploads) {
    for (let i = 0; i < 20; i++) await health(); // warm
    const probe = probeLoop(health);
    let uploadLine = '';
    if (upload.path) {
      const result = await call(port, {
        method: 'POST',
        path: upload.path,
        key,
        contentType: 'text/csv',
        body: upload.body,
      });
      uploadLine = `upload ${Math.round(result.ms)} ms (HTTP ${result.status} ${result.body.slice(0, 80)})`;
    } else {
      await new Promise((resolve) => setTimeout(resolve, 3000));
    }
    const latency = await probe.stop();
    console.log(
      `  ${upload.label.padEnd(46)} health p50 ${latency.p50} ms, p99 ${latency.p99} ms, max ${latency.max} ms over ${latency.count} probes; ${uploadLine}`,
    );
  }
  await server.stop();
}

await main();
