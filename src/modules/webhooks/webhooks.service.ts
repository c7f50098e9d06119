/**
 * Outbound webhooks. Each domain event an endpoint subscribes to becomes one delivery (id = the body's id and
 * X-Service-Delivery), written by the event's fan-out job, which the outbox enqueued with the event itself: nothing is
 * lost to a crash. A delivery is attempted by a job; each attempt is claimed on the delivery row (one winner) and
 * written as an attempt row numbered uniquely. Failures retry after 5 s, 30 s and 120 s, then the delivery is
 * abandoned; 10 failed attempts in a row across deliveries disable the endpoint.
 */
import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes } from 'node:crypto';
import type { WebhooksConfig } from '../../config.js';
import { AppError, invalidField, notFound } from '../../http/errors.js';
import type { Auth } from '../../http/auth.js';
import { envelope, type Page } from '../../http/pagination.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import type { DomainEvent } from '../../events/domain-events.js';
import type { CallsService } from '../calls/calls.service.js';
import { createWebhookSender, refusalOf, type Lookup, type WebhookSender } from './webhook-http.js';
import type { DeliveryRow, EndpointRow, WebhooksRepo, WebhooksTx } from './webhooks.repo.js';
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
export const ATTEMPTS_PER_ROUND = RETRY_DELAYS_SECONDS.length + 1;
/** Consecutive failed attempts (across deliveries) that disable an endpoint. */
export const AUTO_DISABLE_AFTER = 10;
/** A claimed attempt not settled after this long (its process died) is made again. Longer than the 10 s timeout. */
const ATTEMPT_LEASE_MS = 60_000;
const SWEEP_BATCH = 500;
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
const hmacHex = (secret: string, body: string) => createHmac('sha256', secret).update(body).digest('hex');
const newSecret = () => `whsec_${randomBytes(32).toString('base64url')}`;

/** The body of each event type: the fields receivers rely on, taken from the domain event. */
async function payloadOf(
  event: DomainEvent,
  calls: WebhooksDeps['calls'],
  origin: string,
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
        ? await calls.recordingUrlFor(event.accountId, String(base.callId), origin)
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

  const rotationActive = (row: EndpointRow, now: Date) =>
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
  async function signatureFor(endpoint: EndpointRow, body: string, now: Date) {
    const t = Math.floor(now.getTime() / 1000);
    const secrets = [await decrypt(endpoint.secret_encrypted)];
    if (rotationActive(endpoint, now)) secrets.push(await decrypt(endpoint.previous_secret_encrypted!));
    return { t, header: [`t=${t}`, ...secrets.map((secret) => `v1=${hmacHex(secret, body)}`)].join(',') };
  }

  const deliverJob = (tx: WebhooksTx, accountId: string, deliveryId: string, startAfterSeconds?: number) =>
    tx.send('webhooks.deliver', { accountId, deliveryId }, startAfterSeconds ? { startAfter: startAfterSeconds } : {});

  /** Counts a failed attempt on the endpoint; the 10th in a row disables it and stops its pending deliveries. */
  async function countFailure(tx: WebhooksTx, accountId: string, endpointId: string, reason: string, now: Date) {
    const endpoint = await tx.findEndpointForUpdate(accountId, endpointId);
    if (!endpoint) return;
    const streak = endpoint.failure_streak + 1;
    if (endpoint.enabled && streak >= AUTO_DISABLE_AFTER) {
      await tx.updateEndpoint(accountId, endpointId, {
        failure_streak: streak,
        enabled: false,
        disabled_reason: `Disabled after ${streak} consecutive failed deliveries; the last: ${reason} at ${now.toISOString()}`,
        disabled_at: now,
        updated_at: now,
      });
      await tx.stopPendingOfEndpoint(accountId, endpointId, now);
    } else {
      await tx.updateEndpoint(accountId, endpointId, { failure_streak: streak });
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

  /** A new delivery of a body to one endpoint, and its first job, in the caller's transaction. */
  async function addDelivery(
    tx: WebhooksTx,
    accountId: string,
    endpointId: string,
    event: {
      id: string | null;
      type: string;
      subjectId: string | null;
      occurredAt: Date;
      data: Record<string, unknown>;
    },
  ) {
    const id = newId();
    const now = clock.now();
    const body = JSON.stringify({ id, type: event.type, occurredAt: event.occurredAt.toISOString(), data: event.data });
    const inserted = await tx.insertDelivery(accountId, {
      id,
      endpoint_id: endpointId,
      event_id: event.id,
      event_type: event.type,
      subject_id: event.subjectId,
      occurred_at: event.occurredAt,
      body,
      state: 'pending',
      next_attempt_at: now,
      created_at: now,
      updated_at: now,
    });
    if (inserted) await deliverJob(tx, accountId, id);
    return inserted ? id : null;
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
      const deliveryId = await repo.transaction((tx) =>
        addDelivery(tx, auth.accountId, id, {
          id: null,
          type: TEST_EVENT_TYPE,
          subjectId: null,
          occurredAt: now,
          data: { webhookId: id, message: 'A test event: your endpoint is reachable and can verify signatures.' },
        }),
      );
      return { deliveryId: deliveryId!, state: 'pending' as const };
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
        await deliverJob(tx, auth.accountId, row.id);
        return { deliveryId: row.id, state: 'pending' as const };
      });
    },

    async redeliverSince(auth: Auth, id: string, input: RedeliverSinceInput) {
      const endpoint = await requireEndpoint(auth.accountId, id);
      if (!endpoint.enabled) throw new AppError('conflict', 'This webhook is disabled; enable it to send events to it');
      const now = clock.now();
      return repo.transaction(async (tx) => {
        const rows = await tx.redeliverSince(auth.accountId, id, new Date(input.since), now);
        for (const row of rows) await deliverJob(tx, auth.accountId, row.id);
        return { redelivered: rows.length };
      });
    },

    /** The fan-out of one domain event: one delivery per enabled endpoint that receives its type. Idempotent. */
    async fanOut(event: DomainEvent) {
      if (!isWebhookEvent(event.type)) return { deliveries: 0 };
      const endpoints = await repo.subscribedEndpoints(event.accountId, event.type);
      if (endpoints.length === 0) return { deliveries: 0 };
      const data = await payloadOf(event, calls, deps.publicOrigin);
      const subjectId = event.subject.id;
      const created = await repo.transaction(async (tx) => {
        let count = 0;
        for (const endpoint of endpoints) {
          if (
            await addDelivery(tx, event.accountId, endpoint.id, {
              id: event.id,
              type: event.type,
              subjectId,
              occurredAt: event.occurredAt,
              data,
            })
          )
            count++;
        }
        return count;
      });
      return { deliveries: created };
    },

    /** One attempt of a delivery, if it is due and nobody else has taken it. */
    async attempt(accountId: string, deliveryId: string): Promise<{ outcome: string }> {
      const delivery = await repo.findDelivery(accountId, deliveryId);
      if (!delivery || delivery.state !== 'pending') return { outcome: 'not pending' };
      const now = clock.now();
      if (delivery.next_attempt_at && delivery.next_attempt_at > now) return { outcome: 'not due' };
      const endpoint = await repo.findEndpoint(accountId, delivery.endpoint_id);
      if (!endpoint) return { outcome: 'endpoint deleted' };
      if (!endpoint.enabled) {
        await repo.stopDelivery(accountId, deliveryId, now);
        return { outcome: 'endpoint disabled' };
      }
      // Events of one subject reach an endpoint in order: a later one waits for the first attempt of an earlier one.
      if (!delivery.first_attempt_done && (await repo.blockingPredecessor(accountId, delivery)))
        return { outcome: 'waiting for an earlier event' };
      const claimed = await repo.claimAttempt(
        accountId,
        deliveryId,
        delivery.attempt_count,
        now,
        new Date(now.getTime() + ATTEMPT_LEASE_MS),
      );
      if (!claimed) return { outcome: 'taken by another worker' };
      const number = claimed.attempt_count;
      await repo.insertAttempt(accountId, { delivery_id: deliveryId, number, started_at: now });

      const { t, header } = await signatureFor(endpoint, claimed.body, now);
      const result = await http().post(
        endpoint.url,
        {
          'content-type': 'application/json',
          'user-agent': USER_AGENT,
          'x-service-event': claimed.event_type,
          'x-service-delivery': claimed.id,
          'x-service-timestamp': String(t),
          'x-service-signature': header,
        },
        claimed.body,
      );
      const finished = clock.now();

      // The attempt's result, the delivery's next state and the endpoint's streak are written together.
      return repo.transaction(async (tx) => {
        await tx.finishAttempt(accountId, deliveryId, number, {
          finished_at: finished,
          status_code: result.statusCode,
          latency_ms: result.latencyMs,
          error: result.error,
          response_excerpt: result.responseExcerpt,
        });
        let outcome: string;
        if (result.ok) {
          await tx.settleDelivery(accountId, deliveryId, number, {
            state: 'succeeded',
            next_attempt_at: null,
            updated_at: finished,
          });
          await tx.resetStreak(accountId, endpoint.id);
          outcome = 'succeeded';
        } else {
          const delay = RETRY_DELAYS_SECONDS[claimed.round_attempts - 1];
          if (delay === undefined) {
            await tx.settleDelivery(accountId, deliveryId, number, {
              state: 'abandoned',
              next_attempt_at: null,
              updated_at: finished,
            });
            outcome = 'abandoned';
          } else {
            const next = new Date(finished.getTime() + delay * 1000);
            await tx.settleDelivery(accountId, deliveryId, number, {
              state: 'pending',
              next_attempt_at: next,
              updated_at: finished,
            });
            await deliverJob(tx, accountId, deliveryId, delay);
            outcome = `retry in ${delay} s`;
          }
          await countFailure(tx, accountId, endpoint.id, result.error ?? 'failed', finished);
        }
        // The next event of this subject may have been waiting for this first attempt.
        if (!delivery.first_attempt_done && delivery.subject_id !== null) {
          const next = await tx.nextWaiting(accountId, endpoint.id, delivery.subject_id);
          if (next) await deliverJob(tx, accountId, next.id);
        }
        return { outcome };
      });
    },

    /** Enqueues every due pending delivery again: retries whose job was lost, and attempts lost with their process. */
    async sweep() {
      const due = await repo.dueDeliveries(clock.now(), SWEEP_BATCH);
      if (due.length === 0) return { enqueued: 0 };
      await repo.transaction(async (tx) => {
        for (const row of due) await deliverJob(tx, row.account_id, row.id);
      });
      return { enqueued: due.length };
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
