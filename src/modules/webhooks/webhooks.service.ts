/**
 * Outbound webhooks. Each domain event an endpoint subscribes to becomes one delivery (id = the body's id and
 * X-Service-Delivery), written inside the event's own transaction: the delivery exists exactly when the event does,
 * and nothing is lost to a crash. A dispatcher loop in every worker process claims due deliveries in batches (one
 * statement starts a batch of attempts, one transaction records how they ended), so two workers never make the same
 * attempt. Failures retry after 5 s, 30 s and 120 s, then the delivery is abandoned; 10 failed attempts in a row
 * across deliveries disable the endpoint.
 */
import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes } from 'node:crypto';
import type { WebhooksConfig } from '../../config.js';
import { AppError, invalidField, notFound } from '../../http/errors.js';
import type { Auth } from '../../http/auth.js';
import { envelope, type Page } from '../../http/pagination.js';
import type { Clock } from '../../lib/clock.js';
import { createFairLimiter, type FairLimiter } from '../../lib/concurrency.js';
import type { WorkerLoopContext } from '../../jobs/define.js';
import { newId } from '../../lib/ids.js';
import type { DomainEvent } from '../../events/domain-events.js';
import type { TxHandle } from '../../db/repo.js';
import { workAdded } from '../../jobs/wake.js';
import type { CallsService } from '../calls/calls.service.js';
import { createWebhookSender, refusalOf, type Lookup, type WebhookSender } from './webhook-http.js';
import type {
  AttemptOutcome,
  ClaimedDelivery,
  ClaimScope,
  DeliveryRow,
  EndpointRow,
  NewDelivery,
  WebhooksRepo,
  WebhooksTx,
} from './webhooks.repo.js';
import {
  MAX_WEBHOOKS_PER_ACCOUNT,
  type CreateWebhookInput,
  type ListDeliveriesQuery,
  type RedeliverSinceInput,
  type UpdateWebhookInput,
} from './webhooks.schemas.js';
import { TEST_EVENT_TYPE, WEBHOOK_EVENT_TYPES, type AttemptRecord, type WebhookEventType } from './webhooks.tables.js';

/** Waits before the retries of a failed delivery, in seconds; after the last one fails the delivery is abandoned. */
export const RETRY_DELAYS_SECONDS = [5, 30, 120] as const;
/** Consecutive failed attempts (across deliveries) that disable an endpoint. */
export const AUTO_DISABLE_AFTER = 10;
/**
 * A batch's lease: renewed while its dispatcher works, so one that runs out belonged to a process that died, and its
 * attempts are made again. Longer than the 10 s timeout of one attempt.
 */
const ATTEMPT_LEASE_MS = 60_000;
/** How often a dispatcher looks for leases that ran out (a statement per claim would cost as much as the claim). */
const TAKE_OVER_EVERY_MS = 10_000;
/**
 * Deliveries one dispatcher lane claims per statement. Each batch costs about ten statements whatever its size, which
 * the embedded database feels (half a millisecond or more each); larger batches wait longer behind a slow endpoint.
 */
const DISPATCH_BATCH = 250;
/**
 * Dispatcher lanes per worker process: one sends a batch while another claims or records one. One more, the quick
 * lane, serves only endpoints whose last attempt was quick, so their work is not held back while the other lanes wait
 * on slow receivers (a new endpoint's first delivery goes through the other lanes).
 */
const DISPATCH_LANES = 2;
/** An attempt that took this long makes its endpoint slow for the quick lane, until an attempt is quick again. */
const SLOW_ATTEMPT_MS = 1_000;
/**
 * How long a batch starts attempts: those not started by then stay due for the next batch. A batch is recorded once
 * its last attempt ends, so a slow receiver holds its lane for at most this plus one attempt's timeout.
 */
const BATCH_SENDING_MS = 15_000;
/** The worker loop that sends deliveries; a commit that adds due deliveries wakes it. */
export const DISPATCH_LOOP = 'webhooks.dispatch';
export const USER_AGENT = 'Service-Webhook/1.0';

export interface WebhooksDeps {
  repo: WebhooksRepo;
  clock: Clock;
  config: WebhooksConfig;
  /** Where signed recording URLs point: the public origin of the API. */
  publicOrigin: string;
  calls: Pick<CallsService, 'recordingUrlFor'>;
  /** Name resolution for target checks (tests give their own). */
  lookup?: Lookup;
}

const isWebhookEvent = (type: string): type is WebhookEventType =>
  (WEBHOOK_EVENT_TYPES as readonly string[]).includes(type);
/** An attempt made by the dispatcher, as it ended. */
interface EndedAttempt {
  delivery: ClaimedDelivery;
  startedAt: Date;
  finishedAt: Date;
  statusCode: number | null;
  latencyMs: number | null;
  error: string | null;
  responseExcerpt: string | null;
}

const attemptSucceeded = (attempt: EndedAttempt) =>
  attempt.error === null && attempt.statusCode !== null && attempt.statusCode >= 200 && attempt.statusCode < 300;
const hmacHex = (secret: string, body: string) => createHmac('sha256', secret).update(body).digest('hex');
const newSecret = () => `whsec_${randomBytes(32).toString('base64url')}`;

/** The body of each event type: the fields receivers rely on, taken from the domain event. */
async function payloadOf(
  event: DomainEvent,
  calls: WebhooksDeps['calls'],
  origin: string,
  within: TxHandle,
): Promise<Record<string, unknown>> {
  const d = event.data as Record<string, unknown>;
  const base = {
    callId: d.callId ?? event.subject.id,
    agentId: d.agentId ?? null,
    contactId: d.contactId ?? null,
    status: d.status ?? null,
  };
  switch (event.type) {
    case 'call.queued':
      return { ...base, direction: d.direction ?? null };
    case 'call.connected':
      return { ...base, direction: d.direction ?? null, answeredBy: d.answeredBy ?? null };
    case 'call.completed': {
      const recordingUrl = d.hasRecording
        ? await calls.recordingUrlFor(event.accountId, String(base.callId), origin, within)
        : null;
      return { ...base, durationSeconds: d.durationSeconds ?? null, disposition: d.disposition ?? null, recordingUrl };
    }
    case 'call.failed':
      return {
        ...base,
        durationSeconds: d.durationSeconds ?? null,
        disposition: d.disposition ?? null,
        endReason: d.endReason ?? null,
      };
    default:
      // Campaign events carry what the campaigns module wrote.
      return d;
  }
}

export function createWebhooksService(deps: WebhooksDeps) {
  const { repo, clock, config, calls } = deps;
  const policy = {
    allowHttp: config.allowHttp,
    allowPrivate: config.allowPrivate,
    ...(deps.lookup ? { lookup: deps.lookup } : {}),
  };
  let sender: WebhookSender | undefined;
  const http = () => (sender ??= createWebhookSender(policy));

  // Signing secrets are stored encrypted (AES-256-GCM) under WEBHOOK_SECRET_KEY, or a key generated once and kept
  // in the database; either way signing needs the secret itself, so a hash cannot do.
  let key: Promise<Buffer> | undefined;
  const encryptionKey = () =>
    (key ??= (
      config.secretKey ? Promise.resolve(config.secretKey) : repo.encryptionKey(randomBytes(32).toString('base64url'))
    )
      .then((material) => createHash('sha256').update(material).digest())
      .catch((error: unknown) => {
        key = undefined;
        throw error;
      }));
  async function encrypt(secret: string): Promise<string> {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', await encryptionKey(), iv);
    const data = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), data.toString('base64url')].join(
      ':',
    );
  }
  // Decrypted secrets by their stored form (which changes with every rotation), so a busy endpoint decrypts once.
  const decrypted = new Map<string, string>();
  async function decrypt(stored: string): Promise<string> {
    const known = decrypted.get(stored);
    if (known !== undefined) return known;
    const secret = await decryptNow(stored);
    if (decrypted.size >= 1000) decrypted.clear();
    decrypted.set(stored, secret);
    return secret;
  }
  async function decryptNow(stored: string): Promise<string> {
    const [, iv, tag, data] = stored.split(':');
    const decipher = createDecipheriv('aes-256-gcm', await encryptionKey(), Buffer.from(iv!, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag!, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(data!, 'base64url')), decipher.final()]).toString('utf8');
  }

  type Secrets = Pick<EndpointRow, 'secret_encrypted' | 'previous_secret_encrypted' | 'previous_secret_expires_at'>;
  const rotationActive = (row: Secrets, now: Date) =>
    row.previous_secret_encrypted !== null &&
    row.previous_secret_expires_at !== null &&
    row.previous_secret_expires_at > now;

  const toWebhook = (row: EndpointRow) => ({
    id: row.id,
    url: row.url,
    description: row.description,
    events: row.events as WebhookEventType[],
    enabled: row.enabled,
    failureStreak: row.failure_streak,
    disabledReason: row.disabled_reason,
    disabledAt: row.disabled_at?.toISOString() ?? null,
    secretRotatedUntil: rotationActive(row, clock.now()) ? row.previous_secret_expires_at!.toISOString() : null,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  });

  async function checkUrl(url: string) {
    const refusal = await refusalOf(url, policy);
    if (refusal) throw invalidField('body/url', refusal);
  }

  async function requireEndpoint(accountId: string, id: string) {
    const row = await repo.findEndpoint(accountId, id);
    if (!row) throw notFound('Webhook');
    return row;
  }

  /** Signs the body under the current secret, and under the previous one while a rotation overlaps. */
  async function signatureFor(endpoint: Secrets, body: string, now: Date) {
    const t = Math.floor(now.getTime() / 1000);
    const secrets = [await decrypt(endpoint.secret_encrypted)];
    if (rotationActive(endpoint, now)) secrets.push(await decrypt(endpoint.previous_secret_encrypted!));
    return { t, header: [`t=${t}`, ...secrets.map((secret) => `v1=${hmacHex(secret, body)}`)].join(',') };
  }

  /** Each endpoint's failure streak after a batch of its attempts (in the order they ended); the 10th failure in a row disables it. */
  async function countStreaks(tx: WebhooksTx, attempts: EndedAttempt[]) {
    const byEndpoint = new Map<string, EndedAttempt[]>();
    for (const attempt of attempts) {
      const ended = byEndpoint.get(attempt.delivery.endpoint_id);
      if (ended) ended.push(attempt);
      else byEndpoint.set(attempt.delivery.endpoint_id, [attempt]);
    }
    for (const [endpointId, ended] of byEndpoint) {
      const accountId = ended[0]!.delivery.account_id;
      const endpoint = await tx.findEndpointForUpdate(accountId, endpointId);
      if (!endpoint) continue;
      let streak = endpoint.failure_streak;
      let disabledBy: EndedAttempt | undefined;
      for (const attempt of ended.sort((a, b) => a.finishedAt.getTime() - b.finishedAt.getTime())) {
        streak = attemptSucceeded(attempt) ? 0 : streak + 1;
        if (endpoint.enabled && !disabledBy && streak >= AUTO_DISABLE_AFTER) disabledBy = attempt;
      }
      if (disabledBy) {
        const reason = disabledBy.error ?? `HTTP ${disabledBy.statusCode}`;
        await tx.updateEndpoint(accountId, endpointId, {
          failure_streak: streak,
          enabled: false,
          disabled_reason: `Disabled after ${AUTO_DISABLE_AFTER} consecutive failed deliveries; the last: ${reason} at ${disabledBy.finishedAt.toISOString()}`,
          disabled_at: disabledBy.finishedAt,
          updated_at: disabledBy.finishedAt,
        });
        await tx.stopPendingOfEndpoint(accountId, endpointId, disabledBy.finishedAt);
      } else if (streak !== endpoint.failure_streak) {
        await tx.updateEndpoint(accountId, endpointId, { failure_streak: streak });
      }
    }
  }

  const iso = (time: string) => new Date(time).toISOString();
  const attemptsOf = (lines: string) =>
    lines
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as AttemptRecord);
  function deliveriesPage(rows: DeliveryRow[]) {
    return rows.map((row) => ({
      id: row.id,
      webhookId: row.endpoint_id,
      eventId: row.event_id,
      eventType: row.event_type,
      occurredAt: row.occurred_at.toISOString(),
      state: row.state,
      nextAttemptAt: row.state === 'pending' ? (row.next_attempt_at?.toISOString() ?? null) : null,
      attempts: attemptsOf(row.attempts).map((a) => ({
        number: a.number,
        startedAt: iso(a.startedAt),
        finishedAt: a.finishedAt === null ? null : iso(a.finishedAt),
        statusCode: a.statusCode,
        latencyMs: a.latencyMs,
        error: a.error ?? (a.finishedAt ? null : 'interrupted: the attempt did not finish (the worker stopped)'),
        responseBody: a.responseBody,
      })),
      createdAt: row.created_at.toISOString(),
    }));
  }

  /** A delivery of a body to one endpoint, due now. */
  function newDelivery(
    endpointId: string,
    event: {
      id: string | null;
      type: string;
      subjectId: string | null;
      occurredAt: Date;
      data: Record<string, unknown>;
    },
  ): NewDelivery {
    const id = newId();
    const now = clock.now();
    return {
      id,
      endpoint_id: endpointId,
      event_id: event.id,
      event_type: event.type,
      subject_id: event.subjectId,
      occurred_at: event.occurredAt,
      body: JSON.stringify({ id, type: event.type, occurredAt: event.occurredAt.toISOString(), data: event.data }),
      state: 'pending',
      next_attempt_at: now,
      created_at: now,
      updated_at: now,
    };
  }

  type DispatchEndpoint = Secrets & Pick<EndpointRow, 'url'>;

  /** Sends one claimed attempt; never throws (a failure is the attempt's result). */
  async function send(delivery: ClaimedDelivery, endpoint: DispatchEndpoint): Promise<EndedAttempt> {
    const startedAt = clock.now();
    const { t, header } = await signatureFor(endpoint, delivery.body, startedAt);
    const result = await http().post(
      endpoint.url,
      {
        'content-type': 'application/json',
        'user-agent': USER_AGENT,
        'x-service-event': delivery.event_type,
        'x-service-delivery': delivery.id,
        'x-service-timestamp': String(t),
        'x-service-signature': header,
      },
      delivery.body,
    );
    return {
      delivery,
      startedAt,
      finishedAt: clock.now(),
      statusCode: result.statusCode,
      latencyMs: result.latencyMs,
      error: result.error,
      responseExcerpt: result.responseExcerpt,
    };
  }

  /** Where an attempt's delivery goes next: delivered; due again after the retry's wait; or abandoned after the last. */
  function outcomeOf(attempt: EndedAttempt): AttemptOutcome {
    const { delivery, finishedAt } = attempt;
    const delay = RETRY_DELAYS_SECONDS[delivery.round_attempts - 1];
    return {
      deliveryId: delivery.id,
      attemptNumber: delivery.attempt_number,
      version: delivery.version,
      attempt: {
        number: delivery.attempt_number,
        startedAt: attempt.startedAt.toISOString(),
        finishedAt: finishedAt.toISOString(),
        statusCode: attempt.statusCode,
        latencyMs: attempt.latencyMs,
        error: attempt.error,
        responseBody: attempt.responseExcerpt,
      },
      ...(attemptSucceeded(attempt)
        ? { state: 'succeeded', nextAttemptAt: null }
        : delay === undefined
          ? { state: 'abandoned', nextAttemptAt: null }
          : { state: 'pending', nextAttemptAt: new Date(finishedAt.getTime() + delay * 1000) }),
    };
  }

  let nextTakeOverAt = 0;
  // Endpoints whose last attempt from this process was quick (in memory: each process learns them for itself).
  const quickEndpoints = new Set<string>();

  /**
   * One batch: claims due deliveries under one lease (renewed while the batch is sent), sends them through
   * `limited`, and records how they ended in one transaction, with the endpoints' failure streaks counted in the
   * order the attempts ended.
   */
  async function dispatchBatch(
    limit: number,
    limited: FairLimiter,
    serving: ClaimScope = 'any endpoint',
  ): Promise<{ attempted: number }> {
    if (serving !== 'any endpoint' && serving.only.length === 0) return { attempted: 0 };
    const now = clock.now();
    const lease = { id: newId(), until: new Date(now.getTime() + ATTEMPT_LEASE_MS) };
    const takeOver = now.getTime() >= nextTakeOverAt;
    if (takeOver) nextTakeOverAt = now.getTime() + TAKE_OVER_EVERY_MS;
    const { claimed, endpoints } = await repo.transaction(async (tx) => {
      if (takeOver) await tx.takeOverExpiredLeases(now);
      const claimed = await tx.claimDue(now, limit, lease, serving);
      const endpointIds = [...new Set(claimed.map((delivery) => delivery.endpoint_id))];
      const endpoints = endpointIds.length > 0 ? await tx.endpointsByIds(endpointIds) : [];
      return { claimed, endpoints: new Map(endpoints.map((endpoint) => [endpoint.id, endpoint])) };
    });
    if (claimed.length === 0) return { attempted: 0 };
    const renewal = setInterval(() => {
      repo.extendLease(lease.id, new Date(clock.now().getTime() + ATTEMPT_LEASE_MS)).catch(() => {
        // The next renewal tries again; a lease that runs out only means the batch's attempts are made again.
      });
    }, ATTEMPT_LEASE_MS / 3);
    renewal.unref();
    try {
      // An endpoint that fails 10 times in a row within the batch is disabled when the batch is recorded: its other
      // deliveries are not sent meanwhile, so a dead endpoint holds the batch (and the requests it shares) for a few
      // attempts, not for all of its deliveries. They stay pending, and disabling stops them.
      const failingInARow = new Map<string, number>();
      const stopStartingAt = performance.now() + BATCH_SENDING_MS;
      const attempt = async (delivery: ClaimedDelivery) => {
        if ((failingInARow.get(delivery.endpoint_id) ?? 0) >= AUTO_DISABLE_AFTER) return null;
        if (performance.now() > stopStartingAt) return null;
        // An endpoint is read in the claim's transaction, which only claims deliveries of enabled endpoints.
        const ended = await send(delivery, endpoints.get(delivery.endpoint_id)!);
        if ((ended.latencyMs ?? 0) < SLOW_ATTEMPT_MS) quickEndpoints.add(delivery.endpoint_id);
        else quickEndpoints.delete(delivery.endpoint_id);
        failingInARow.set(
          delivery.endpoint_id,
          attemptSucceeded(ended) ? 0 : (failingInARow.get(delivery.endpoint_id) ?? 0) + 1,
        );
        return ended;
      };
      // Endpoints take turns for the requests: a slow one cannot take them all while the others wait behind it.
      const ended = (
        await Promise.all(claimed.map((delivery) => limited(delivery.endpoint_id, () => attempt(delivery))))
      ).filter((made): made is EndedAttempt => made !== null);
      await repo.transaction(async (tx) => {
        // A lease that ran out was taken over: its attempts are already recorded as cut off, and made again.
        if (!(await tx.releaseLease(lease.id))) return;
        await tx.recordOutcomes(ended.map(outcomeOf), clock.now());
        await countStreaks(tx, ended);
      });
      return { attempted: ended.length };
    } finally {
      clearInterval(renewal);
    }
  }

  return {
    async create(auth: Auth, input: CreateWebhookInput) {
      await checkUrl(input.url);
      if ((await repo.countEndpoints(auth.accountId)) >= MAX_WEBHOOKS_PER_ACCOUNT) {
        throw new AppError(
          'conflict',
          `An account can have at most ${MAX_WEBHOOKS_PER_ACCOUNT} webhook endpoints; delete one first`,
        );
      }
      const secret = newSecret();
      const now = clock.now();
      const row = await repo.insertEndpoint(auth.accountId, {
        id: newId(),
        url: input.url,
        description: input.description ?? null,
        events: JSON.stringify(input.events ?? [...WEBHOOK_EVENT_TYPES]),
        enabled: input.enabled ?? true,
        secret_encrypted: await encrypt(secret),
        previous_secret_encrypted: null,
        previous_secret_expires_at: null,
        disabled_reason: null,
        disabled_at: input.enabled === false ? now : null,
        created_at: now,
        updated_at: now,
      });
      return { ...toWebhook(row), secret };
    },

    async list(auth: Auth, page: Page) {
      const { items, total } = await repo.listEndpoints(auth.accountId, page);
      return envelope('webhooks', items.map(toWebhook), total, page);
    },

    get: async (auth: Auth, id: string) => toWebhook(await requireEndpoint(auth.accountId, id)),

    async update(auth: Auth, id: string, input: UpdateWebhookInput) {
      const current = await requireEndpoint(auth.accountId, id);
      if (input.url !== undefined && input.url !== current.url) await checkUrl(input.url);
      const now = clock.now();
      return repo.transaction(async (tx) => {
        const row = await tx.findEndpointForUpdate(auth.accountId, id);
        if (!row) throw notFound('Webhook');
        const enabling = input.enabled === true && !row.enabled;
        const disabling = input.enabled === false && row.enabled;
        const updated = await tx.updateEndpoint(auth.accountId, id, {
          ...(input.url !== undefined ? { url: input.url } : {}),
          ...(input.description !== undefined ? { description: input.description } : {}),
          ...(input.events !== undefined ? { events: JSON.stringify(input.events) } : {}),
          ...(enabling ? { enabled: true, failure_streak: 0, disabled_reason: null, disabled_at: null } : {}),
          ...(disabling ? { enabled: false, disabled_reason: null, disabled_at: now } : {}),
          updated_at: now,
        });
        if (disabling) await tx.stopPendingOfEndpoint(auth.accountId, id, now);
        return toWebhook(updated!);
      });
    },

    async delete(auth: Auth, id: string) {
      // Its deliveries go with it: their jobs find nothing left to send.
      if (!(await repo.deleteEndpoint(auth.accountId, id))) throw notFound('Webhook');
      return { id, deleted: true as const };
    },

    async rotateSecret(auth: Auth, id: string) {
      await requireEndpoint(auth.accountId, id);
      const secret = newSecret();
      const encrypted = await encrypt(secret);
      const now = clock.now();
      const until = new Date(now.getTime() + config.rotationOverlapHours * 3_600_000);
      return repo.transaction(async (tx) => {
        const row = await tx.findEndpointForUpdate(auth.accountId, id);
        if (!row) throw notFound('Webhook');
        await tx.updateEndpoint(auth.accountId, id, {
          secret_encrypted: encrypted,
          previous_secret_encrypted: row.secret_encrypted,
          previous_secret_expires_at: until,
          updated_at: now,
        });
        return { id, secret, previousSecretValidUntil: until.toISOString() };
      });
    },

    async sendTest(auth: Auth, id: string) {
      const endpoint = await requireEndpoint(auth.accountId, id);
      if (!endpoint.enabled) throw new AppError('conflict', 'This webhook is disabled; enable it to send events to it');
      const now = clock.now();
      const delivery = newDelivery(id, {
        id: null,
        type: TEST_EVENT_TYPE,
        subjectId: null,
        occurredAt: now,
        data: { webhookId: id, message: 'A test event: your endpoint is reachable and can verify signatures.' },
      });
      await repo.transaction(async (tx) => {
        await tx.insertDeliveries(auth.accountId, [delivery]);
        workAdded(DISPATCH_LOOP, tx.trx);
      });
      return { deliveryId: delivery.id, state: 'pending' as const };
    },

    async listDeliveries(auth: Auth, id: string, query: ListDeliveriesQuery) {
      await requireEndpoint(auth.accountId, id);
      const page = { limit: query.limit, offset: query.offset };
      const { items, total } = await repo.listDeliveries(
        auth.accountId,
        id,
        { state: query.state, eventType: query.eventType },
        page,
      );
      return envelope('deliveries', deliveriesPage(items), total, page);
    },

    async getDelivery(auth: Auth, id: string, deliveryId: string) {
      await requireEndpoint(auth.accountId, id);
      const row = await repo.findEndpointDelivery(auth.accountId, id, deliveryId);
      if (!row) throw notFound('Delivery');
      return deliveriesPage([row])[0]!;
    },

    async redeliver(auth: Auth, id: string, deliveryId: string) {
      const endpoint = await requireEndpoint(auth.accountId, id);
      if (!endpoint.enabled) throw new AppError('conflict', 'This webhook is disabled; enable it to send events to it');
      const now = clock.now();
      return repo.transaction(async (tx) => {
        const row = await tx.redeliver(auth.accountId, id, deliveryId, now);
        if (!row) throw notFound('Delivery');
        workAdded(DISPATCH_LOOP, tx.trx);
        return { deliveryId: row.id, state: 'pending' as const };
      });
    },

    async redeliverSince(auth: Auth, id: string, input: RedeliverSinceInput) {
      const endpoint = await requireEndpoint(auth.accountId, id);
      if (!endpoint.enabled) throw new AppError('conflict', 'This webhook is disabled; enable it to send events to it');
      const now = clock.now();
      return repo.transaction(async (tx) => {
        const rows = await tx.redeliverSince(auth.accountId, id, new Date(input.since), now);
        if (rows.length > 0) workAdded(DISPATCH_LOOP, tx.trx);
        return { redelivered: rows.length };
      });
    },

    /**
     * The fan-out of one domain event, inside the transaction that writes it: one delivery per enabled endpoint of
     * the account that receives its type. Deliveries of one call are thereby numbered in the order its events happened.
     */
    async fanOutWithin(tx: TxHandle, event: DomainEvent) {
      if (!isWebhookEvent(event.type)) return { deliveries: 0 };
      const queries = repo.within(tx);
      const endpoints = await queries.subscribedEndpoints(event.accountId, event.type);
      if (endpoints.length === 0) return { deliveries: 0 };
      const data = await payloadOf(event, calls, deps.publicOrigin, tx);
      const payload = {
        id: event.id,
        type: event.type,
        subjectId: event.subject.id,
        occurredAt: event.occurredAt,
        data,
      };
      const created = await queries.insertDeliveries(
        event.accountId,
        endpoints.map((endpoint) => newDelivery(endpoint.id, payload)),
      );
      workAdded(DISPATCH_LOOP, tx.trx);
      return { deliveries: created };
    },

    /** Sends every delivery due now, batch after batch, until none is left; answers how many attempts were made. */
    async dispatchDue(): Promise<{ attempted: number }> {
      let attempted = 0;
      for (;;) {
        const batch = await dispatchBatch(DISPATCH_BATCH, createFairLimiter(config.concurrencyPerWorker));
        if (batch.attempted === 0) return { attempted };
        attempted += batch.attempted;
      }
    },

    /**
     * The dispatcher of a worker process: lanes that each claim a batch, send it and record it, and go on at once
     * while there is work; idle, they wait for a commit that adds deliveries or for the next poll (retries come due).
     * The lanes share WEBHOOK_CONCURRENCY requests at once, endpoints taking turns for them: while one lane claims or
     * records, the other may use them all.
     */
    async dispatchLoop(context: WorkerLoopContext) {
      const limited = createFairLimiter(config.concurrencyPerWorker);
      const lane = async (serving: () => ClaimScope) => {
        while (!context.signal.aborted) {
          const { attempted } = await dispatchBatch(DISPATCH_BATCH, limited, serving());
          if (attempted === 0) await context.idle(context.pollMs);
        }
      };
      await Promise.all([
        ...Array.from({ length: DISPATCH_LANES }, () => lane(() => 'any endpoint')),
        lane(() => ({ only: [...quickEndpoints] })),
      ]);
    },

    /** Deletes finished delivery records (and their attempts) older than the retention period. */
    async prune() {
      const before = new Date(clock.now().getTime() - config.retentionDays * 86_400_000);
      let deleted = 0;
      for (const endpoint of await repo.allEndpoints()) {
        deleted += await repo.deleteDeliveriesBefore(endpoint.account_id, endpoint.id, before);
      }
      return deleted;
    },

    async close() {
      await sender?.close();
      sender = undefined;
    },
  };
}

export type WebhooksService = ReturnType<typeof createWebhooksService>;
