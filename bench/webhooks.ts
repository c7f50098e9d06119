/**
 * Webhooks: how fast domain events are written and become signed deliveries at a local receiver, against baselines
 * run in alternating windows (ABBA) in the same process.
 *
 *   npx tsx bench/webhooks.ts            (ROUNDS=4 WINDOW_EVENTS=2500 BURST_EVENTS=10000 by default)
 *
 * The receiver is a plain node:http server in a child process (its own event loop) answering 200. The service runs
 * in this process (PGlite unless DATABASE_URL is set), one endpoint subscribed to call.connected. Each round:
 * - event writes: WINDOW_EVENTS events in transactions of BATCH written as a module writes them (`tx.emit` per event)
 *   in a transaction `inTransaction` opens (the events gathered and written together before it commits), and as many
 *   one at a time (a transaction opened without it: each event, its jobs and its deliveries written as emitted, the
 *   shape before gathering), alternating which goes first; events/s and CPU per event;
 * - the backlog they make drained by the job workers (started for the window, WEBHOOK_CONCURRENCY attempts at once,
 *   default 8), and as many POSTs of the same body by a bare undici loop at the same concurrency, alternating which
 *   goes first; deliveries/s and CPU of this process per delivery.
 * Then a steady flow (event-to-delivery latency) and a burst of BURST_EVENTS written while the workers run (p50/p99
 * from each event's occurredAt to its arrival). PROFILE=file.cpuprofile profiles the first drain window,
 * PROFILE_WRITES=file.cpuprofile the first gathered write window.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { loadavg } from 'node:os';
import { randomUUID } from 'node:crypto';
import { Agent, request } from 'undici';

const ROUNDS = Number(process.env.ROUNDS ?? 4);
const WINDOW_EVENTS = Number(process.env.WINDOW_EVENTS ?? 2_500);
const BURST_EVENTS = Number(process.env.BURST_EVENTS ?? 10_000);
const BATCH = Number(process.env.BATCH ?? 100);
const CONCURRENCY = Number(process.env.WEBHOOK_CONCURRENCY ?? 8);
// A pause after each transaction of events: a trickle instead of a burst (what one event's latency is, without a backlog).
// The steady flow: STEADY_EVENTS events, STEADY_BATCH per transaction, STEADY_PAUSE_MS between transactions.
const STEADY_EVENTS = Number(process.env.STEADY_EVENTS ?? 2_000);
const STEADY_BATCH = Number(process.env.STEADY_BATCH ?? 1);
const STEADY_PAUSE_MS = Number(process.env.STEADY_PAUSE_MS ?? 5);
// BACKLOG_ONLY=1: the alternating windows only (no steady flow, no burst).
const BACKLOG_ONLY = Boolean(process.env.BACKLOG_ONLY);

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
  // Idle connections stay open between windows (the service's and the bare loop's), as a receiver's usually do.
  server.keepAliveTimeout = 120_000;
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

/** min / median / max of a figure over the windows. */
function spread(values: number[], digits = 0) {
  const sorted = [...values].sort((a, b) => a - b);
  const f = (v: number) => v.toFixed(digits);
  return `${f(sorted[0]!)} / ${f(sorted[Math.floor((sorted.length - 1) / 2)]!)} / ${f(sorted.at(-1)!)}`;
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
  const db = t.infra.database.db;
  const startWorkers = () =>
    startJobWorkers({
      db,
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
  type Shape = 'gathered' | 'one at a time';
  /**
   * `count` events in transactions of `batch`, each about a subject of its own (as the events of many calls are).
   * 'gathered': in a transaction `inTransaction` opens; 'one at a time': in one opened without it.
   */
  async function writeEvents(count: number, batch: number, pauseMs = 0, shape: Shape = 'gathered') {
    for (let written = 0; written < count; written += batch) {
      const work = async (trx: typeof db) => {
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
      };
      if (shape === 'gathered') await inTransaction(db, work);
      else await db.transaction().execute(work);
      if (pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, pauseMs));
    }
  }
  async function receivedAll(count: number) {
    while ((await ask<{ count: number }>('count')).count < count) await new Promise((r) => setTimeout(r, 20));
    const { latencies } = await ask<{ latencies: number[] }>('latencies');
    return latencies.sort((a, b) => a - b);
  }
  const load = () =>
    loadavg()
      .map((l) => l.toFixed(1))
      .join(' ');

  /** One window of event writes: events/s and µs of CPU per event. */
  async function writeWindow(shape: Shape, profile?: string) {
    const profiler = profile ? await startProfile() : undefined;
    const cpu = process.cpuUsage();
    const started = performance.now();
    await writeEvents(WINDOW_EVENTS, BATCH, 0, shape);
    const ms = performance.now() - started;
    const cpuUs = cpuSince(cpu);
    if (profiler) await profiler.stop(profile!);
    return { rate: WINDOW_EVENTS / (ms / 1000), cpuPerEvent: cpuUs / WINDOW_EVENTS };
  }

  /** One window of the service: the job workers started, the backlog of `count` deliveries drained, stopped. */
  async function drainWindow(count: number, profile?: string) {
    const profiler = profile ? await startProfile() : undefined;
    const cpu = process.cpuUsage();
    const started = performance.now();
    const workers = await startWorkers();
    await receivedAll(count);
    const ms = performance.now() - started;
    const cpuUs = cpuSince(cpu);
    if (profiler) await profiler.stop(profile!);
    await workers.stop(10_000);
    return { rate: count / (ms / 1000), cpuPerDelivery: cpuUs / count };
  }

  // The body of a delivery as sent (the same size as every other one), for the bare loop.
  await writeEvents(1, 1);
  const { body } = await db.selectFrom('webhook_deliveries').select('body').limit(1).executeTakeFirstOrThrow();
  const warm = await startWorkers();
  await receivedAll(1);
  await warm.stop(10_000);
  /**
   * One window of the baseline: `count` POSTs of the same body, same concurrency, nothing else (its own connections:
   * idle ones from the window before may be closing).
   */
  async function bareWindow(count: number) {
    const agent = new Agent({ connections: 64, keepAliveTimeout: 4_000 });
    let next = 0;
    const cpu = process.cpuUsage();
    const started = performance.now();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next++ < count) {
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
    const ms = performance.now() - started;
    const cpuUs = cpuSince(cpu);
    await agent.close();
    await receivedAll(count);
    return { rate: count / (ms / 1000), cpuPerDelivery: cpuUs / count };
  }

  const loadBefore = load();
  console.log(
    `webhooks bench: ${ROUNDS} rounds of ${WINDOW_EVENTS} events per write window, ${CONCURRENCY} attempts at once; ` +
      `${t.infra.database.kind}; load ${loadBefore}`,
  );
  const writes: Record<Shape, Array<{ rate: number; cpuPerEvent: number }>> = { gathered: [], 'one at a time': [] };
  const drains: Array<{ rate: number; cpuPerDelivery: number }> = [];
  const bares: Array<{ rate: number; cpuPerDelivery: number }> = [];
  for (let round = 0; round < ROUNDS; round++) {
    // ABBA: which goes first alternates from round to round.
    const shapes: Shape[] = round % 2 === 0 ? ['one at a time', 'gathered'] : ['gathered', 'one at a time'];
    for (const shape of shapes) {
      const profile = round === 0 && shape === 'gathered' ? process.env.PROFILE_WRITES : undefined;
      writes[shape].push(await writeWindow(shape, profile));
    }
    const backlog = 2 * WINDOW_EVENTS;
    if (round % 2 === 0) {
      drains.push(await drainWindow(backlog, round === 0 ? process.env.PROFILE : undefined));
      bares.push(await bareWindow(backlog));
    } else {
      bares.push(await bareWindow(backlog));
      drains.push(await drainWindow(backlog));
    }
    const w = (shape: Shape) => writes[shape].at(-1)!;
    console.log(
      `round ${round + 1}: writes ${w('gathered').rate.toFixed(0)}/s gathered, ${w('one at a time').rate.toFixed(0)}/s ` +
        `one at a time; drain ${drains.at(-1)!.rate.toFixed(0)}/s (${drains.at(-1)!.cpuPerDelivery.toFixed(0)} µs), ` +
        `bare ${bares.at(-1)!.rate.toFixed(0)}/s (${bares.at(-1)!.cpuPerDelivery.toFixed(0)} µs); load ${load()}`,
    );
  }
  // A steady flow below capacity, workers running: how long one event takes to reach the receiver.
  const workers = await startWorkers();
  const steadyEvents = BACKLOG_ONLY ? 0 : STEADY_EVENTS;
  let started = performance.now();
  await writeEvents(steadyEvents, STEADY_BATCH, STEADY_PAUSE_MS);
  const steady = await receivedAll(steadyEvents);
  const steadyMs = performance.now() - started;

  // A burst: written and delivered at once, the workers running (the backlog grows while both go on).
  const burstEvents = BACKLOG_ONLY ? 0 : BURST_EVENTS;
  started = performance.now();
  await writeEvents(burstEvents, BATCH);
  const burstWrittenMs = performance.now() - started;
  const deliveredWhileWriting = (await ask<{ count: number }>('count')).count;
  const burst = await receivedAll(burstEvents);
  const burstMs = performance.now() - started;
  await workers.stop(10_000);
  await t.services.webhooks.close();

  const rate = (count: number, ms: number) => (count / (ms / 1000)).toFixed(0);
  const figures = (sorted: number[]) =>
    `p50 ${percentile(sorted, 50)} ms, p99 ${percentile(sorted, 99)} ms, max ${sorted.at(-1)} ms`;
  const ratios = (pick: (w: { rate: number; cpuPerDelivery: number }) => number, inverse = false) =>
    drains.map((d, i) => (inverse ? pick(bares[i]!) / pick(d) : pick(d) / pick(bares[i]!)));
  const gathered = writes.gathered;
  const single = writes['one at a time'];
  console.log(`\nmin / median / max over ${ROUNDS} windows each`);
  console.log(
    `events written, gathered:        ${spread(gathered.map((w) => w.rate))}/s, CPU ${spread(gathered.map((w) => w.cpuPerEvent))} µs per event`,
  );
  console.log(
    `events written, one at a time:   ${spread(single.map((w) => w.rate))}/s, CPU ${spread(single.map((w) => w.cpuPerEvent))} µs per event`,
  );
  console.log(
    `  gathered / one at a time:      ${spread(
      gathered.map((w, i) => w.rate / single[i]!.rate),
      2,
    )} by rate, ${spread(
      gathered.map((w, i) => single[i]!.cpuPerEvent / w.cpuPerEvent),
      2,
    )} by CPU (in transactions of ${BATCH})`,
  );
  console.log(
    `backlog drained:                 ${spread(drains.map((d) => d.rate))} deliveries/s, CPU ${spread(drains.map((d) => d.cpuPerDelivery))} µs per delivery`,
  );
  console.log(
    `bare undici POST loop:           ${spread(bares.map((d) => d.rate))} POSTs/s, CPU ${spread(bares.map((d) => d.cpuPerDelivery))} µs per POST`,
  );
  console.log(
    `  drain / bare:                  ${spread(
      ratios((w) => w.rate),
      3,
    )} by rate, ${spread(
      ratios((w) => w.cpuPerDelivery, true),
      3,
    )} by CPU per delivery (the receiver runs in another process)`,
  );
  if (!BACKLOG_ONLY) {
    console.log(
      `steady flow (${rate(steadyEvents, steadyMs)}/s, ${STEADY_BATCH} per transaction): event-to-delivery ${figures(steady)}`,
    );
    console.log(
      `burst of ${burstEvents} events, written and sent at once: written at ${rate(burstEvents, burstWrittenMs)}/s (${deliveredWhileWriting} delivered meanwhile), all delivered in ${(burstMs / 1000).toFixed(1)} s; event-to-delivery ${figures(burst)}`,
    );
  }
  console.log(`load before: ${loadBefore}; after: ${load()}`);
  child.kill();
  await t.close();
}

if (process.argv.includes('--receiver')) serve();
else await main();
