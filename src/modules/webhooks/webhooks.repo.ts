import { sql, type Insertable, type Selectable, type Updateable } from 'kysely';
import type { Db } from '../../db/client.js';
import { createRepo, type Executor } from '../../db/repo.js';
import type { OutboxFactory, Tx } from '../../events/outbox.js';
import { paginate, type Page } from '../../db/pagination.js';
import type { AttemptRecord, DeliveryState, WebhookDeliveriesTable, WebhookEndpointsTable } from './webhooks.tables.js';

export type EndpointRow = Selectable<WebhookEndpointsTable>;
export type DeliveryRow = Selectable<WebhookDeliveriesTable>;
export type NewEndpoint = Omit<Insertable<WebhookEndpointsTable>, 'account_id'>;
export type EndpointChanges = Omit<Updateable<WebhookEndpointsTable>, 'id' | 'account_id' | 'created_at'>;
export type NewDelivery = Omit<Insertable<WebhookDeliveriesTable>, 'account_id'>;
/**
 * Which endpoints a claim serves. `lane`: 'main', the endpoints in good standing; 'penalty', those whose last attempt
 * timed out (one delivery each per claim); 'every', both. `only` narrows to these endpoints (the quick lane's);
 * `except` leaves these out (endpoints with attempts still waiting for a place in the dispatcher's process);
 * `timedOut` counts these as timed out, as the dispatcher's process saw before it recorded them.
 */
export interface ClaimScope {
  lane: 'main' | 'penalty' | 'every';
  only?: readonly string[];
  except?: readonly string[];
  timedOut?: readonly string[];
}

/** An endpoint as a batch's record locks it. */
export type LockedEndpoint = Pick<EndpointRow, 'id' | 'account_id' | 'enabled' | 'failure_streak' | 'timed_out_at'>;

/** A delivery as the dispatcher claims it. */
export interface ClaimedDelivery {
  id: string;
  account_id: string;
  endpoint_id: string;
  event_type: string;
  body: string;
  /** The number of the attempt about to be made. */
  attempt_number: number;
  /** Attempts in this round, this one included (a redelivery starts a new round). */
  round_attempts: number;
  /** The row's version when claimed: a change since then (a stop, a redelivery) wins over the attempt's outcome. */
  version: string;
  /** The endpoint is in the penalty lane (its last attempt timed out). */
  penalized: boolean;
}

/** How one claimed attempt ended, and where its delivery goes next. */
export interface AttemptOutcome {
  deliveryId: string;
  attemptNumber: number;
  version: string;
  attempt: AttemptRecord & { finishedAt: string };
  state: 'pending' | 'succeeded' | 'abandoned';
  nextAttemptAt: Date | null;
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

    /**
     * Holds the account's list of endpoints until the transaction ends (an advisory lock): creations take turns, so
     * two sent at once cannot both pass the cap.
     */
    async lockEndpointList(accountId: string) {
      await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`parley:webhooks:endpoints:${accountId}`}, 0))`.execute(
        db,
      );
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

    /**
     * Ends a batch's lease and locks its endpoints' rows until the transaction ends, in the order of their ids, in one
     * statement; null when the lease had run out and another dispatcher took the batch over (nothing is locked then).
     * A batch is recorded with its endpoints locked first, as deleting an endpoint locks it before its deliveries:
     * taken in the other order, the two wait for each other (a deadlock, on PostgreSQL). Answers the endpoints as
     * locked (one deleted meanwhile is left out).
     */
    async releaseLeaseLockingEndpoints(
      leaseId: string,
      endpoints: ReadonlyArray<{ accountId: string; id: string }>,
    ): Promise<LockedEndpoint[] | null> {
      const accountIds = [...new Set(endpoints.map((e) => e.accountId))];
      const { rows } = await sql<{ [K in keyof LockedEndpoint]: LockedEndpoint[K] | null }>`
        WITH released AS (DELETE FROM webhook_dispatch_leases WHERE id = ${leaseId} RETURNING id)
        SELECT e.id, e.account_id, e.enabled, e.failure_streak, e.timed_out_at
        FROM released
        LEFT JOIN LATERAL (
          SELECT id, account_id, enabled, failure_streak, timed_out_at FROM webhook_endpoints
          WHERE account_id = ANY(${accountIds}::uuid[]) AND id = ANY(${endpoints.map((e) => e.id)}::uuid[])
          ORDER BY id
          FOR UPDATE
        ) e ON true
      `.execute(db);
      if (rows.length === 0) return null;
      return rows.filter((row): row is LockedEndpoint => row.id !== null);
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

    /** The account's enabled endpoints that receive any of these event types, oldest first. */
    subscribedEndpoints(accountId: string, types: readonly string[]) {
      return endpoints(accountId)
        .select(['id', 'events'])
        .where('enabled', '=', true)
        .where(sql<boolean>`events ?| ${[...types]}::text[]`)
        .orderBy('created_at')
        .execute();
    },

    /**
     * New deliveries, in one statement, numbered in the order given; answers how many were written. Each notes
     * whether an earlier delivery of its subject to its endpoint is still unsent (one written before, or one earlier
     * in `rows`), so the dispatcher checks the order only where it has to.
     */
    async insertDeliveries(accountId: string, rows: NewDelivery[]): Promise<number> {
      if (rows.length === 0) return 0;
      const seen = new Set<string>();
      const followsInRows = rows.map((row) => {
        if (row.subject_id == null) return false;
        const key = `${row.endpoint_id} ${row.subject_id}`;
        if (seen.has(key)) return true;
        seen.add(key);
        return false;
      });
      const column = <T>(pick: (row: NewDelivery) => T) => rows.map(pick);
      const time = (at: Date | string | null | undefined) => (at == null ? null : new Date(at).toISOString());
      const { rows: inserted } = await sql<{ id: string }>`
        INSERT INTO webhook_deliveries (id, account_id, endpoint_id, event_id, event_type, subject_id, occurred_at,
                                        body, state, next_attempt_at, created_at, updated_at, follows_unsent)
        SELECT r.id, ${accountId}, r.endpoint_id, r.event_id, r.event_type, r.subject_id, r.occurred_at, r.body,
               r.state, r.next_attempt_at, r.created_at, r.updated_at,
               r.follows_in_rows OR (r.subject_id IS NOT NULL AND EXISTS (
                 SELECT 1 FROM webhook_deliveries p
                 WHERE p.account_id = ${accountId} AND p.endpoint_id = r.endpoint_id AND p.subject_id = r.subject_id
                   AND p.state = 'pending' AND NOT p.first_attempt_done))
        FROM unnest(
          ${column((r) => r.id)}::uuid[], ${column((r) => r.endpoint_id)}::uuid[],
          ${column((r) => r.event_id ?? null)}::uuid[], ${column((r) => r.event_type)}::text[],
          ${column((r) => r.subject_id ?? null)}::text[], ${column((r) => time(r.occurred_at))}::timestamptz[],
          ${column((r) => r.body)}::text[], ${column((r) => r.state)}::text[],
          ${column((r) => time(r.next_attempt_at))}::timestamptz[], ${column((r) => time(r.created_at))}::timestamptz[],
          ${column((r) => time(r.updated_at))}::timestamptz[], ${followsInRows}::boolean[]
        ) WITH ORDINALITY AS r(id, endpoint_id, event_id, event_type, subject_id, occurred_at, body, state,
                               next_attempt_at, created_at, updated_at, follows_in_rows, n)
        ORDER BY r.n
        RETURNING id
      `.execute(db);
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

    /**
     * Run first in a claim's transaction: leases that ran out belonged to a dispatcher that died mid-batch. Each
     * delivery still pending records its attempt as cut off (finishedAt null), and is due again at once.
     */
    async takeOverExpiredLeases(now: Date): Promise<number> {
      const { rows } = await sql<{ id: string }>`
        WITH expired AS (
          DELETE FROM webhook_dispatch_leases WHERE leased_until <= ${now} RETURNING started_at, delivery_ids
        ), cut_off AS (
          SELECT unnest(delivery_ids) AS id, started_at FROM expired
        )
        UPDATE webhook_deliveries d
        SET attempt_count = d.attempt_count + 1, round_attempts = d.round_attempts + 1, updated_at = ${now},
            attempts = d.attempts || json_build_object(
              'number', d.attempt_count + 1, 'startedAt', c.started_at, 'finishedAt', null, 'statusCode', null,
              'latencyMs', null, 'error', null, 'responseBody', null)::text || ${'\n'}
        FROM cut_off c
        WHERE d.id = c.id AND d.state = 'pending'
        RETURNING d.id
      `.execute(db);
      return rows.length;
    },

    /**
     * Claims up to `limit` due deliveries under one lease row. Run in a transaction, after `takeOverExpiredLeases`.
     * Claims take turns (an advisory lock held to the end of the transaction), so each sees every lease committed
     * before it and never takes a leased delivery. A delivery that followed an unsent one of the same subject waits
     * until that one's first attempt has ended (events of a call go out in order). `serving` picks the endpoints
     * (see ClaimScope).
     *
     * Shares: every account with deliveries due gets an equal share of the batch, and each of its endpoints an equal
     * share of the account's (an endpoint in the penalty lane, one delivery), the longest waiting first. The batch is
     * cut in rounds (every account's first delivery, then every account's second...), so that where the shares add up
     * to more than the batch, no account is left out: one account's endpoints, however many, take one account's part.
     */
    async claimDue(
      now: Date,
      limit: number,
      lease: { id: string; until: Date },
      serving: ClaimScope = { lane: 'every' },
    ): Promise<ClaimedDelivery[]> {
      // The turn, and the plan: each endpoint's due deliveries are read in order from its index and the scan stops at
      // its share. Where statistics are missing (the embedded database never analyzes) the planner could otherwise
      // choose a bitmap scan, which reads every due row of the endpoint. One statement, as each costs a round trip.
      await sql`SELECT pg_advisory_xact_lock(hashtextextended('parley:webhooks:claim', 0)),
                       set_config('enable_bitmapscan', 'off', true)`.execute(db);
      const penalized = sql<boolean>`(e.timed_out_at IS NOT NULL OR e.id = ANY(${serving.timedOut ?? []}::uuid[]))`;
      const lane =
        serving.lane === 'main'
          ? sql`AND NOT ${penalized}`
          : serving.lane === 'penalty'
            ? sql`AND ${penalized}`
            : sql``;
      const only = serving.only ? sql`AND e.id = ANY(${serving.only}::uuid[])` : sql``;
      const except = serving.except?.length ? sql`AND e.id <> ALL(${serving.except}::uuid[])` : sql``;
      const { rows } = await sql<ClaimedDelivery>`
        WITH leased AS (
          SELECT unnest(delivery_ids) AS id FROM webhook_dispatch_leases
        ), due_endpoints AS (
          SELECT id, account_id, penalized, oldest FROM (
            SELECT e.id, e.account_id, ${penalized} AS penalized,
                   (SELECT d.next_attempt_at FROM webhook_deliveries d
                    WHERE d.endpoint_id = e.id AND d.state = 'pending' AND d.next_attempt_at IS NOT NULL
                    ORDER BY d.next_attempt_at LIMIT 1) AS oldest
            FROM webhook_endpoints e
            WHERE e.enabled ${lane} ${only} ${except}
          ) enabled_endpoints
          WHERE oldest <= ${now}
        ), due_accounts AS (
          SELECT account_id, count(*) AS endpoints, min(oldest) AS oldest FROM due_endpoints GROUP BY account_id
        ), shares AS (
          SELECT w.id, w.account_id, w.penalized, w.oldest, a.oldest AS account_oldest,
                 CASE WHEN w.penalized THEN 1
                      ELSE greatest(${limit}::int / (SELECT count(*) FROM due_accounts) / a.endpoints, 1) END AS size
          FROM due_endpoints w JOIN due_accounts a ON a.account_id = w.account_id
        ), due AS (
          SELECT d.*, w.oldest AS endpoint_oldest, w.account_oldest,
                 row_number() OVER (PARTITION BY d.endpoint_id ORDER BY d.next_attempt_at, d.id) AS endpoint_round
          FROM shares w
          CROSS JOIN LATERAL (
            SELECT d.id, d.account_id, d.endpoint_id, d.event_type, d.body, d.attempt_count + 1 AS attempt_number,
                   d.round_attempts + 1 AS round_attempts, d.xmin::text AS version, w.penalized, d.next_attempt_at
            FROM webhook_deliveries d
            WHERE d.endpoint_id = w.id AND d.state = 'pending' AND d.next_attempt_at <= ${now}
              AND d.id NOT IN (SELECT id FROM leased)
              AND (NOT d.follows_unsent OR d.first_attempt_done OR NOT EXISTS (
                SELECT 1 FROM webhook_deliveries p
                WHERE p.endpoint_id = d.endpoint_id AND p.subject_id = d.subject_id AND p.state = 'pending'
                  AND NOT p.first_attempt_done AND (p.occurred_at, p.seq) < (d.occurred_at, d.seq)))
            ORDER BY d.next_attempt_at
            LIMIT w.size
          ) d
        ), rounds AS (
          SELECT *, row_number() OVER (
                      PARTITION BY account_id ORDER BY endpoint_round, endpoint_oldest, endpoint_id) AS account_round
          FROM due
        ), chosen AS (
          SELECT id, account_id, endpoint_id, event_type, body, attempt_number, round_attempts, version, penalized
          FROM rounds
          ORDER BY account_round, account_oldest, account_id
          LIMIT ${limit}
        ), leasing AS (
          INSERT INTO webhook_dispatch_leases (id, started_at, leased_until, delivery_ids)
          SELECT ${lease.id}, ${now}, ${lease.until}, array_agg(id) FROM chosen HAVING count(*) > 0
        )
        SELECT * FROM chosen
      `.execute(db);
      return rows;
    },

    /** The endpoints' addresses and secrets, read once per batch. */
    endpointsByIds(ids: string[]) {
      return db
        .selectFrom('webhook_endpoints')
        .select(['id', 'url', 'secret_encrypted', 'previous_secret_encrypted', 'previous_secret_expires_at'])
        .where('id', '=', sql<string>`ANY(${ids}::uuid[])`)
        .execute();
    },

    /** A dispatcher still at work keeps its batch. */
    async extendLease(id: string, until: Date) {
      await db.updateTable('webhook_dispatch_leases').set({ leased_until: until }).where('id', '=', id).execute();
    },

    /** Ends a batch's lease; false when it had run out and another dispatcher took the batch over. */
    async releaseLease(id: string): Promise<boolean> {
      const released = await db.deleteFrom('webhook_dispatch_leases').where('id', '=', id).returning('id').execute();
      return released.length > 0;
    },

    /**
     * Records a batch of ended attempts, one row write each: the attempt joins its delivery's log, and the delivery
     * moves on (delivered, due for its retry, or abandoned) unless something changed it since the claim (it was
     * stopped or sent again): then only the attempt is recorded. An attempt taken over meanwhile (recorded as cut off)
     * is not recorded again. The rows go as one array per column.
     */
    async recordOutcomes(outcomes: AttemptOutcome[], settledAt: Date) {
      if (outcomes.length === 0) return;
      const column = <T>(pick: (o: AttemptOutcome) => T) => outcomes.map(pick);
      const ids = column((o) => o.deliveryId);
      // The row's xmin (the transaction that last wrote it) is the version read at the claim: any write since moves it.
      await sql`
        UPDATE webhook_deliveries d
        SET attempts = d.attempts || o.attempt || ${'\n'},
            attempt_count = o.attempt_number,
            first_attempt_done = true,
            state = CASE WHEN d.xmin = o.version THEN o.state ELSE d.state END,
            next_attempt_at = CASE WHEN d.xmin = o.version THEN o.next_attempt_at ELSE d.next_attempt_at END,
            round_attempts = CASE WHEN d.xmin = o.version THEN d.round_attempts + 1 ELSE d.round_attempts END,
            updated_at = CASE WHEN d.xmin = o.version THEN ${settledAt} ELSE d.updated_at END
        FROM unnest(
          ${ids}::uuid[], ${column((o) => o.version)}::xid[], ${column((o) => o.attemptNumber)}::int[],
          ${column((o) => JSON.stringify(o.attempt))}::text[], ${column((o) => o.state)}::text[],
          ${column((o) => o.nextAttemptAt?.toISOString() ?? null)}::timestamptz[]
        ) AS o(id, version, attempt_number, attempt, state, next_attempt_at)
        WHERE d.id = ANY(${ids}::uuid[]) AND d.id = o.id AND d.attempt_count = o.attempt_number - 1
      `.execute(db);
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

    /** Every endpoint of every account, for retention. */
    allEndpoints() {
      return db.selectFrom('webhook_endpoints').select(['account_id', 'id']).execute();
    },

    /** Retention: an endpoint's finished deliveries created before `before` (their attempts go with them). */
    async deleteDeliveriesBefore(accountId: string, endpointId: string, before: Date): Promise<number> {
      const result = await db
        .deleteFrom('webhook_deliveries')
        .where('account_id', '=', accountId)
        .where('endpoint_id', '=', endpointId)
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
