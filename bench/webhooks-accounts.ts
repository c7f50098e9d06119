/**
 * Webhooks: what one account's endpoints that never answer cost another account's deliveries.
 *
 *   npx tsx bench/webhooks-accounts.ts      (PGlite unless DATABASE_URL is set)
 *
 * Account Y has a quick receiver in this process, which records how long each event took from its occurredAt to its
 * arrival. A steady flow of FLOW events (one per transaction, FLOW_PAUSE_MS apart) goes to it twice: alone (the
 * baseline), then while account X attacks: as many endpoints as an account may have (WEBHOOK_MAX_ENDPOINTS_PER_ACCOUNT),
 * all on a host that accepts connections and never answers, TESTS test events to each. Under attack the flow waits at
 * most GIVE_UP_S seconds for its deliveries. Then a new account's first delivery, timed from its test event.
 */
import { createServer as createHttpServer } from 'node:http';
import { createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { loadavg } from 'node:os';
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';

const FLOW = Number(process.env.FLOW ?? 100);
const FLOW_PAUSE_MS = Number(process.env.FLOW_PAUSE_MS ?? 20);
const TESTS = Number(process.env.TESTS ?? 3);
const GIVE_UP_S = Number(process.env.GIVE_UP_S ?? 120);

/** A receiver answering at once; it keeps each delivery's latency from its event's occurredAt, and the ids it got. */
async function receiver() {
  const latencies: number[] = [];
  const ids = new Set<string>();
  const server = createHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: string; occurredAt: string };
      latencies.push(Date.now() - Date.parse(body.occurredAt));
      ids.add(body.id);
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    latencies,
    ids,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** A host that accepts connections and never answers. */
async function blackhole() {
  const sockets = new Set<Socket>();
  let accepted = 0;
  const server = createServer((socket) => {
    accepted++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    socket.resume();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    accepted: () => accepted,
    open: () => sockets.size,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const sorted = (values: number[]) => [...values].sort((a, b) => a - b);
const median = (values: number[]) => sorted(values)[Math.floor(values.length / 2)] ?? NaN;
const p99 = (values: number[]) => sorted(values)[Math.ceil(values.length * 0.99) - 1] ?? NaN;

const { pino } = await import('pino');
const { buildTestApp, signUp } = await import('../test/helpers.js');
const { startJobWorkers } = await import('../src/background.js');
const { inTransaction } = await import('../src/db/repo.js');

const quick = await receiver();
const hole = await blackhole();
const t = await buildTestApp({ env: { WEBHOOK_ALLOW_PRIVATE: 'true', RATE_LIMIT_PER_MINUTE: '1000000' } });
type User = Awaited<ReturnType<typeof signUp>>;
const post = async (user: User, url: string, payload?: object) => {
  const response = await t.app.inject({
    method: 'POST',
    url: `/api/v1${url}`,
    headers: user.headers,
    ...(payload ? { payload } : {}),
  });
  if (response.statusCode !== 200) throw new Error(`${url}: ${response.body}`);
  return response.json();
};
const victim = await signUp(t.app);
await post(victim, '/webhooks', { url: quick.url, events: ['call.connected'] });

/** FLOW call.connected events for the victim; answers the latencies of those delivered within `giveUpS`. */
async function flow(giveUpS: number) {
  quick.latencies.length = 0;
  for (let i = 0; i < FLOW; i++) {
    await inTransaction(t.infra.database.db, async (trx) => {
      const id = randomUUID();
      await t.services.outbox(trx).emit({
        type: 'call.connected',
        accountId: victim.accountId,
        actor: null,
        subject: { type: 'call', id },
        data: {
          callId: id,
          agentId: null,
          contactId: null,
          direction: 'outbound',
          status: 'connected',
          answeredBy: 'human',
        },
      });
    });
    await sleep(FLOW_PAUSE_MS);
  }
  const giveUpAt = performance.now() + giveUpS * 1000;
  while (quick.latencies.length < FLOW && performance.now() < giveUpAt) await sleep(20);
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
const cap = t.config.webhooks.maxEndpointsPerAccount;
console.log(
  `webhooks accounts bench: ${t.infra.database.kind}; ${cap} silent endpoints x ${TESTS} test events against ${FLOW} events of another account; load ${load()}`,
);
const alone = await flow(GIVE_UP_S);

const attacker = await signUp(t.app);
const silentEndpoints: string[] = [];
for (let i = 0; i < cap; i++) silentEndpoints.push((await post(attacker, '/webhooks', { url: `${hole.url}/${i}` })).id);
for (let round = 0; round < TESTS; round++) {
  for (const id of silentEndpoints) await post(attacker, `/webhooks/${id}/test`);
}
while (hole.accepted() < t.config.webhooks.concurrencyPerWorker - 2) await sleep(20);
const attackStarted = performance.now();
const beside = await flow(GIVE_UP_S);

const newcomer = await signUp(t.app);
const newcomerEndpoint = await post(newcomer, '/webhooks', { url: quick.url });
const started = performance.now();
const { deliveryId } = await post(newcomer, `/webhooks/${newcomerEndpoint.id}/test`);
const giveUpAt = performance.now() + GIVE_UP_S * 1000;
while (!quick.ids.has(deliveryId) && performance.now() < giveUpAt) await sleep(10);
const newcomerMs = quick.ids.has(deliveryId)
  ? `${(performance.now() - started).toFixed(0)} ms`
  : `none in ${GIVE_UP_S} s`;

console.log(`the victim alone:           p50 ${median(alone)} ms, p99 ${p99(alone)} ms`);
console.log(
  `under attack:               p50 ${median(beside)} ms, p99 ${p99(beside)} ms, ${beside.length} of ${FLOW} delivered (ratio of p50s ${(median(beside) / Math.max(1, median(alone))).toFixed(1)})`,
);
console.log(`a new account's first delivery under attack: ${newcomerMs}`);
console.log(
  `the silent host: ${hole.accepted()} connections in ${((performance.now() - attackStarted) / 1000).toFixed(0)} s, ${hole.open()} open now; load after: ${load()}`,
);
for (const id of silentEndpoints) {
  await t.app.inject({ method: 'DELETE', url: `/api/v1/webhooks/${id}`, headers: attacker.headers });
}
await hole.close();
await workers.stop(1_000);
await t.services.webhooks.close();
await quick.close();
await t.close();
process.exit(0);
