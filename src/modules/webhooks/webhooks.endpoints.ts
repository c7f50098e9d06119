/**
 * Endpoints and their delivery log, as an account manages them: create (the secret shown once), read, change, enable
 * again, delete, rotate the secret, send a test event, list and read deliveries with their attempts, redeliver.
 */
import type { WebhooksConfig } from '../../config.js';
import type { Auth } from '../../lib/caller.js';
import { AppError, invalidField, notFound } from '../../lib/errors.js';
import { envelope, type Page } from '../../db/pagination.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { workAdded } from '../../lib/wake.js';
import { DISPATCH_LOOP } from './webhooks.dispatcher.js';
import { refusalOf, type Lookup } from './webhooks.http.js';
import { newDelivery, type WebhookData } from './webhooks.payloads.js';
import type { DeliveryRow, EndpointRow, WebhooksRepo } from './webhooks.repo.js';
import type {
  CreateWebhookInput,
  ListDeliveriesQuery,
  RedeliverSinceInput,
  UpdateWebhookInput,
} from './webhooks.schemas.js';
import { newSecret, rotationActive, type WebhookSecrets } from './webhooks.secrets.js';
import { TEST_EVENT_TYPE, WEBHOOK_EVENT_TYPES, type AttemptRecord, type WebhookEventType } from './webhooks.tables.js';

export interface EndpointsDeps {
  repo: WebhooksRepo;
  clock: Clock;
  config: WebhooksConfig;
  secrets: WebhookSecrets;
  /** Name resolution for target checks (tests give their own). */
  lookup?: Lookup;
}

const iso = (time: string) => new Date(time).toISOString();
const attemptsOf = (lines: string) =>
  lines
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as AttemptRecord);

/** A delivery as the API shows it, with its attempts (one cut off with its process shows as interrupted). */
const toDelivery = (row: DeliveryRow) => ({
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
});

/**
 * A URL as stored and shown: in the form the URL standard writes it (scheme and host in lower case, default port
 * dropped, path escaped...). One that does not parse is left as it is, for the check to refuse.
 */
function normalized(url: string) {
  try {
    return new URL(url).href;
  } catch {
    return url;
  }
}

const disabledConflict = () => new AppError('conflict', 'This webhook is disabled; enable it to send events to it');

export function createWebhookEndpoints(deps: EndpointsDeps) {
  const { repo, clock, config, secrets } = deps;
  const policy = {
    allowHttp: config.allowHttp,
    allowPrivate: config.allowPrivate,
    ...(deps.lookup ? { lookup: deps.lookup } : {}),
  };

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

  async function requireEnabled(accountId: string, id: string) {
    const row = await requireEndpoint(accountId, id);
    if (!row.enabled) throw disabledConflict();
    return row;
  }

  return {
    async create(auth: Auth, input: CreateWebhookInput) {
      await checkUrl(input.url);
      const secret = newSecret();
      const secretEncrypted = await secrets.encrypt(secret);
      const cap = config.maxEndpointsPerAccount;
      const row = await repo.transaction(async (tx) => {
        await tx.lockEndpointList(auth.accountId);
        if ((await tx.countEndpoints(auth.accountId)) >= cap) {
          throw new AppError(
            'conflict',
            `An account can have at most ${cap} webhook endpoints; delete one before adding another`,
            { limit: cap },
          );
        }
        const now = clock.now();
        return tx.insertEndpoint(auth.accountId, {
          id: newId(),
          url: normalized(input.url),
          description: input.description ?? null,
          events: JSON.stringify(input.events ?? [...WEBHOOK_EVENT_TYPES]),
          enabled: input.enabled ?? true,
          secret_encrypted: secretEncrypted,
          previous_secret_encrypted: null,
          previous_secret_expires_at: null,
          disabled_reason: null,
          disabled_at: input.enabled === false ? now : null,
          created_at: now,
          updated_at: now,
        });
      });
      return { ...toWebhook(row), secret };
    },

    async list(auth: Auth, page: Page) {
      const { items, total } = await repo.listEndpoints(auth.accountId, page);
      return envelope('webhooks', items.map(toWebhook), total, page);
    },

    get: async (auth: Auth, id: string) => toWebhook(await requireEndpoint(auth.accountId, id)),

    /** Enabling clears the failure streak and the reason; disabling stops the pending deliveries. */
    async update(auth: Auth, id: string, input: UpdateWebhookInput) {
      const current = await requireEndpoint(auth.accountId, id);
      const url = input.url === undefined ? undefined : normalized(input.url);
      if (url !== undefined && url !== current.url) await checkUrl(url);
      const now = clock.now();
      return repo.transaction(async (tx) => {
        const row = await tx.findEndpointForUpdate(auth.accountId, id);
        if (!row) throw notFound('Webhook');
        const enabling = input.enabled === true && !row.enabled;
        const disabling = input.enabled === false && row.enabled;
        const updated = await tx.updateEndpoint(auth.accountId, id, {
          ...(url !== undefined ? { url } : {}),
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
      // Its deliveries go with it: the dispatcher finds nothing left to send.
      if (!(await repo.deleteEndpoint(auth.accountId, id))) throw notFound('Webhook');
      return { id, deleted: true as const };
    },

    /** A new secret; the previous one still signs beside it for WEBHOOK_ROTATION_OVERLAP_HOURS. */
    async rotateSecret(auth: Auth, id: string) {
      await requireEndpoint(auth.accountId, id);
      const secret = newSecret();
      const encrypted = await secrets.encrypt(secret);
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
      await requireEnabled(auth.accountId, id);
      const now = clock.now();
      const data = {
        webhookId: id,
        message: 'A test event: your endpoint is reachable and can verify signatures.',
      } satisfies WebhookData<typeof TEST_EVENT_TYPE>;
      const delivery = newDelivery(
        id,
        { eventId: null, type: TEST_EVENT_TYPE, subjectId: null, occurredAt: now, data },
        now,
      );
      await repo.transaction(async (tx) => {
        await tx.insertDeliveries(auth.accountId, [delivery]);
        workAdded(DISPATCH_LOOP, tx.trx);
      });
      return { deliveryId: delivery.id, state: 'pending' as const };
    },

    async listDeliveries(auth: Auth, id: string, query: ListDeliveriesQuery) {
      await requireEndpoint(auth.accountId, id);
      const page = { limit: query.limit, offset: query.offset };
      const filter = { state: query.state, eventType: query.eventType };
      const { items, total } = await repo.listDeliveries(auth.accountId, id, filter, page);
      return envelope('deliveries', items.map(toDelivery), total, page);
    },

    async getDelivery(auth: Auth, id: string, deliveryId: string) {
      await requireEndpoint(auth.accountId, id);
      const row = await repo.findEndpointDelivery(auth.accountId, id, deliveryId);
      if (!row) throw notFound('Delivery');
      return toDelivery(row);
    },

    /** Sends a delivery again, same id, as a new round of attempts. */
    async redeliver(auth: Auth, id: string, deliveryId: string) {
      await requireEnabled(auth.accountId, id);
      const now = clock.now();
      return repo.transaction(async (tx) => {
        const row = await tx.redeliver(auth.accountId, id, deliveryId, now);
        if (!row) throw notFound('Delivery');
        workAdded(DISPATCH_LOOP, tx.trx);
        return { deliveryId: row.id, state: 'pending' as const };
      });
    },

    /** Sends again every failed or abandoned delivery created since the given instant. */
    async redeliverSince(auth: Auth, id: string, input: RedeliverSinceInput) {
      await requireEnabled(auth.accountId, id);
      const now = clock.now();
      return repo.transaction(async (tx) => {
        const rows = await tx.redeliverSince(auth.accountId, id, new Date(input.since), now);
        if (rows.length > 0) workAdded(DISPATCH_LOOP, tx.trx);
        return { redelivered: rows.length };
      });
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
  };
}
