/**
 * Outbound webhooks end to end: real calls on the simulated network and campaign events through the outbox, delivered
 * to real HTTP receivers on 127.0.0.1 that verify every signature the way the README shows; retries, abandonment and
 * auto-disabling on a virtual clock; rotation, redirects, redelivery, two workers, and other accounts' 404s.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { asRole, errorBody, signUp, type SignedUp } from '../../../test/helpers.js';
import {
  api,
  callingAccount,
  placeCall,
  startCallsApp,
  waitForCall,
  type CallingAccount,
  type CallsKit,
} from '../../../test/calls-kit.js';
import {
  closeReceivers,
  publishedWebhookBodies,
  startReceiver,
  type Received,
  type ReceiverOptions,
  type WebhookBodyCheck,
} from '../../../test/webhook-receiver.js';
import type { DomainEventInput } from '../../events/domain-events.js';
import { inTransaction } from '../../db/repo.js';
import { startJobWorkers } from '../../background.js';
import { verifyWebhook } from '../../webhook-verify.js';
import { WEBHOOK_EVENT_TYPES } from './webhooks.tables.js';
import { slowPlacesOf } from './webhooks.turns.js';

let kit: CallsKit;
let account: CallingAccount;
let user: SignedUp;
let other: SignedUp;
const receivers: Array<{ close(): Promise<void> }> = [];
let bodies: WebhookBodyCheck;

const PHONES = { answers: '+14155550100', busy: '+14155550126' };
const nowSec = () => Math.floor(kit.clock.now().getTime() / 1000);

before(async () => {
  kit = await startCallsApp({ env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
  account = await callingAccount(kit.t, [{ phone: PHONES.answers }, { phone: PHONES.busy }]);
  user = account.user;
  other = await signUp(kit.t.app);
  bodies = await publishedWebhookBodies(kit.t.app);
});

after(async () => {
  await kit.t.services.webhooks.close();
  await kit.close();
  await closeReceivers(receivers);
});

async function receiver(options: Pick<ReceiverOptions, 'status' | 'answerAfter'> = {}) {
  let secret = '';
  const started = await startReceiver({ secret: () => secret, nowSec, bodies, ...options });
  receivers.push(started);
  return Object.assign(started, { setSecret: (value: string) => void (secret = value) });
}

async function createEndpoint(target: Awaited<ReturnType<typeof receiver>>, body: Record<string, unknown> = {}) {
  const created = await api(kit.t, user).ok('POST', '/webhooks', { url: target.url, ...body });
  target.setSecret(created.secret);
  return created as { id: string; secret: string };
}

type DeliveryView = {
  id: string;
  eventType: string;
  state: string;
  nextAttemptAt: string | null;
  attempts: Array<{
    number: number;
    startedAt: string;
    finishedAt: string | null;
    statusCode: number | null;
    latencyMs: number | null;
    error: string | null;
    responseBody: string | null;
  }>;
};

const deliveries = async (webhookId: string, query = '', who: SignedUp = user): Promise<DeliveryView[]> =>
  (await api(kit.t, who).ok('GET', `/webhooks/${webhookId}/deliveries?limit=500${query}`)).deliveries;
const delivery = (webhookId: string, deliveryId: string): Promise<DeliveryView> =>
  api(kit.t, user).ok('GET', `/webhooks/${webhookId}/deliveries/${deliveryId}`);

/** Polls until `check` answers something truthy (the work happens in job workers). */
async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined | false> | T | undefined | false,
): Promise<T> {
  for (let i = 0; i < 600; i++) {
    const value = await check();
    if (value) return value;
    await sleep(50);
  }
  throw new Error(`gave up waiting for ${what}`);
}

async function sendTest(webhookId: string) {
  const { deliveryId } = await api(kit.t, user).ok('POST', `/webhooks/${webhookId}/test`);
  return deliveryId as string;
}

/**
 * Waits for `count` finished attempts. An attempt's end and its delivery's next state commit together, but a view
 * reads the delivery before its attempts: the view read after the attempts showed finished has the settled state.
 */
async function attemptsDone(webhookId: string, deliveryId: string, count: number) {
  await waitFor(`${count} finished attempts of ${deliveryId}`, async () => {
    const view = await delivery(webhookId, deliveryId);
    return view.attempts.filter((a) => a.finishedAt).length >= count && view.attempts.length === count;
  });
  return delivery(webhookId, deliveryId);
}

/** A domain event written through the outbox, as the campaigns module writes its own. */
function emit(event: DomainEventInput) {
  return inTransaction(kit.t.infra.database.db, (trx) => kit.t.services.outbox(trx).emit(event));
}

test('an endpoint: the secret is shown once, its state is listed, bad input is refused, other accounts get 404', async () => {
  const target = await receiver();
  const created = await createEndpoint(target, { description: 'CRM sync' });
  assert.match(created.secret, /^whsec_[A-Za-z0-9_-]{43,}$/);
  assert.deepEqual((created as unknown as { events: string[] }).events, [...WEBHOOK_EVENT_TYPES]);
  const { ok, send } = api(kit.t, user);
  const read = await send('GET', `/webhooks/${created.id}`);
  assert.equal(read.statusCode, 200);
  assert.ok(!read.body.includes(created.secret) && !('secret' in read.json()));
  assert.deepEqual(
    {
      enabled: read.json().enabled,
      failureStreak: read.json().failureStreak,
      disabledReason: read.json().disabledReason,
      description: read.json().description,
    },
    { enabled: true, failureStreak: 0, disabledReason: null, description: 'CRM sync' },
  );
  const list = await send('GET', '/webhooks');
  assert.ok(!list.body.includes(created.secret));
  assert.ok(list.json().webhooks.some((w: { id: string }) => w.id === created.id));
  const stored = await kit.t.infra.database.db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('id', '=', created.id)
    .executeTakeFirstOrThrow();
  assert.ok(!JSON.stringify(stored).includes(created.secret.slice(6)), 'the secret is stored encrypted');

  const before = (await ok('GET', '/webhooks')).total;
  for (const body of [
    { url: 'ftp://example.com/hook' },
    { url: 'not a url' },
    { url: target.url, events: ['agent.created'] },
    { url: target.url, events: [] },
    { url: 'https://user:pw@example.com/hook' },
    { url: target.url, surprise: true },
  ]) {
    const refused = await send('POST', '/webhooks', body);
    assert.equal(refused.statusCode, 400, JSON.stringify(body));
    assert.equal(errorBody(refused).error, 'validation_failed');
  }
  assert.equal((await ok('GET', '/webhooks')).total, before, 'nothing written');

  const stranger = api(kit.t, other);
  const delivered = await sendTest(created.id);
  for (const [method, url, body] of [
    ['GET', `/webhooks/${created.id}`],
    ['PATCH', `/webhooks/${created.id}`, { enabled: false }],
    ['DELETE', `/webhooks/${created.id}`],
    ['POST', `/webhooks/${created.id}/test`],
    ['POST', `/webhooks/${created.id}/rotate-secret`],
    ['GET', `/webhooks/${created.id}/deliveries`],
    ['GET', `/webhooks/${created.id}/deliveries/${delivered}`],
    ['POST', `/webhooks/${created.id}/deliveries/${delivered}/redeliver`],
    ['POST', `/webhooks/${created.id}/deliveries/redeliver`, { since: '2020-01-01T00:00:00Z' }],
  ] as const) {
    const response = await stranger.send(method, url, body);
    assert.equal(response.statusCode, 404, `${method} ${url}`);
    assert.equal(errorBody(response).error, 'not_found');
  }
  assert.equal((await ok('GET', `/webhooks/${created.id}`)).enabled, true);

  // A viewer reads endpoints but cannot add one.
  const viewer = await asRole(kit.t, user, 'viewer');
  assert.equal((await api(kit.t, viewer).send('GET', '/webhooks')).statusCode, 200);
  assert.equal((await api(kit.t, viewer).send('POST', '/webhooks', { url: target.url })).statusCode, 403);
  await attemptsDone(created.id, delivered, 1);
  await ok('DELETE', `/webhooks/${created.id}`);
});

/** The request as the README documents it: headers, signature, body fields. */
function assertSignedAsDocumented(r: Received) {
  assert.equal(r.headers['content-type'], 'application/json');
  assert.equal(r.headers['user-agent'], 'Service-Webhook/1.0');
  assert.equal(r.headers['x-service-event'], r.body.type);
  assert.equal(r.headers['x-service-delivery'], r.body.id);
  const signature = String(r.headers['x-service-signature']);
  assert.match(signature, /^t=\d+,v1=[0-9a-f]{64}$/);
  assert.equal(signature.slice(2, signature.indexOf(',')), r.headers['x-service-timestamp']);
  assert.deepEqual(Object.keys(r.body).sort(), ['data', 'id', 'occurredAt', 'type']);
  assert.ok(!Number.isNaN(Date.parse(r.body.occurredAt)) && r.body.occurredAt.endsWith('Z'));
  assert.equal(verifyWebhook(r.rawBody, r.headers, 'whsec_wrong', { nowSec: nowSec() }).valid, false);
}

/** Waits until every delivery of the endpoint is recorded, each succeeded at its first attempt; answers how many. */
async function deliveredOnceEach(webhookId: string) {
  // The receiver answered before each delivery's state was recorded.
  const log = await waitFor('every delivery recorded', async () => {
    const all = await deliveries(webhookId);
    return all.every((d) => d.state !== 'pending') && all;
  });
  for (const d of log) {
    assert.equal(d.state, 'succeeded');
    assert.equal(d.attempts.length, 1);
    assert.equal(d.attempts[0]!.statusCode, 200);
    assert.equal(d.attempts[0]!.responseBody, 'ok');
    assert.ok(Number.isInteger(d.attempts[0]!.latencyMs));
  }
  return log.length;
}

test('every event type reaches the endpoint signed as documented; the events of a call arrive in order', async () => {
  const target = await receiver();
  const endpoint = await createEndpoint(target);
  const answered = await placeCall(kit.t, account, PHONES.answers);
  const completed = await waitForCall(kit.t, user, answered);
  assert.equal(completed.status, 'completed');
  const busy = await placeCall(kit.t, account, PHONES.busy);
  await waitForCall(kit.t, user, busy);
  const campaignId = '00000000-0000-4000-8000-00000000c0de';
  await emit({
    type: 'campaign.started',
    accountId: user.accountId,
    subject: { type: 'campaign', id: campaignId },
    data: { campaignId, name: 'Spring', agentId: account.agentId },
    actor: null,
  });
  await emit({
    type: 'campaign.compliance_paused',
    accountId: user.accountId,
    subject: { type: 'campaign', id: campaignId },
    data: { campaignId, abandonRate: 0.04, threshold: 0.035, window: '30d', abandoned: 4, liveAnswered: 100 },
    actor: null,
  });

  const byType = await waitFor('every event type', () => {
    const types = new Set(target.received.map((r) => r.body.type));
    return WEBHOOK_EVENT_TYPES.every((type) => types.has(type)) && target.received.length >= 6 && types;
  });
  assert.deepEqual([...byType].sort(), [...WEBHOOK_EVENT_TYPES].sort());
  assert.deepEqual(target.rejected, [], 'every signature verified');
  assert.deepEqual(target.invalid, [], 'every body as the API document publishes it');

  for (const r of target.received) assertSignedAsDocumented(r);

  const ofCall = target.received.filter((r) => r.body.data.callId === answered).map((r) => r.body.type);
  assert.deepEqual(ofCall, ['call.queued', 'call.connected', 'call.completed'], 'in the order they happened');
  const done = target.received.find((r) => r.body.type === 'call.completed')!.body.data;
  assert.deepEqual(Object.keys(done).sort(), [
    'agentId',
    'analysis',
    'callId',
    'contactId',
    'disposition',
    'durationSeconds',
    'recordingUrl',
    'status',
  ]);
  assert.deepEqual(
    {
      callId: done.callId,
      agentId: done.agentId,
      contactId: done.contactId,
      status: done.status,
      durationSeconds: done.durationSeconds,
      disposition: done.disposition,
    },
    {
      callId: answered,
      agentId: account.agentId,
      contactId: account.contacts.get(PHONES.answers),
      status: 'completed',
      durationSeconds: completed.durationSeconds,
      disposition: completed.disposition,
    },
  );
  if (completed.recordingStorageKey) {
    assert.match(
      String(done.recordingUrl),
      new RegExp(`/api/v1/calls/${answered}/recording\\.wav\\?expires=\\d+&signature=[0-9a-f]{64}$`),
    );
  } else {
    assert.equal(done.recordingUrl, null);
  }
  const failed = target.received.find((r) => r.body.type === 'call.failed')!.body.data;
  assert.equal(failed.callId, busy);
  assert.deepEqual(target.received.find((r) => r.body.type === 'campaign.compliance_paused')!.body.data, {
    campaignId,
    abandonRate: 0.04,
    threshold: 0.035,
    windowDays: 30,
  });

  assert.ok((await deliveredOnceEach(endpoint.id)) >= 6);
  assert.equal((await deliveries(endpoint.id, '&eventType=call.failed')).length, 1);
  assert.equal((await deliveries(endpoint.id, '&state=failed')).length, 0);
  await api(kit.t, user).ok('DELETE', `/webhooks/${endpoint.id}`);
});

// How the streak is counted (a success resets it, the order attempts ended in) is in webhooks.rules.test.ts.
test('ten failed attempts in a row disable an endpoint with the reason; enabling again clears it', async () => {
  const target = await receiver({ status: () => 503 });
  const endpoint = await createEndpoint(target, { events: ['campaign.started'] });
  const { ok, send } = api(kit.t, user);
  for (let i = 1; i <= 9; i++) await attemptsDone(endpoint.id, await sendTest(endpoint.id), 1);
  const nine = await ok('GET', `/webhooks/${endpoint.id}`);
  assert.deepEqual([nine.enabled, nine.failureStreak, nine.disabledReason], [true, 9, null]);
  await attemptsDone(endpoint.id, await sendTest(endpoint.id), 1);
  const disabled = await ok('GET', `/webhooks/${endpoint.id}`);
  assert.equal(disabled.enabled, false);
  assert.equal(disabled.failureStreak, 10);
  assert.match(disabled.disabledReason, /10 consecutive failed deliveries; the last: HTTP 503 at \d{4}-\d\d-\d\dT/);
  assert.ok(disabled.disabledAt);
  assert.equal((await deliveries(endpoint.id, '&state=pending')).length, 0, 'pending retries stop');
  assert.ok((await deliveries(endpoint.id, '&state=failed')).length >= 9);

  const refused = await send('POST', `/webhooks/${endpoint.id}/test`);
  assert.equal(refused.statusCode, 409);
  const enabled = await ok('PATCH', `/webhooks/${endpoint.id}`, { enabled: true });
  assert.deepEqual(
    [enabled.enabled, enabled.failureStreak, enabled.disabledReason, enabled.disabledAt],
    [true, 0, null, null],
  );
  await ok('DELETE', `/webhooks/${endpoint.id}`);
});

test('a dead endpoint holds a batch for ten failed attempts, not for all of its deliveries', async () => {
  const target = await receiver({ status: () => 500 });
  const endpoint = await createEndpoint(target, { events: ['campaign.started'] });
  // Forty deliveries written in one transaction: the dispatcher claims them in one batch.
  await inTransaction(kit.t.infra.database.db, async (trx) => {
    for (let i = 0; i < 40; i++) {
      const campaignId = `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
      await kit.t.services.outbox(trx).emit({
        type: 'campaign.started',
        accountId: user.accountId,
        subject: { type: 'campaign', id: campaignId },
        data: { campaignId, name: `Dead ${i}`, agentId: campaignId },
        actor: null,
      });
    }
  });
  const disabled = await waitFor('the endpoint disabled', async () => {
    const view = await api(kit.t, user).ok('GET', `/webhooks/${endpoint.id}`);
    return !view.enabled && view;
  });
  assert.match(disabled.disabledReason, /10 consecutive failed deliveries/);
  const log = await deliveries(endpoint.id);
  assert.equal(log.length, 40);
  assert.deepEqual(
    log.filter((d) => d.state !== 'failed').map((d) => d.state),
    [],
    'every delivery stopped with the endpoint',
  );
  const attempted = log.filter((d) => d.attempts.length > 0).length;
  // Ten failures in a row stop the batch's sending; the attempts already under way (WEBHOOK_CONCURRENCY) still end.
  assert.ok(attempted >= 10 && attempted < 10 + 8, `${attempted} attempted`);
  assert.equal(target.received.length, attempted);
  await api(kit.t, user).ok('DELETE', `/webhooks/${endpoint.id}`);
});

test('a slow endpoint with a backlog does not hold back another: endpoints take turns for the requests', async () => {
  // The slow endpoint answers nothing until the test lets it: whatever the machine's speed, the other endpoint is
  // served while every request to the slow one is still waiting for its answer.
  let answerSlow = () => {};
  const slowAnswers = new Promise<void>((resolve) => (answerSlow = resolve));
  const slow = await receiver({ answerAfter: () => slowAnswers });
  const fast = await receiver();
  const slowEndpoint = await createEndpoint(slow, { events: ['campaign.started'] });
  const fastEndpoint = await createEndpoint(fast, { events: ['campaign.compliance_paused'] });
  const emitAll = (type: 'campaign.started' | 'campaign.compliance_paused', count: number) =>
    inTransaction(kit.t.infra.database.db, async (trx) => {
      for (let i = 0; i < count; i++) {
        const campaignId = randomUUID();
        const envelope = { accountId: user.accountId, subject: { type: 'campaign', id: campaignId }, actor: null };
        await kit.t.services.outbox(trx).emit(
          type === 'campaign.started'
            ? { ...envelope, type, data: { campaignId, name: `Turns ${i}`, agentId: campaignId } }
            : {
                ...envelope,
                type,
                data: {
                  campaignId,
                  abandonRate: 0.04,
                  threshold: 0.035,
                  window: '30d',
                  abandoned: 4,
                  liveAnswered: 96,
                },
              },
        );
      }
    });
  // An endpoint not known to answer quickly holds at most half the places, less one kept for other accounts and one
  // for its account's other endpoints.
  const slowPlaces = slowPlacesOf(kit.t.config.webhooks.concurrencyPerWorker) - 2;
  try {
    // The other endpoint has answered quickly before.
    await emitAll('campaign.compliance_paused', 1);
    await waitFor('the other endpoint answering', () => fast.received.length === 1);
    // The slow endpoint's backlog takes every place one endpoint may hold, each waiting for its answer, and more of its
    // deliveries wait for a place, when five deliveries for the other endpoint are written.
    await emitAll('campaign.started', 40);
    await emitAll('campaign.started', 40);
    await waitFor('the slow endpoint holding its places', () => slow.received.length === slowPlaces);
    await emitAll('campaign.compliance_paused', 5);
    // Waiting in line they would follow the slow endpoint's answers: they are claimed beside its waiting backlog and
    // sent at once, on the places kept for endpoints that answer.
    await waitFor('the other endpoint served', () => fast.received.length === 6);
    assert.equal(slow.received.length, slowPlaces, 'no more requests went to the slow endpoint meanwhile');
  } finally {
    answerSlow();
  }
  await waitFor('the slow backlog delivered', () => slow.received.length === 80);
  await api(kit.t, user).ok('DELETE', `/webhooks/${slowEndpoint.id}`);
  await api(kit.t, user).ok('DELETE', `/webhooks/${fastEndpoint.id}`);
});

test('a redirect is not followed: it is a failed attempt', async () => {
  const target = await receiver({ status: () => 302 });
  const endpoint = await createEndpoint(target, { events: ['campaign.started'] });
  const view = await attemptsDone(endpoint.id, await sendTest(endpoint.id), 1);
  assert.equal(view.attempts[0]!.statusCode, 302);
  assert.match(String(view.attempts[0]!.error), /redirect to .* not followed/);
  assert.equal(view.state, 'pending');
  assert.equal(target.received.length, 1);
  await api(kit.t, user).ok('DELETE', `/webhooks/${endpoint.id}`);
});

test('a rotated secret: both signatures are sent while the old one overlaps, then only the new one', async () => {
  const target = await receiver();
  const endpoint = await createEndpoint(target, { events: ['campaign.started'] });
  const oldSecret = endpoint.secret;
  const rotated = await api(kit.t, user).ok('POST', `/webhooks/${endpoint.id}/rotate-secret`);
  assert.match(rotated.secret, /^whsec_/);
  assert.notEqual(rotated.secret, oldSecret);
  assert.equal(Date.parse(rotated.previousSecretValidUntil) - kit.clock.now().getTime(), 24 * 3600_000);
  const read = await api(kit.t, user).send('GET', `/webhooks/${endpoint.id}`);
  assert.ok(!read.body.includes(rotated.secret));
  assert.equal(read.json().secretRotatedUntil, rotated.previousSecretValidUntil);
  target.setSecret(rotated.secret);
  const id = await sendTest(endpoint.id);
  await attemptsDone(endpoint.id, id, 1);
  const got = target.received.find((r) => r.deliveryId === id)!;
  const [t, v1New, v1Old] = String(got.headers['x-service-signature']).split(',');
  assert.match(`${t},${v1New},${v1Old}`, /^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
  assert.ok(verifyWebhook(got.rawBody, got.headers, rotated.secret, { nowSec: nowSec() }).valid);
  assert.ok(
    verifyWebhook(got.rawBody, got.headers, oldSecret, { nowSec: nowSec() }).valid,
    'a receiver still on the old secret verifies too',
  );
  assert.deepEqual(verifyWebhook(got.rawBody, got.headers, rotated.secret, { nowSec: nowSec() + 301 }), {
    valid: false,
    reason: 'timestamp_out_of_tolerance',
  });

  kit.clock.advance(24 * 3600_000);
  assert.equal((await api(kit.t, user).ok('GET', `/webhooks/${endpoint.id}`)).secretRotatedUntil, null);
  const later = await sendTest(endpoint.id);
  await attemptsDone(endpoint.id, later, 1);
  const after = target.received.find((r) => r.deliveryId === later)!;
  assert.match(String(after.headers['x-service-signature']), /^t=\d+,v1=[0-9a-f]{64}$/, 'only the new secret signs');
  assert.equal(verifyWebhook(after.rawBody, after.headers, oldSecret, { nowSec: nowSec() }).valid, false);
  await api(kit.t, user).ok('DELETE', `/webhooks/${endpoint.id}`);
});

test('redelivery sends the same id again, and two workers never make one attempt twice', async () => {
  const target = await receiver();
  const endpoint = await createEndpoint(target, { events: ['campaign.started'] });
  const second = await startJobWorkers({
    db: kit.t.infra.database.db,
    services: kit.t.services,
    log: pino({ level: 'silent' }),
    pollingIntervalSeconds: 0.5,
  });
  try {
    const ids = [];
    for (let i = 0; i < 12; i++) ids.push(await sendTest(endpoint.id));
    for (const id of ids) await attemptsDone(endpoint.id, id, 1);
    const counts = new Map<string, number>();
    for (const r of target.received) counts.set(r.deliveryId, (counts.get(r.deliveryId) ?? 0) + 1);
    assert.deepEqual(
      ids.map((id) => counts.get(id)),
      ids.map(() => 1),
      'each delivery arrived once',
    );

    // A redelivery taken by both workers and by three direct callers at once: one attempt.
    const [id] = ids;
    const redelivered = await api(kit.t, user).ok('POST', `/webhooks/${endpoint.id}/deliveries/${id}/redeliver`);
    assert.deepEqual(redelivered, { deliveryId: id, state: 'pending' });
    await Promise.all([1, 2, 3].map(() => kit.t.services.webhooks.dispatchDue()));
    const view = await waitFor('the redelivery', async () => {
      const v = await delivery(endpoint.id, id!);
      return v.state === 'succeeded' && v.attempts.length === 2 && v;
    });
    assert.deepEqual(
      view.attempts.map((a) => a.number),
      [1, 2],
    );
    const copies = target.received.filter((r) => r.deliveryId === id);
    assert.equal(copies.length, 2);
    assert.deepEqual(
      copies.map((c) => c.duplicate),
      [false, true],
      'the receiver dedupes the same id',
    );
  } finally {
    await second.stop(5_000);
  }
  await api(kit.t, user).ok('DELETE', `/webhooks/${endpoint.id}`);
});

test('a failing delivery retries after 5, 30 and 120 s with the same id and fresh signatures, then is abandoned; bulk redelivery sends it again', async () => {
  let status = 500;
  const target = await receiver({ status: () => status });
  const endpoint = await createEndpoint(target, { events: ['campaign.started'] });
  const id = await sendTest(endpoint.id);
  let view = await attemptsDone(endpoint.id, id, 1);
  for (const [index, delay] of [5, 30, 120].entries()) {
    const last = view.attempts[index]!;
    assert.equal(view.state, 'pending');
    assert.equal(
      Date.parse(view.nextAttemptAt!) - Date.parse(last.finishedAt!),
      delay * 1000,
      `retry ${index + 1} after ${delay} s: ${JSON.stringify(view)} at ${kit.clock.now().toISOString()}`,
    );
    kit.clock.advance(delay * 1000 - 1);
    await kit.t.services.webhooks.dispatchDue();
    assert.equal((await delivery(endpoint.id, id)).attempts.length, index + 1, 'not due yet');
    kit.clock.advance(1);
    await kit.t.services.webhooks.dispatchDue();
    view = await attemptsDone(endpoint.id, id, index + 2);
    assert.equal(Date.parse(view.attempts[index + 1]!.startedAt) - Date.parse(last.finishedAt!), delay * 1000);
  }
  assert.equal(view.state, 'abandoned');
  assert.equal(view.nextAttemptAt, null);
  assert.deepEqual(
    view.attempts.map((a) => a.statusCode),
    [500, 500, 500, 500],
  );
  assert.equal(view.attempts[0]!.responseBody, 'no thanks (500)');
  const sent = target.received.filter((r) => r.deliveryId === id);
  assert.equal(sent.length, 4);
  assert.equal(
    new Set(sent.map((r) => r.headers['x-service-timestamp'])).size,
    4,
    'a fresh timestamp and signature each time',
  );
  assert.equal(new Set(sent.map((r) => r.rawBody)).size, 1, 'the same body');
  assert.equal((await deliveries(endpoint.id, '&state=abandoned')).length, 1);

  status = 200;
  const bulk = await api(kit.t, user).ok('POST', `/webhooks/${endpoint.id}/deliveries/redeliver`, {
    since: new Date(kit.clock.now().getTime() - 3600_000).toISOString(),
  });
  assert.deepEqual(bulk, { redelivered: 1 });
  view = await waitFor('the bulk redelivery', async () => {
    const v = await delivery(endpoint.id, id);
    return v.state === 'succeeded' && v;
  });
  assert.equal(view.attempts.length, 5);
  assert.equal(target.received.filter((r) => r.deliveryId === id).length, 5);
});

test('deleting an endpoint stops its pending deliveries', async () => {
  const target = await receiver({ status: () => 500 });
  const endpoint = await createEndpoint(target, { events: ['campaign.started'] });
  const id = await sendTest(endpoint.id);
  await attemptsDone(endpoint.id, id, 1);
  await api(kit.t, user).ok('DELETE', `/webhooks/${endpoint.id}`);
  kit.clock.advance(5_000);
  await kit.t.services.webhooks.dispatchDue();
  const left = await kit.t.infra.database.db
    .selectFrom('webhook_deliveries')
    .select('id')
    .where('endpoint_id', '=', endpoint.id)
    .execute();
  assert.deepEqual(left, []);
  assert.equal(target.received.length, 1);
});

test('delivery records are kept 30 days, then pruned', async () => {
  const target = await receiver();
  const endpoint = await createEndpoint(target, { events: ['campaign.started'] });
  const id = await sendTest(endpoint.id);
  await attemptsDone(endpoint.id, id, 1);
  kit.clock.advance(29 * 86_400_000);
  await kit.t.services.webhooks.prune();
  assert.equal((await deliveries(endpoint.id)).length, 1, 'kept for 30 days');
  kit.clock.advance(2 * 86_400_000);
  assert.ok((await kit.t.services.webhooks.prune()) >= 1);
  assert.deepEqual(await deliveries(endpoint.id), []);
});
