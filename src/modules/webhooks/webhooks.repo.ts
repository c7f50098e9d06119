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
  lease_until: Date;
  started_at: Date;
  url: string;
  secret_encrypted: string;
  previous_secret_encrypted: string | null;
  previous_secret_expires_at: Date | null;
}

export interface EndedAttempt {
  accountId: string;
  deliveryId: string;
  number: number;
  startedAt: Date;
  finishedAt: Date;
  statusCode: number | null;
  latencyMs: number | null;
  error: string | null;
  responseExcerpt: string | null;
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

    /** New deliveries; answers how many were written. */
    async insertDeliveries(accountId: string, rows: NewDelivery[]): Promise<number> {
      if (rows.length === 0) return 0;
      const inserted = await db
        .insertInto('webhook_deliveries')
        .values(rows.map((row) => ({ ...row, account_id: accountId })))
        .returning('id')
        .execute();
      return inserted.length;
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
     * Claims up to `limit` due deliveries of every account in one statement: a claimed delivery's due time moves to
     * `leaseUntil`, so two dispatchers never take the same one, and an attempt lost with its process is made again once
     * the lease ends (the lost attempt is recorded then, unfinished). A delivery waits while an earlier one of the same
     * subject to the same endpoint has not had its first attempt (events of a call go out in order).
     */
    async claimDue(now: Date, limit: number, leaseUntil: Date): Promise<ClaimedDelivery[]> {
      // Run in a transaction. The due index is read in order and the scan stops at `limit`, however long the backlog:
      // where statistics are missing (the embedded database never analyzes) the planner would otherwise read every
      // due row and sort them, for every batch.
      await sql`SET LOCAL enable_bitmapscan = off`.execute(db);
      await sql`SET LOCAL enable_sort = off`.execute(db);
      const { rows } = await sql<ClaimedDelivery>`
        WITH due AS (
          SELECT d.id, d.account_id, d.attempt_count, d.attempt_started_at FROM webhook_deliveries d
          JOIN webhook_endpoints e ON e.id = d.endpoint_id AND e.enabled
          WHERE d.state = 'pending' AND d.next_attempt_at <= ${now}
            AND (d.leased_until IS NULL OR d.leased_until <= ${now})
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
              leased_until = ${leaseUntil}, attempt_started_at = ${now}, updated_at = ${now}
          FROM due WHERE w.id = due.id
          RETURNING w.id, w.account_id, w.endpoint_id, w.event_type, w.subject_id, w.body, w.attempt_count,
                    w.round_attempts, w.first_attempt_done, w.leased_until AS lease_until,
                    w.attempt_started_at AS started_at
        ), cut_off AS (
          INSERT INTO webhook_attempts (delivery_id, number, account_id, started_at)
          SELECT id, attempt_count, account_id, attempt_started_at FROM due WHERE attempt_started_at IS NOT NULL
          ON CONFLICT (delivery_id, number) DO NOTHING
        )
        SELECT c.*, e.url, e.secret_encrypted, e.previous_secret_encrypted, e.previous_secret_expires_at
        FROM claimed c JOIN webhook_endpoints e ON e.id = c.endpoint_id
      `.execute(db);
      return rows;
    },

    /**
     * Writes a batch of ended attempts in one statement (over the unfinished record of one cut off meanwhile). The
     * rows go as one array per column: a few parameters instead of nine per row.
     */
    async recordAttempts(attempts: EndedAttempt[]) {
      if (attempts.length === 0) return;
      const column = <T>(pick: (a: EndedAttempt) => T) => attempts.map(pick);
      await sql`INSERT INTO webhook_attempts
          (account_id, delivery_id, number, started_at, finished_at, status_code, latency_ms, error, response_excerpt)
        SELECT * FROM unnest(
          ${column((a) => a.accountId)}::uuid[], ${column((a) => a.deliveryId)}::uuid[], ${column((a) => a.number)}::int[],
          ${column((a) => a.startedAt.toISOString())}::timestamptz[], ${column((a) => a.finishedAt.toISOString())}::timestamptz[],
          ${column((a) => a.statusCode)}::int[], ${column((a) => a.latencyMs)}::int[], ${column((a) => a.error)}::text[],
          ${column((a) => a.responseExcerpt)}::text[])
        ON CONFLICT (delivery_id, number) DO UPDATE SET
          finished_at = excluded.finished_at, status_code = excluded.status_code, latency_ms = excluded.latency_ms,
          error = excluded.error, response_excerpt = excluded.response_excerpt
      `.execute(db);
    },

    /**
     * Marks delivered the deliveries still under the lease their attempts were claimed with (not stopped, redelivered,
     * or taken again by another dispatcher meanwhile). One statement for a batch; answers the ids settled.
     */
    async settleSucceeded(ids: string[], leaseUntil: Date, at: Date): Promise<string[]> {
      if (ids.length === 0) return [];
      // The ids as one array parameter: a batch of a hundred costs what one does to send.
      const { rows } = await sql<{ id: string }>`
        UPDATE webhook_deliveries
        SET state = 'succeeded', next_attempt_at = NULL, leased_until = NULL, attempt_started_at = NULL,
            first_attempt_done = true, updated_at = ${at}
        WHERE id = ANY(${ids}::uuid[]) AND leased_until = ${leaseUntil}
        RETURNING id
      `.execute(db);
      return rows.map((row) => row.id);
    },

    /** A failed attempt's delivery waits for its retry or is abandoned, if still under the attempt's lease. */
    async settleFailed(
      accountId: string,
      id: string,
      leaseUntil: Date,
      changes: { state: 'pending' | 'abandoned'; next_attempt_at: Date | null; updated_at: Date },
    ): Promise<boolean> {
      const row = await db
        .updateTable('webhook_deliveries')
        .set({ ...changes, leased_until: null, attempt_started_at: null, first_attempt_done: true })
        .where('account_id', '=', accountId)
        .where('id', '=', id)
        .where('leased_until', '=', leaseUntil)
        .returning('id')
        .executeTakeFirst();
      return row !== undefined;
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
        .set({
          state: 'pending',
          round_attempts: 0,
          next_attempt_at: now,
          leased_until: null,
          first_attempt_done: true,
          updated_at: now,
        })
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
        .set({
          state: 'pending',
          round_attempts: 0,
          next_attempt_at: now,
          leased_until: null,
          first_attempt_done: true,
          updated_at: now,
        })
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
