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
export type AttemptResult = Pick<
  Updateable<WebhookAttemptsTable>,
  'finished_at' | 'status_code' | 'latency_ms' | 'error' | 'response_excerpt'
>;

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

    /** A new delivery; none when this event already has one for this endpoint (a fan-out that ran twice). */
    async insertDelivery(accountId: string, delivery: NewDelivery): Promise<boolean> {
      const inserted = await db
        .insertInto('webhook_deliveries')
        .values({ ...delivery, account_id: accountId })
        .onConflict((oc) => oc.columns(['endpoint_id', 'event_id']).doNothing())
        .returning('id')
        .executeTakeFirst();
      return inserted !== undefined;
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
     * Takes attempt `expected + 1` of a due delivery: exactly one caller wins (the others see the count moved). The
     * delivery's due time moves to `leaseUntil`, so an attempt lost with its process is made again after that.
     */
    claimAttempt(accountId: string, id: string, expected: number, now: Date, leaseUntil: Date) {
      return db
        .updateTable('webhook_deliveries')
        .set((eb) => ({
          attempt_count: eb('attempt_count', '+', 1),
          round_attempts: eb('round_attempts', '+', 1),
          next_attempt_at: leaseUntil,
          updated_at: now,
        }))
        .where('account_id', '=', accountId)
        .where('id', '=', id)
        .where('state', '=', 'pending')
        .where('attempt_count', '=', expected)
        .where('next_attempt_at', '<=', now)
        .returningAll()
        .executeTakeFirst();
    },

    /** An earlier delivery of the same subject to the same endpoint whose first attempt has not ended yet. */
    blockingPredecessor(accountId: string, delivery: DeliveryRow) {
      if (delivery.subject_id === null) return Promise.resolve(undefined);
      return deliveries(accountId)
        .select('id')
        .where('endpoint_id', '=', delivery.endpoint_id)
        .where('subject_id', '=', delivery.subject_id)
        .where('state', '=', 'pending')
        .where('first_attempt_done', '=', false)
        .where((eb) =>
          eb.or([
            eb('occurred_at', '<', delivery.occurred_at),
            eb.and([eb('occurred_at', '=', delivery.occurred_at), eb('seq', '<', delivery.seq)]),
          ]),
        )
        .limit(1)
        .executeTakeFirst();
    },

    /** The next delivery of this subject waiting for its first attempt (it may have been held back by this one). */
    nextWaiting(accountId: string, endpointId: string, subjectId: string) {
      return deliveries(accountId)
        .select(['id', 'attempt_count'])
        .where('endpoint_id', '=', endpointId)
        .where('subject_id', '=', subjectId)
        .where('state', '=', 'pending')
        .where('first_attempt_done', '=', false)
        .orderBy('occurred_at')
        .orderBy('seq')
        .limit(1)
        .executeTakeFirst();
    },

    insertAttempt(accountId: string, attempt: { delivery_id: string; number: number; started_at: Date }) {
      return db
        .insertInto('webhook_attempts')
        .values({ ...attempt, account_id: accountId })
        .execute();
    },

    finishAttempt(accountId: string, deliveryId: string, number: number, result: AttemptResult) {
      return db
        .updateTable('webhook_attempts')
        .set(result)
        .where('account_id', '=', accountId)
        .where('delivery_id', '=', deliveryId)
        .where('number', '=', number)
        .execute();
    },

    /** Records how an attempt ended on its delivery, unless another process moved the delivery on meanwhile. */
    settleDelivery(
      accountId: string,
      id: string,
      attemptCount: number,
      changes: Pick<Updateable<WebhookDeliveriesTable>, 'state' | 'next_attempt_at' | 'updated_at'>,
    ) {
      return db
        .updateTable('webhook_deliveries')
        .set({ ...changes, first_attempt_done: true })
        .where('account_id', '=', accountId)
        .where('id', '=', id)
        .where('attempt_count', '=', attemptCount)
        .where('state', '=', 'pending')
        .returningAll()
        .executeTakeFirst();
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

    /** Due pending deliveries of every account: the sweep that re-enqueues what a lost job or a crash left behind. */
    dueDeliveries(now: Date, limit: number) {
      return db
        .selectFrom('webhook_deliveries')
        .select(['id', 'account_id', 'attempt_count'])
        .where('state', '=', 'pending')
        .where('next_attempt_at', '<=', now)
        .orderBy('next_attempt_at')
        .limit(limit)
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
