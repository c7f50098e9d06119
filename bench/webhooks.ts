/**
 * Webhooks: how fast domain events become signed deliveries at a local receiver, against a bare undici POST loop.
 *
 *   npx tsx bench/webhooks.ts            (EVENTS=50000 by default; EVENTS=5000 for a short run)
 *
 * The receiver is a plain node:http server in a child process (its own event loop) answering 200. The service runs
 * in this process with its job workers (PGlite unless DATABASE_URL is set), one endpoint subscribed to
 * campaign.started. EVENTS events are written through the outbox in transactions of BATCH, as a module writes them;
 * each becomes a fan-out job, then a delivery and an attempt (claim, sign, POST, record).
 * Reported: deliveries per second (first event written to last delivery received), event-to-delivery latency p50/p99
 * (occurredAt to arrival, same machine clock), and the same number of POSTs of the same bodies by a bare undici loop
 * at the same concurrency (WEBHOOK_CONCURRENCY, default 8). PACE_MS pauses after each transaction (a trickle);
 * POLL_SECONDS sets the workers' polling interval (pg-boss's default, 2 s, unless set).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { loadavg } from 'node:os';
import { randomUUID } from 'node:crypto';
import { Agent, request } from 'undici';

const EVENTS = Number(process.env.EVENTS ?? 50_000);
const BATCH = Number(process.env.BATCH ?? 100);
const CONCURRENCY = Number(process.env.WEBHOOK_CONCURRENCY ?? 8);
// A pause after each transaction of events: a trickle instead of a burst (what one event's latency is, without a backlog).
const PACE_MS = Number(process.env.PACE_MS ?? 0);

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

/** The receiver: counts deliveries, and the latency from each event's occurredAt to its arrival. */
function serve() {
  const latencies: number[] = [];
  let count = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const arrived = Date.now();
      if (req.headers['x-service-delivery']) {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { occurredAt: string };
        latencies.push(arrived - Date.parse(body.occurredAt));
      }
      count++;
      res.writeHead(200).end('ok');
    });
  });
  server.listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as AddressInfo).port }));
  process.on('message', (message: { cmd: string }) => {
    if (message.cmd === 'count') process.send!({ count });
    if (message.cmd === 'latencies') {
      process.send!({ latencies });
      latencies.length = 0;
      count = 0;
    }
  });
}

async function main() {
  const { pino } = await import('pino');
  const { buildTestApp, signUp } = await import('../test/helpers.js');
  const { startJobWorkers } = await import('../src/jobs/workers.js');
  const { createOutboxFactory } = await import('../src/events/domain-events.service.js');
  const { eventSubscriptions } = await import('../src/jobs/registry.js');
  const { systemClock } = await import('../src/lib/clock.js');
  const { inTransaction } = await import('../src/db/repo.js');

  const child = fork(fileURLToPath(import.meta.url), ['--receiver'], { execArgv: ['--import', 'tsx'] });
  const ask = <T>(cmd: string) =>
    new Promise<T>((resolve) => {
      child.once('message', (message) => resolve(message as T));
      child.send({ cmd });
    });
  const { port } = await new Promise<{ port: number }>((resolve) =>
    child.once('message', (m) => resolve(m as { port: number })),
  );
  const url = `http://127.0.0.1:${port}/hooks`;

  const t = await buildTestApp({
    env: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_CONCURRENCY: String(CONCURRENCY), RATE_LIMIT_PER_MINUTE: '100000' },
  });
  const workers = await startJobWorkers({
    db: t.infra.database.db,
    services: t.services,
    log: pino({ level: 'silent' }),
    ...(process.env.POLL_SECONDS ? { pollingIntervalSeconds: Number(process.env.POLL_SECONDS) } : {}),
  });
  const user = await signUp(t.app);
  const created = await t.app.inject({
    method: 'POST',
    url: '/api/v1/webhooks',
    headers: user.headers,
    payload: { url, events: ['campaign.started'] },
  });
  if (created.statusCode !== 200) throw new Error(created.body);
  const outbox = createOutboxFactory({ jobs: t.infra.jobs, subscriptions: eventSubscriptions, clock: systemClock });
  const campaignId = '00000000-0000-4000-8000-0000000be7c4';

  console.log(
    `webhooks bench: ${EVENTS} events, batches of ${BATCH}, ${CONCURRENCY} attempts at once; ${t.infra.database.kind}; load ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  const started = performance.now();
  for (let written = 0; written < EVENTS; written += BATCH) {
    await inTransaction(t.infra.database.db, async (trx) => {
      const tx = outbox(trx);
      for (let i = written; i < Math.min(EVENTS, written + BATCH); i++) {
        // Each event about a subject of its own (as the events of many calls are): none waits for another's first attempt.
        const subject = randomUUID();
        await tx.emit({
          type: 'campaign.started',
          accountId: user.accountId,
          subject: { type: 'campaign', id: subject },
          data: { campaignId: subject, name: `Campaign ${i}`, agentId: campaignId },
          actor: null,
        });
      }
    });
    if (PACE_MS > 0) await new Promise((resolve) => setTimeout(resolve, PACE_MS));
  }
  const writtenMs = performance.now() - started;
  let received = 0;
  while (received < EVENTS) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    received = (await ask<{ count: number }>('count')).count;
  }
  const serviceMs = performance.now() - started;
  const { latencies } = await ask<{ latencies: number[] }>('latencies');
  latencies.sort((a, b) => a - b);
  const sample = await t.app.inject({
    method: 'GET',
    url: `/api/v1/webhooks/${created.json().id}/deliveries?limit=1`,
    headers: user.headers,
  });
  const body = JSON.stringify({
    id: campaignId,
    type: 'campaign.started',
    occurredAt: new Date().toISOString(),
    data: { campaignId, name: 'Campaign 1', agentId: campaignId },
  });
  await workers.stop(10_000);
  await t.services.webhooks.close();

  // Baseline: the same number of POSTs, same body size, same concurrency, nothing else.
  const agent = new Agent({ connections: 64, keepAliveTimeout: 4_000 });
  let next = 0;
  const baseStarted = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next++ < EVENTS) {
        const response = await request(url, {
          method: 'POST',
          body,
          headers: { 'content-type': 'application/json' },
          dispatcher: agent,
        });
        await response.body.text();
      }
    }),
  );
  const baseMs = performance.now() - baseStarted;
  await agent.close();

  const serviceRate = EVENTS / (serviceMs / 1000);
  const baseRate = EVENTS / (baseMs / 1000);
  console.log(
    `events written:          ${(writtenMs / 1000).toFixed(1)} s (${(EVENTS / (writtenMs / 1000)).toFixed(0)}/s, with their fan-out jobs)`,
  );
  console.log(`service deliveries/s:    ${serviceRate.toFixed(0)}  (${(serviceMs / 1000).toFixed(1)} s for ${EVENTS})`);
  console.log(
    `event-to-delivery:       p50 ${percentile(latencies, 50)} ms, p99 ${percentile(latencies, 99)} ms, max ${latencies.at(-1)} ms`,
  );
  console.log(`bare undici POSTs/s:     ${baseRate.toFixed(0)}  (${(baseMs / 1000).toFixed(1)} s)`);
  console.log(`ratio service/bare:      ${(serviceRate / baseRate).toFixed(3)}`);
  console.log(`one delivery's log entry: ${sample.body.slice(0, 300)}`);
  console.log(
    `load after: ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  child.kill();
  await t.close();
}

if (process.argv.includes('--receiver')) serve();
else await main();
