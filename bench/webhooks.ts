/**
 * Webhooks: how fast domain events become signed deliveries at a local receiver, against a bare undici POST loop.
 *
 *   npx tsx bench/webhooks.ts            (EVENTS=50000 by default; EVENTS=5000 for a short run)
 *
 * The receiver is a plain node:http server in a child process (its own event loop) answering 200. The service runs
 * in this process with its job workers (PGlite unless DATABASE_URL is set), one endpoint subscribed to
 * call.connected. Events are written through the outbox in transactions of BATCH, as a module writes them; each
 * writes its delivery in the same transaction, and the dispatcher claims, signs, sends and records them in batches.
 * Three phases: a backlog drained (throughput, against the bare loop at the same concurrency, WEBHOOK_CONCURRENCY,
 * default 8, by wall time and by CPU), a steady flow (event-to-delivery latency), and a burst. BACKLOG_ONLY=1 runs the
 * first phase and the bare loop only; PROFILE=file.cpuprofile profiles the first phase.
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
// The steady flow: STEADY_EVENTS events, STEADY_BATCH per transaction, STEADY_PAUSE_MS between transactions.
const STEADY_EVENTS = Number(process.env.STEADY_EVENTS ?? 2_000);
const STEADY_BATCH = Number(process.env.STEADY_BATCH ?? 1);
const STEADY_PAUSE_MS = Number(process.env.STEADY_PAUSE_MS ?? 5);
// BACKLOG_ONLY=1: the backlog phase and the bare loop only (the throughput figures).
const BACKLOG_ONLY = Boolean(process.env.BACKLOG_ONLY);
// PROFILE=file.cpuprofile: a CPU profile of the backlog phase (open it in Chrome's DevTools).

/** Microseconds of CPU (user + system) this process used since `start`. */
function cpuSince(start: NodeJS.CpuUsage) {
  const used = process.cpuUsage(start);
  return used.user + used.system;
}

/** A CPU profile of this process from now until `stop` (written where PROFILE names), for chrome://inspect or a script. */
async function startProfile() {
  const { Session } = await import('node:inspector/promises');
  const { writeFile } = await import('node:fs/promises');
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  return {
    async stop(path: string) {
      const { profile } = await session.post('Profiler.stop');
      await writeFile(path, JSON.stringify(profile));
      session.disconnect();
    },
  };
}

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
  const { startJobWorkers } = await import('../src/background.js');
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
  const startWorkers = () =>
    startJobWorkers({
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
    payload: { url, events: ['call.connected'] },
  });
  if (created.statusCode !== 200) throw new Error(created.body);
  const outbox = t.services.outbox;
  const agentId = '00000000-0000-4000-8000-0000000be7c4';
  /** `count` events in transactions of `batch`, each about a subject of its own (as the events of many calls are). */
  async function writeEvents(count: number, batch: number, pauseMs = 0) {
    for (let written = 0; written < count; written += batch) {
      await inTransaction(t.infra.database.db, async (trx) => {
        const tx = outbox(trx);
        for (let i = written; i < Math.min(count, written + batch); i++) {
          const callId = randomUUID();
          await tx.emit({
            type: 'call.connected',
            accountId: user.accountId,
            subject: { type: 'call', id: callId },
            data: {
              callId,
              agentId,
              contactId: null,
              status: 'connected',
              direction: 'outbound',
              answeredBy: 'human',
            },
            actor: null,
          });
        }
      });
      if (pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, pauseMs));
    }
  }
  async function receivedAll(count: number) {
    while ((await ask<{ count: number }>('count')).count < count) await new Promise((r) => setTimeout(r, 50));
    const { latencies } = await ask<{ latencies: number[] }>('latencies');
    return latencies.sort((a, b) => a - b);
  }
  const load = () =>
    loadavg()
      .map((l) => l.toFixed(1))
      .join(' ');

  console.log(
    `webhooks bench: ${EVENTS} events, ${CONCURRENCY} attempts at once; ${t.infra.database.kind}; load ${load()}`,
  );
  // 1. A backlog: the events are written while no worker runs, then the dispatcher drains them.
  let started = performance.now();
  await writeEvents(EVENTS, BATCH);
  const writtenMs = performance.now() - started;
  started = performance.now();
  const drainCpu = process.cpuUsage();
  const profiler = process.env.PROFILE ? await startProfile() : undefined;
  const workers = await startWorkers();
  await receivedAll(EVENTS);
  const drainMs = performance.now() - started;
  const drainCpuUs = cpuSince(drainCpu);
  if (profiler) await profiler.stop(process.env.PROFILE!);

  // 2. A steady flow below capacity, workers running: how long one event takes to reach the receiver.
  const steadyEvents = BACKLOG_ONLY ? 0 : Math.min(EVENTS, STEADY_EVENTS);
  started = performance.now();
  await writeEvents(steadyEvents, STEADY_BATCH, STEADY_PAUSE_MS);
  const steady = await receivedAll(steadyEvents);
  const steadyMs = performance.now() - started;

  // 3. A burst: written and delivered at once, the workers running (the backlog grows while both go on).
  const burstEvents = BACKLOG_ONLY ? 0 : EVENTS;
  started = performance.now();
  await writeEvents(burstEvents, BATCH);
  const burstWrittenMs = performance.now() - started;
  const burst = await receivedAll(burstEvents);
  const burstMs = performance.now() - started;

  const sample = await t.app.inject({
    method: 'GET',
    url: `/api/v1/webhooks/${created.json().id}/deliveries?limit=1`,
    headers: user.headers,
  });
  // The body of a delivery as sent (the same size as every other one).
  const { body } = await t.infra.database.db
    .selectFrom('webhook_deliveries')
    .select('body')
    .limit(1)
    .executeTakeFirstOrThrow();
  await workers.stop(10_000);
  await t.services.webhooks.close();

  // Baseline: the same number of POSTs, same body size, same concurrency, nothing else.
  const agent = new Agent({ connections: 64, keepAliveTimeout: 4_000 });
  let next = 0;
  const baseStarted = performance.now();
  const baseCpu = process.cpuUsage();
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
  const baseCpuUs = cpuSince(baseCpu);
  await agent.close();

  const rate = (count: number, ms: number) => (count / (ms / 1000)).toFixed(0);
  const baseRate = EVENTS / (baseMs / 1000);
  const figures = (sorted: number[]) =>
    `p50 ${percentile(sorted, 50)} ms, p99 ${percentile(sorted, 99)} ms, max ${sorted.at(-1)} ms`;
  console.log(`bare undici POSTs/s:                 ${baseRate.toFixed(0)}  (${(baseMs / 1000).toFixed(1)} s)`);
  console.log(`events written (no worker running):  ${rate(EVENTS, writtenMs)}/s in transactions of ${BATCH}`);
  console.log(
    `backlog drained, deliveries/s:       ${rate(EVENTS, drainMs)}  (${(drainMs / 1000).toFixed(1)} s; ratio to bare ${(EVENTS / (drainMs / 1000) / baseRate).toFixed(3)})`,
  );
  console.log(
    `CPU of this process per delivery:    backlog ${(drainCpuUs / EVENTS).toFixed(0)} µs, bare ${(baseCpuUs / EVENTS).toFixed(0)} µs (ratio ${(baseCpuUs / drainCpuUs).toFixed(3)}; the receiver runs in another process)`,
  );
  if (!BACKLOG_ONLY) {
    console.log(
      `steady flow (${rate(steadyEvents, steadyMs)}/s, ${STEADY_BATCH} per transaction): event-to-delivery ${figures(steady)}`,
    );
    console.log(
      `burst, written and sent at once:     ${rate(EVENTS, burstMs)} deliveries/s (written at ${rate(EVENTS, burstWrittenMs)}/s; ratio to bare ${(EVENTS / (burstMs / 1000) / baseRate).toFixed(3)}); event-to-delivery ${figures(burst)}`,
    );
  }
  console.log(`one delivery's log entry: ${sample.body.slice(0, 300)}`);
  console.log(`load after: ${load()}`);
  child.kill();
  await t.close();
}

if (process.argv.includes('--receiver')) serve();
else await main();
