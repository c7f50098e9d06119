import { sql, type Insertable, type Selectable, type Updateable } from 'kysely';
import type { Db } from '../../db/client.js';
import { createRepo, type Executor, type OutboxFactory, type Tx } from '../../db/repo.js';
import { paginate, type Page } from '../../http/pagination.js';
import type {
  DeliveryState,
  WebhookAttemptsTable,
  WebhookDeliveriesTable,
  WebhookEndpointsTable,
} from './webhooks.tables.js';

export type EndpointRow = Selectable<WebhookEndpointsTable>;
export type DeliveryRow = Selectable<WebhookDeliveriesTable>;
export type AttemptRow = Selectable<WebhookAttemptsTable>;
export type NewEndpoint = Omit<Insertable<WebhookEndpointsTable>, 'account_id'>;
export type EndpointChanges = Omit<Updateable<WebhookEndpointsTable>, 'id' | 'account_id' | 'created_at'>;
export type NewDelivery = Omit<Insertable<WebhookDeliveriesTable>, 'account_id'>;
/** A delivery as the dispatcher claims it: its body and its endpoint's address and secrets. */
export interface ClaimedDelivery {
  id: string;
  account_id: string;
  endpoint_id: string;
  event_type: string;
  subject_id: string | null;
  body: string;
  /** The number of the attempt just started. */
  attempt_count: number;
  /** Attempts in this round, this one included (a redelivery starts a new round). */
  round_attempts: number;
  first_attempt_done: boolean;
  url: string;
  secret_encrypted: string;
  previous_secret_encrypted: string | null;
  previous_secret_expires_at: Date | null;
}

export interface FinishedAttempt {
  accountId: string;
  deliveryId: string;
  number: number;
  finishedAt: Date;
  statusCode: number | null;
  latencyMs: number | null;
  error: string | null;
  responseExcerpt: string | null;
}

export interface SettledDelivery {
  accountId: string;
  deliveryId: string;
  attemptCount: number;
  state: DeliveryState;
  nextAttemptAt: Date | null;
  at: Date;
}

/** Endpoints, deliveries and attempts; every statement names the account except the cross-account sweeps. */
export function webhookQueries(db: Executor) {
  const endpoints = (accountId: string) => db.selectFrom('webhook_endpoints').where('account_id', '=', accountId);
  const deliveries = (accountId: string) => db.selectFrom('webhook_deliveries').where('account_id', '=', accountId);

  return {
    insertEndpoint(accountId: string, endpoint: NewEndpoint) {
      return db
        .insertInto('webhook_endpoints')
        .values({ ...endpoint, account_id: accountId })
        .returningAll()
        .executeTakeFirstOrThrow();
    },

    async countEndpoints(accountId: string): Promise<number> {
      const row = await endpoints(accountId)
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow();
      return Number(row.n);
    },

    listEndpoints(accountId: string, page: Page) {
      return paginate(endpoints(accountId), page, (q) =>
        q.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc'),
      );
    },

    findEndpoint(accountId: string, id: string) {
      return endpoints(accountId).selectAll().where('id', '=', id).executeTakeFirst();
    },

    /** Locks the endpoint's row until the transaction ends, so streak updates and disabling happen in turn. */
    findEndpointForUpdate(accountId: string, id: string) {
      return endpoints(accountId).selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
    },

    updateEndpoint(accountId: string, id: string, changes: EndpointChanges) {
      return db
        .updateTable('webhook_endpoints')
        .set(changes)
        .where('account_id', '=', accountId)
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirst();
    },

    /** A success ends the failure streak (no row is written when there is none). */
    resetStreak(accountId: string, id: string) {
      return db
        .updateTable('webhook_endpoints')
        .set({ failure_streak: 0 })
        .where('account_id', '=', accountId)
        .where('id', '=', id)
        .where('failure_streak', '>', 0)
        .execute();
    },

    async deleteEndpoint(accountId: string, id: string): Promise<boolean> {
      const result = await db
        .deleteFrom('webhook_endpoints')
        .where('account_id', '=', accountId)
        .where('id', '=', id)
        .executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },

    /** The account's enabled endpoints that receive this event type. */
    subscribedEndpoints(accountId: string, type: string) {
      return endpoints(accountId)
        .selectAll()
        .where('enabled', '=', true)
        .where(sql<boolean>`events @> ${JSON.stringify([type])}::jsonb`)
        .orderBy('created_at')
        .execute();
    },

    /** New deliveries; none for an event that already has one for that endpoint. Answers how many were written. */
    async insertDeliveries(accountId: string, rows: NewDelivery[]): Promise<number> {
      if (rows.length === 0) return 0;
      const inserted = await db
        .insertInto('webhook_deliveries')
        .values(rows.map((row) => ({ ...row, account_id: accountId })))
        .onConflict((oc) => oc.columns(['endpoint_id', 'event_id']).doNothing())
        .returning('id')
        .execute();
      return inserted.length;
    },

    findDelivery(accountId: string, id: string) {
      return deliveries(accountId).selectAll().where('id', '=', id).executeTakeFirst();
    },

    findEndpointDelivery(accountId: string, endpointId: string, id: string) {
      return deliveries(accountId)
        .selectAll()
        .where('endpoint_id', '=', endpointId)
        .where('id', '=', id)
        .executeTakeFirst();
    },

    listDeliveries(
      accountId: string,
      endpointId: string,
      filter: { state?: DeliveryState; eventType?: string },
      page: Page,
    ) {
      let matching = deliveries(accountId).where('endpoint_id', '=', endpointId);
      if (filter.state) matching = matching.where('state', '=', filter.state);
      if (filter.eventType) matching = matching.where('event_type', '=', filter.eventType);
      return paginate(matching, page, (q) => q.selectAll().orderBy('created_at', 'desc').orderBy('seq', 'desc'));
    },

    attemptsOf(accountId: string, deliveryIds: string[]) {
      if (deliveryIds.length === 0) return Promise.resolve([]);
      return db
        .selectFrom('webhook_attempts')
        .selectAll()
        .where('account_id', '=', accountId)
        .where('delivery_id', 'in', deliveryIds)
        .orderBy('delivery_id')
        .orderBy('number')
        .execute();
    },

    /**
     * Claims up to `limit` due deliveries of every account in one statement, and starts an attempt row for each: a
     * claimed delivery's due time moves to `leaseUntil`, so two dispatchers never take the same one, and an attempt
     * lost with its process is made again once the lease ends. A delivery waits while an earlier one of the same
     * subject to the same endpoint has not had its first attempt (events of a call go out in order).
     */
    async claimDue(now: Date, limit: number, leaseUntil: Date): Promise<ClaimedDelivery[]> {
      const { rows } = await sql<ClaimedDelivery>`
        WITH due AS (
          SELECT d.id FROM webhook_deliveries d
          JOIN webhook_endpoints e ON e.id = d.endpoint_id AND e.enabled
          WHERE d.state = 'pending' AND d.next_attempt_at <= ${now}
            AND (d.first_attempt_done OR d.subject_id IS NULL OR NOT EXISTS (
              SELECT 1 FROM webhook_deliveries p
              WHERE p.endpoint_id = d.endpoint_id AND p.subject_id = d.subject_id AND p.state = 'pending'
                AND NOT p.first_attempt_done AND (p.occurred_at, p.seq) < (d.occurred_at, d.seq)))
          ORDER BY d.next_attempt_at
          LIMIT ${limit}
          FOR UPDATE OF d SKIP LOCKED
        ), claimed AS (
          UPDATE webhook_deliveries w
          SET attempt_count = w.attempt_count + 1, round_attempts = w.round_attempts + 1,
              next_attempt_at = ${leaseUntil}, updated_at = ${now}
          FROM due WHERE w.id = due.id
          RETURNING w.id, w.account_id, w.endpoint_id, w.event_type, w.subject_id, w.body, w.attempt_count,
                    w.round_attempts, w.first_attempt_done
        ), started AS (
          INSERT INTO webhook_attempts (delivery_id, number, account_id, started_at)
          SELECT id, attempt_count, account_id, ${now} FROM claimed
        )
        SELECT c.*, e.url, e.secret_encrypted, e.previous_secret_encrypted, e.previous_secret_expires_at
        FROM claimed c JOIN webhook_endpoints e ON e.id = c.endpoint_id
      `.execute(db);
      return rows;
    },

    /** Writes how each attempt ended (one statement for the whole batch). */
    async finishAttempts(results: FinishedAttempt[]) {
      if (results.length === 0) return;
      const values = results.map(
        (r) =>
          sql`(${r.accountId}::uuid, ${r.deliveryId}::uuid, ${r.number}::int, ${r.finishedAt}::timestamptz, ${r.statusCode}::int, ${r.latencyMs}::int, ${r.error}::text, ${r.responseExcerpt}::text)`,
      );
      await sql`
        UPDATE webhook_attempts a
        SET finished_at = v.finished_at, status_code = v.status_code, latency_ms = v.latency_ms, error = v.error,
            response_excerpt = v.response_excerpt
        FROM (VALUES ${sql.join(values)})
          AS v(account_id, delivery_id, number, finished_at, status_code, latency_ms, error, response_excerpt)
        WHERE a.account_id = v.account_id AND a.delivery_id = v.delivery_id AND a.number = v.number
      `.execute(db);
    },

    /**
     * Moves each delivery on after its attempt (succeeded, abandoned, or pending until its retry), unless another
     * dispatcher took it meanwhile (its lease ran out). Answers the ids settled.
     */
    async settleDeliveries(settled: SettledDelivery[]): Promise<string[]> {
      if (settled.length === 0) return [];
      const values = settled.map(
        (r) =>
          sql`(${r.accountId}::uuid, ${r.deliveryId}::uuid, ${r.attemptCount}::int, ${r.state}::text, ${r.nextAttemptAt}::timestamptz, ${r.at}::timestamptz)`,
      );
      const { rows } = await sql<{ id: string }>`
        UPDATE webhook_deliveries d
        SET state = v.state, next_attempt_at = v.next_attempt_at, first_attempt_done = true, updated_at = v.at
        FROM (VALUES ${sql.join(values)}) AS v(account_id, delivery_id, attempt_count, state, next_attempt_at, at)
        WHERE d.account_id = v.account_id AND d.id = v.delivery_id AND d.attempt_count = v.attempt_count
          AND d.state = 'pending'
        RETURNING d.id
      `.execute(db);
      return rows.map((row) => row.id);
    },

    /** A delivery ends without its retries (its endpoint is disabled). */
    stopDelivery(accountId: string, id: string, now: Date) {
      return db
        .updateTable('webhook_deliveries')
        .set({ state: 'failed', next_attempt_at: null, first_attempt_done: true, updated_at: now })
        .where('account_id', '=', accountId)
        .where('id', '=', id)
        .where('state', '=', 'pending')
        .execute();
    },

    /** Every pending delivery of an endpoint stops (it was disabled). */
    async stopPendingOfEndpoint(accountId: string, endpointId: string, now: Date): Promise<number> {
      const result = await db
        .updateTable('webhook_deliveries')
        .set({ state: 'failed', next_attempt_at: null, first_attempt_done: true, updated_at: now })
        .where('account_id', '=', accountId)
        .where('endpoint_id', '=', endpointId)
        .where('state', '=', 'pending')
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
    },

    /** Sends a delivery again (same id): a new round of attempts, due now. */
    redeliver(accountId: string, endpointId: string, id: string, now: Date) {
      return db
        .updateTable('webhook_deliveries')
        .set({ state: 'pending', round_attempts: 0, next_attempt_at: now, first_attempt_done: true, updated_at: now })
        .where('account_id', '=', accountId)
        .where('endpoint_id', '=', endpointId)
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirst();
    },

    /** Sends again every failed or abandoned delivery of the endpoint created since `since`. */
    redeliverSince(accountId: string, endpointId: string, since: Date, now: Date) {
      return db
        .updateTable('webhook_deliveries')
        .set({ state: 'pending', round_attempts: 0, next_attempt_at: now, first_attempt_done: true, updated_at: now })
        .where('account_id', '=', accountId)
        .where('endpoint_id', '=', endpointId)
        .where('state', 'in', ['failed', 'abandoned'])
        .where('created_at', '>=', since)
        .returning(['id', 'attempt_count'])
        .execute();
    },

    /** Retention across accounts (their attempts go with them). */
    async deleteDeliveriesBefore(before: Date): Promise<number> {
      const result = await db
        .deleteFrom('webhook_deliveries')
        .where('created_at', '<', before)
        .where('state', '!=', 'pending')
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },

    /** The key that encrypts signing secrets: the stored one, or `candidate` when none is stored yet. */
    async encryptionKey(candidate: string): Promise<string> {
      await db
        .insertInto('webhook_keys')
        .values({ name: 'secret-encryption', value: candidate })
        .onConflict((oc) => oc.column('name').doNothing())
        .execute();
      const row = await db
        .selectFrom('webhook_keys')
        .select('value')
        .where('name', '=', 'secret-encryption')
        .executeTakeFirstOrThrow();
      return row.value;
    },
  };
}

export function createWebhooksRepo(db: Db, outbox: OutboxFactory) {
  return createRepo(db, outbox, webhookQueries);
}

export type WebhooksRepo = ReturnType<typeof createWebhooksRepo>;
export type WebhooksTx = Tx<ReturnType<typeof webhookQueries>>;
