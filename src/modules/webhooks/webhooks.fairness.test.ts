/**
 * One account's webhook endpoints cannot starve another account's deliveries. An attacking account fills its quota of
 * endpoints with a receiver that accepts connections and never answers, and sends test events to each; another
 * account's deliveries to a healthy receiver still arrive, and a new account's first one too. Their delays are
 * reported against their own baseline (a ratio), not asserted. Also: the cap on an account's endpoints holds, even
 * against creations sent at once.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { buildTestApp, errorBody, signUp, type SignedUp, type TestApp } from '../../../test/helpers.js';
import {
  closeReceivers,
  publishedWebhookBodies,
  startReceiver,
  type WebhookBodyCheck,
} from '../../../test/webhook-receiver.js';
import { startJobWorkers } from '../../background.js';
import { slowPlacesOf } from './webhooks.turns.js';

let t: TestApp;
let workers: Awaited<ReturnType<typeof startJobWorkers>>;
let bodies: WebhookBodyCheck;
const closing: Array<{ close(): Promise<void> }> = [];

before(async () => {
  t = await buildTestApp({ env: { WEBHOOK_ALLOW_PRIVATE: 'true', RATE_LIMIT_PER_MINUTE: '100000' } });
  workers = await startJobWorkers({
    db: t.infra.database.db,
    services: t.services,
    log: pino({ level: 'silent' }),
    pollingIntervalSeconds: 0.5,
  });
  bodies = await publishedWebhookBodies(t.app);
});

after(async () => {
  await closeReceivers(closing.splice(0));
  await workers.stop(15_000);
  await t.services.webhooks.close();
  await t.close();
});

const send = (who: SignedUp, method: 'POST' | 'DELETE', url: string, payload?: object) =>
  t.app.inject({ method, url: `/api/v1${url}`, headers: who.headers, ...(payload ? { payload } : {}) });

async function ok(who: SignedUp, method: 'POST' | 'DELETE', url: string, payload?: object) {
  const response = await send(who, method, url, payload);
  assert.equal(response.statusCode, 200, response.body);
  return response.json();
}

/** A receiver that accepts connections and never answers (nor closes them). */
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
  const hole = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    accepted: () => accepted,
    /** Connections open now: attempts waiting for an answer. */
    open: () => sockets.size,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  closing.push(hole);
  return hole;
}

/** A healthy receiver with an endpoint of `who` on it. */
async function healthyEndpoint(who: SignedUp) {
  let secret = '';
  const receiver = await startReceiver({ secret: () => secret, bodies });
  closing.push(receiver);
  const created = await ok(who, 'POST', '/webhooks', { url: receiver.url });
  secret = created.secret;
  return { receiver, id: created.id as string };
}

/** Polls until `check` holds; gives up (fails) after `seconds`. */
async function waitFor(what: string, check: () => boolean | Promise<boolean>, seconds = 60) {
  const giveUpAt = performance.now() + seconds * 1000;
  while (!(await check())) {
    if (performance.now() > giveUpAt) throw new Error(`gave up waiting for ${what}`);
    await sleep(20);
  }
}

/** Sends a test event to the endpoint and answers how long it took to arrive at the receiver, in ms. */
async function testDelivery(who: SignedUp, endpoint: Awaited<ReturnType<typeof healthyEndpoint>>) {
  const started = performance.now();
  const { deliveryId } = await ok(who, 'POST', `/webhooks/${endpoint.id}/test`);
  await waitFor(`delivery ${deliveryId}`, () => endpoint.receiver.received.some((r) => r.deliveryId === deliveryId));
  return performance.now() - started;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

test('the endpoints of an account are capped, even when created all at once; the next one is refused with an error body', async () => {
  const owner = await signUp(t.app);
  const cap = t.config.webhooks.maxEndpointsPerAccount;
  const tries = await Promise.all(
    Array.from({ length: cap + 5 }, (_, i) => send(owner, 'POST', '/webhooks', { url: `http://127.0.0.1:9/cap/${i}` })),
  );
  assert.equal(tries.filter((r) => r.statusCode === 200).length, cap, 'exactly the cap is created');
  const refused = tries.filter((r) => r.statusCode !== 200);
  assert.equal(refused.length, 5);
  for (const response of refused) {
    assert.equal(response.statusCode, 409);
    const body = errorBody(response);
    assert.equal(body.error, 'conflict');
    assert.match(body.message, new RegExp(`at most ${cap} webhook endpoints`));
    assert.equal(body.details.limit, cap);
  }
  const listed = await t.app.inject({ method: 'GET', url: '/api/v1/webhooks?limit=500', headers: owner.headers });
  assert.equal(listed.json().total, cap);
  // Deleting one makes room for one.
  await ok(owner, 'DELETE', `/webhooks/${listed.json().webhooks[0].id}`);
  await ok(owner, 'POST', '/webhooks', { url: 'http://127.0.0.1:9/cap/again' });
  assert.equal((await send(owner, 'POST', '/webhooks', { url: 'http://127.0.0.1:9/cap/more' })).statusCode, 409);
});

test("an account whose endpoints never answer does not hold back another account's deliveries", async (c) => {
  // The account under attack has delivered before (its receiver is known to answer quickly).
  const victim = await signUp(t.app);
  const victimEndpoint = await healthyEndpoint(victim);
  const baseline: number[] = [];
  for (let i = 0; i < 3; i++) baseline.push(await testDelivery(victim, victimEndpoint));

  // The attacker: as many endpoints as an account may have, all on a host that never answers, three test events each.
  const attacker = await signUp(t.app);
  const hole = await blackhole();
  const cap = t.config.webhooks.maxEndpointsPerAccount;
  const attackerEndpoints: string[] = [];
  for (let i = 0; i < cap; i++) {
    attackerEndpoints.push((await ok(attacker, 'POST', '/webhooks', { url: `${hole.url}/hook/${i}` })).id);
  }
  for (let round = 0; round < 3; round++) {
    for (const id of attackerEndpoints) await ok(attacker, 'POST', `/webhooks/${id}/test`);
  }
  // Under way: its attempts hold every place an account may take for endpoints not known to answer.
  const held = slowPlacesOf(t.config.webhooks.concurrencyPerWorker) - 1;
  await waitFor('the attack under way', () => hole.open() >= held);

  const underAttack = await testDelivery(victim, victimEndpoint);
  // A new account's first delivery, to an endpoint no attempt has gone to yet.
  const newcomer = await signUp(t.app);
  const newcomerEndpoint = await healthyEndpoint(newcomer);
  const newcomerDelay = await testDelivery(newcomer, newcomerEndpoint);

  const base = Math.max(1, median(baseline));
  c.diagnostic(
    `baseline ${baseline.map((ms) => ms.toFixed(0)).join(', ')} ms; under attack (${cap} silent endpoints, ` +
      `${hole.open()} connections held, ${hole.accepted()} so far): the account that delivered before ${underAttack.toFixed(0)} ms ` +
      `(ratio ${(underAttack / base).toFixed(1)}), a new account's first delivery ${newcomerDelay.toFixed(0)} ms ` +
      `(ratio ${(newcomerDelay / base).toFixed(1)})`,
  );
  for (const id of attackerEndpoints) await ok(attacker, 'DELETE', `/webhooks/${id}`);
});
