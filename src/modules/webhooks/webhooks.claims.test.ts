/**
 * Claims of due deliveries, below HTTP: every account gets its share of a batch however many endpoints another
 * account has, and endpoints whose attempts time out are claimed only by the penalty lane, one delivery each, until an
 * attempt of theirs ends otherwise. The attempts go to a local host that accepts connections and never answers, with
 * a short attempt limit.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer as createHttpServer } from 'node:http';
import { createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { buildTestServices, newAccount, type TestServices } from '../../../test/service-kit.js';
import { newId } from '../../lib/ids.js';
import { createWebhooksRepo, type ClaimScope, type WebhooksRepo } from './webhooks.repo.js';
import { createWebhooksService } from './webhooks.service.js';

let t: TestServices;
let repo: WebhooksRepo;
let silentUrl: string;
let answeringUrl: string;
const closers: Array<() => Promise<void>> = [];

before(async () => {
  t = await buildTestServices({ env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
  repo = createWebhooksRepo(t.db, t.services.outbox);
  // A host that accepts connections and never answers.
  const sockets = new Set<Socket>();
  const silent = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.resume();
  });
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  silentUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
  const answering = createHttpServer((req, res) => req.resume().on('end', () => res.end('ok')));
  await new Promise<void>((resolve) => answering.listen(0, '127.0.0.1', resolve));
  answeringUrl = `http://127.0.0.1:${(answering.address() as AddressInfo).port}/hook`;
  closers.push(
    () => new Promise((resolve) => answering.close(() => resolve())),
    async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    },
  );
});

after(async () => {
  for (const close of closers) await close();
  await t.close();
});

type Account = Awaited<ReturnType<typeof newAccount>>;

async function endpoints(account: Account, count: number, url: (i: number) => string) {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) ids.push((await t.services.webhooks.create(account.auth, { url: url(i) })).id);
  return ids;
}

async function sendTests(account: Account, ids: string[], rounds: number) {
  for (let round = 0; round < rounds; round++) {
    for (const id of ids) await t.services.webhooks.sendTest(account.auth, id);
  }
}

/** Claims as a dispatcher does, then lets the deliveries go again (the lease is released). */
async function claim(limit: number, serving?: ClaimScope) {
  const lease = { id: newId(), until: new Date(Date.now() + 60_000) };
  const claimed = await repo.transaction((tx) => tx.claimDue(new Date(), limit, lease, serving));
  await repo.releaseLease(lease.id);
  return claimed;
}

const countBy = <T>(items: T[], key: (item: T) => string) =>
  items.reduce((counts, item) => counts.set(key(item), (counts.get(key(item)) ?? 0) + 1), new Map<string, number>());

/** Every pending delivery of these accounts stops (their endpoints are deleted), so the next test starts clean. */
async function deleteEndpoints(account: Account, ids: string[]) {
  for (const id of ids) await t.services.webhooks.delete(account.auth, id);
}

test('every account with deliveries due gets its share of a batch, however many endpoints another account has', async () => {
  const crowd = await newAccount(t);
  const single = await newAccount(t);
  const crowdEndpoints = await endpoints(crowd, t.config.webhooks.maxEndpointsPerAccount, (i) => `${silentUrl}/${i}`);
  await sendTests(crowd, crowdEndpoints, 3);
  const singleEndpoint = await endpoints(single, 1, () => answeringUrl);
  await sendTests(single, singleEndpoint, 5);

  // A batch of ten: half for each account, the crowd's half from five of its endpoints.
  const small = await claim(10);
  assert.deepEqual(
    countBy(small, (d) => d.account_id),
    new Map([
      [crowd.accountId, 5],
      [single.accountId, 5],
    ]),
  );
  assert.equal(new Set(small.filter((d) => d.account_id === crowd.accountId).map((d) => d.endpoint_id)).size, 5);
  // A full batch: everything the single account has due, and an even share of the crowd's half per endpoint.
  const full = await claim(250);
  const perAccount = countBy(full, (d) => d.account_id);
  assert.equal(perAccount.get(single.accountId), 5);
  assert.equal(perAccount.get(crowd.accountId), 100, 'a half of 250 split among 50 endpoints: 2 each');
  await deleteEndpoints(crowd, crowdEndpoints);
  await deleteEndpoints(single, singleEndpoint);
});

test('endpoints whose attempts time out are claimed only by the penalty lane, one delivery each, until one ends otherwise', async () => {
  const slow = await newAccount(t);
  const other = await newAccount(t);
  const slowEndpoints = await endpoints(slow, 4, (i) => `${silentUrl}/${i}`);
  const otherEndpoint = await endpoints(other, 1, () => answeringUrl);
  // A dispatcher whose attempts time out after 200 ms (the same database and secrets as the service's).
  const dispatcher = createWebhooksService({ repo, clock: t.clock, config: t.config.webhooks, attemptTimeoutMs: 200 });
  try {
    await sendTests(slow, slowEndpoints, 1);
    await sendTests(other, otherEndpoint, 1);
    assert.equal((await dispatcher.dispatchDue()).attempted, 5);
    const penalized = await t.db
      .selectFrom('webhook_endpoints')
      .select(['id', 'timed_out_at'])
      .where('account_id', 'in', [slow.accountId, other.accountId])
      .execute();
    assert.deepEqual(
      penalized
        .filter((e) => e.timed_out_at !== null)
        .map((e) => e.id)
        .sort(),
      [...slowEndpoints].sort(),
      'the endpoints that timed out, and only those',
    );

    await sendTests(slow, slowEndpoints, 2);
    await sendTests(other, otherEndpoint, 2);
    const main = await claim(250, { lane: 'main' });
    assert.deepEqual([...new Set(main.map((d) => d.endpoint_id))], otherEndpoint, 'the main lanes leave them out');
    const penalty = await claim(250, { lane: 'penalty' });
    assert.deepEqual(
      [...countBy(penalty, (d) => d.endpoint_id).entries()].sort(),
      slowEndpoints.map((id) => [id, 1]).sort(),
      'the penalty lane takes one delivery of each',
    );
    assert.ok(penalty.every((d) => d.penalized));
    // A timeout seen by this process counts before it is recorded.
    const seen = await claim(250, { lane: 'main', timedOut: otherEndpoint });
    assert.equal(seen.length, 0);

    // One of them answers again: its next attempt takes it out of the penalty lane.
    await t.services.webhooks.update(slow.auth, slowEndpoints[0]!, { url: answeringUrl });
    await dispatcher.dispatchDue();
    const timedOutAt = async (id: string) =>
      (
        await t.db
          .selectFrom('webhook_endpoints')
          .select('timed_out_at')
          .where('account_id', '=', slow.accountId)
          .where('id', '=', id)
          .executeTakeFirstOrThrow()
      ).timed_out_at;
    assert.equal(await timedOutAt(slowEndpoints[0]!), null, 'it answered: no longer penalized');
    assert.notEqual(await timedOutAt(slowEndpoints[1]!), null, 'the others still time out');
  } finally {
    await dispatcher.close();
    await deleteEndpoints(slow, slowEndpoints);
    await deleteEndpoints(other, otherEndpoint);
  }
});

test("a transaction's events become deliveries in one statement, in order; a call's later event waits for its earlier one", async () => {
  const account = await newAccount(t);
  const [endpointId] = await endpoints(account, 1, () => answeringUrl);
  const [first, second] = [newId(), newId()];
  const connected = (callId: string) => ({
    type: 'call.connected' as const,
    accountId: account.accountId,
    subject: { type: 'call', id: callId },
    data: {
      callId,
      agentId: null,
      contactId: null,
      status: 'connected' as const,
      direction: 'outbound',
      answeredBy: 'human' as const,
    },
    actor: null,
  });
  // Two events of the first call and one of the second in one transaction, one more of the first call after it.
  const emitted: string[] = [];
  await repo.transaction(async (tx) => {
    for (const callId of [first, second, first]) emitted.push((await tx.emit(connected(callId!))).id);
  });
  await repo.transaction(async (tx) => void emitted.push((await tx.emit(connected(first!))).id));
  const rows = await t.db
    .selectFrom('webhook_deliveries')
    .select(['event_id', 'subject_id', 'follows_unsent'])
    .where('account_id', '=', account.accountId)
    .where('endpoint_id', '=', endpointId!)
    .orderBy('seq')
    .execute();
  assert.deepEqual(
    rows.map((row) => [row.event_id, row.subject_id, row.follows_unsent]),
    [
      [emitted[0], first, false],
      [emitted[1], second, false],
      [emitted[2], first, true],
      [emitted[3], first, true],
    ],
  );
  // A claim takes each call's first delivery only.
  const claimed = await claim(250, { lane: 'every', only: [endpointId!] });
  assert.deepEqual(claimed.map((d) => JSON.parse(d.body).data.callId).sort(), [first, second].sort());
  await deleteEndpoints(account, [endpointId!]);
});
