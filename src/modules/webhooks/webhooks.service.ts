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
import { createLimiter, type Limiter } from '../../lib/concurrency.js';
import type { WorkerLoopContext } from '../../jobs/define.js';
import { newId } from '../../lib/ids.js';
import type { DomainEvent } from '../../events/domain-events.js';
import type { TxHandle } from '../../db/repo.js';
import { workAdded } from '../../jobs/wake.js';
import type { CallsService } from '../calls/calls.service.js';
import { createWebhookSender, refusalOf, type Lookup, type WebhookSender } from './webhook-http.js';
import type {
  ClaimedDelivery,
  DeliveryRow,
  EndpointRow,
  EndedAttempt,
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
import { TEST_EVENT_TYPE, WEBHOOK_EVENT_TYPES, type WebhookEventType } from './webhooks.tables.js';

/** Waits before the retries of a failed delivery, in seconds; after the last one fails the delivery is abandoned. */
export const RETRY_DELAYS_SECONDS = [5, 30, 120] as const;
/** Consecutive failed attempts (across deliveries) that disable an endpoint. */
export const AUTO_DISABLE_AFTER = 10;
/** A claimed attempt not settled after this long (its process died) is made again. Longer than the 10 s timeout. */
const ATTEMPT_LEASE_MS = 60_000;
/** Deliveries one dispatcher lane claims per statement. */
const DISPATCH_BATCH = 100;
/** Dispatcher lanes per worker process: one sends a batch while another claims or records one. */
const DISPATCH_LANES = 2;
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
  async function countStreaks(tx: WebhooksTx, outcomes: Array<{ delivery: ClaimedDelivery; attempt: EndedAttempt }>) {
    const byEndpoint = new Map<string, typeof outcomes>();
    for (const outcome of outcomes) {
      const ended = byEndpoint.get(outcome.delivery.endpoint_id);
      if (ended) ended.push(outcome);
      else byEndpoint.set(outcome.delivery.endpoint_id, [outcome]);
    }
    for (const [endpointId, ended] of byEndpoint) {
      const accountId = ended[0]!.delivery.account_id;
      const endpoint = await tx.findEndpointForUpdate(accountId, endpointId);
      if (!endpoint) continue;
      let streak = endpoint.failure_streak;
      let disabledBy: EndedAttempt | undefined;
      for (const { attempt } of ended.sort((a, b) => a.attempt.finishedAt.getTime() - b.attempt.finishedAt.getTime())) {
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

  async function deliveriesPage(accountId: string, rows: DeliveryRow[]) {
    const attempts = await repo.attemptsOf(
      accountId,
      rows.map((r) => r.id),
    );
    return rows.map((row) => ({
      id: row.id,
      webhookId: row.endpoint_id,
      eventId: row.event_id,
      eventType: row.event_type,
      occurredAt: row.occurred_at.toISOString(),
      state: row.state,
      nextAttemptAt: row.state === 'pending' ? (row.next_attempt_at?.toISOString() ?? null) : null,
      attempts: attempts
        .filter((a) => a.delivery_id === row.id)
        .map((a) => ({
          number: a.number,
          startedAt: a.started_at.toISOString(),
          finishedAt: a.finished_at?.toISOString() ?? null,
          statusCode: a.status_code,
          latencyMs: a.latency_ms,
          error: a.error ?? (a.finished_at ? null : 'interrupted: the attempt did not finish (the worker stopped)'),
          responseBody: a.response_excerpt,
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

  /** Sends one claimed attempt; never throws (a failure is the attempt's result). */
  async function send(delivery: ClaimedDelivery): Promise<EndedAttempt> {
    const { t, header } = await signatureFor(delivery, delivery.body, clock.now());
    const result = await http().post(
      delivery.url,
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
      accountId: delivery.account_id,
      deliveryId: delivery.id,
      number: delivery.attempt_count,
      startedAt: delivery.started_at,
      finishedAt: clock.now(),
      statusCode: result.statusCode,
      latencyMs: result.latencyMs,
      error: result.error,
      responseExcerpt: result.responseExcerpt,
    };
  }

  /**
   * Records a batch of ended attempts and moves their deliveries on in one transaction: delivered; due again after
   * the retry's wait; or abandoned after the last retry. The endpoints' failure streaks count them in the order they
   * ended.
   */
  async function settle(claimed: ClaimedDelivery[], attempts: EndedAttempt[]) {
    const settledAt = clock.now();
    await repo.transaction(async (tx) => {
      await tx.recordAttempts(attempts);
      const delivered = new Map<number, string[]>();
      for (const [i, delivery] of claimed.entries()) {
        const attempt = attempts[i]!;
        if (attemptSucceeded(attempt)) {
          const lease = delivery.lease_until.getTime();
          const ids = delivered.get(lease);
          if (ids) ids.push(delivery.id);
          else delivered.set(lease, [delivery.id]);
          continue;
        }
        const delay = RETRY_DELAYS_SECONDS[delivery.round_attempts - 1];
        await tx.settleFailed(delivery.account_id, delivery.id, delivery.lease_until, {
          state: delay === undefined ? 'abandoned' : 'pending',
          next_attempt_at: delay === undefined ? null : new Date(attempt.finishedAt.getTime() + delay * 1000),
          updated_at: attempt.finishedAt,
        });
      }
      for (const [lease, ids] of delivered) await tx.settleSucceeded(ids, new Date(lease), settledAt);
      await countStreaks(
        tx,
        claimed.map((delivery, i) => ({ delivery, attempt: attempts[i]! })),
      );
    });
  }

  /** One batch: claims due deliveries, sends them (through `limited`), records the results. */
  async function dispatchBatch(limit: number, limited: Limiter): Promise<{ attempted: number }> {
    const now = clock.now();
    const claimed = await repo.transaction((tx) => tx.claimDue(now, limit, new Date(now.getTime() + ATTEMPT_LEASE_MS)));
    if (claimed.length === 0) return { attempted: 0 };
    await settle(claimed, await Promise.all(claimed.map((delivery) => limited(() => send(delivery)))));
    return { attempted: claimed.length };
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
      return envelope('deliveries', await deliveriesPage(auth.accountId, items), total, page);
    },

    async getDelivery(auth: Auth, id: string, deliveryId: string) {
      await requireEndpoint(auth.accountId, id);
      const row = await repo.findEndpointDelivery(auth.accountId, id, deliveryId);
      if (!row) throw notFound('Delivery');
      return (await deliveriesPage(auth.accountId, [row]))[0]!;
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
        const batch = await dispatchBatch(DISPATCH_BATCH, createLimiter(config.concurrencyPerWorker));
        if (batch.attempted === 0) return { attempted };
        attempted += batch.attempted;
      }
    },

    /**
     * The dispatcher of a worker process: lanes that each claim a batch, send it and record it, and go on at once
     * while there is work; idle, they wait for a commit that adds deliveries or for the next poll (retries come due).
     * The lanes share WEBHOOK_CONCURRENCY requests at once: while one claims or records, the other may use them all.
     */
    async dispatchLoop(context: WorkerLoopContext) {
      const limited = createLimiter(config.concurrencyPerWorker);
      const lane = async () => {
        while (!context.signal.aborted) {
          const { attempted } = await dispatchBatch(DISPATCH_BATCH, limited);
          if (attempted === 0) await context.idle(context.pollMs);
        }
      };
      await Promise.all(Array.from({ length: DISPATCH_LANES }, lane));
    },

    /** Deletes finished delivery records (and their attempts) older than the retention period. */
    prune() {
      return repo.deleteDeliveriesBefore(new Date(clock.now().getTime() - config.retentionDays * 86_400_000));
    },

    async close() {
      await sender?.close();
      sender = undefined;
    },
  };
}

export type WebhooksService = ReturnType<typeof createWebhooksService>;
