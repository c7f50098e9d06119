/**
 * Webhooks: what a slow endpoint with a backlog costs another endpoint of the service.
 *
 *   npx tsx bench/webhooks-turns.ts      (PGlite unless DATABASE_URL is set)
 *
 * Two receivers in this process: a slow one that answers after SLOW_MS (default 2,000), and a quick one that records
 * how long each event took from its occurredAt to its arrival. A steady flow of FLOW events (one per transaction,
 * FLOW_PAUSE_MS apart) goes to the quick endpoint twice: alone (the baseline), then while BACKLOG events (default
 * 2,000) wait for the slow endpoint. The ratio of the two medians is the price of the slow neighbour.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg } from 'node:os';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';

const SLOW_MS = Number(process.env.SLOW_MS ?? 2_000);
const BACKLOG = Number(process.env.BACKLOG ?? 2_000);
const FLOW = Number(process.env.FLOW ?? 200);
const FLOW_PAUSE_MS = Number(process.env.FLOW_PAUSE_MS ?? 20);

/** A receiver answering after `delayMs`; it keeps each delivery's latency from its event's occurredAt. */
async function receiver(delayMs: number) {
  const latencies: number[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { occurredAt: string };
      latencies.push(Date.now() - Date.parse(body.occurredAt));
      setTimeout(() => res.writeHead(200).end('ok'), delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    latencies,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
const p99 = (values: number[]) => [...values].sort((a, b) => a - b)[Math.ceil(values.length * 0.99) - 1] ?? 0;

const { pino } = await import('pino');
const { buildTestApp, signUp } = await import('../test/helpers.js');
const { startJobWorkers } = await import('../src/background.js');
const { inTransaction } = await import('../src/db/repo.js');

const slow = await receiver(SLOW_MS);
const quick = await receiver(0);
const t = await buildTestApp({ env: { WEBHOOK_ALLOW_PRIVATE: 'true', RATE_LIMIT_PER_MINUTE: '100000' } });
const user = await signUp(t.app);
const endpointFor = async (url: string, events: string[]) => {
  const created = await t.app.inject({
    method: 'POST',
    url: '/api/v1/webhooks',
    headers: user.headers,
    payload: { url, events },
  });
  if (created.statusCode !== 200) throw new Error(created.body);
  return created.json().id as string;
};
const slowId = await endpointFor(slow.url, ['campaign.started']);
await endpointFor(quick.url, ['call.connected']);

const connected = (callId: string) => ({
  callId,
  agentId: null,
  contactId: null,
  direction: 'outbound',
  status: 'connected' as const,
  answeredBy: 'human' as const,
});

/** `count` events of `type`, `perTransaction` in each transaction, `pauseMs` between transactions. */
async function emit(type: 'campaign.started' | 'call.connected', count: number, perTransaction: number, pauseMs = 0) {
  for (let written = 0; written < count; written += perTransaction) {
    await inTransaction(t.infra.database.db, async (trx) => {
      for (let i = written; i < Math.min(count, written + perTransaction); i++) {
        const id = randomUUID();
        const base = { accountId: user.accountId, actor: null };
        await t.services.outbox(trx).emit(
          type === 'call.connected'
            ? { ...base, type, subject: { type: 'call', id }, data: connected(id) }
            : {
                ...base,
                type,
                subject: { type: 'campaign', id },
                data: { campaignId: id, name: `c${i}`, agentId: id },
              },
        );
      }
    });
    if (pauseMs > 0) await sleep(pauseMs);
  }
}

/** The quick endpoint's latencies for a steady flow. */
async function flow() {
  quick.latencies.length = 0;
  await emit('call.connected', FLOW, 1, FLOW_PAUSE_MS);
  while (quick.latencies.length < FLOW) await sleep(20);
  return [...quick.latencies];
}

const workers = await startJobWorkers({
  db: t.infra.database.db,
  services: t.services,
  log: pino({ level: 'silent' }),
});
const load = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
console.log(
  `webhooks turns bench: ${t.infra.database.kind}; a slow endpoint (${SLOW_MS} ms per answer) with ${BACKLOG} waiting; ${FLOW} events to another; load ${load()}`,
);
const alone = await flow();
await emit('campaign.started', BACKLOG, 100);
while (slow.latencies.length === 0) await sleep(20);
const beside = await flow();
console.log(`the other endpoint alone:            p50 ${median(alone)} ms, p99 ${p99(alone)} ms`);
console.log(
  `beside the slow endpoint's backlog:  p50 ${median(beside)} ms, p99 ${p99(beside)} ms (ratio of p50s ${(median(beside) / Math.max(1, median(alone))).toFixed(1)}; the slow endpoint got ${slow.latencies.length} of ${BACKLOG} meanwhile)`,
);
console.log(`load after: ${load()}`);
// Its deliveries stop with it.
await t.app.inject({ method: 'DELETE', url: `/api/v1/webhooks/${slowId}`, headers: user.headers });
await workers.stop(1_000);
await t.services.webhooks.close();
await Promise.all([slow.close(), quick.close()]);
await t.close();
process.exit(0);
