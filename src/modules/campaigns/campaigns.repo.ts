import { sql, type Insertable, type RawBuilder, type Updateable } from 'kysely';
import type { Db } from '../../db/client.js';
import { createRepo, type Executor } from '../../db/repo.js';
import type { OutboxFactory, Tx } from '../../events/outbox.js';
import { paginate, type Page } from '../../db/pagination.js';
import type { CampaignStatsTable, CampaignStatus, CampaignsTable } from './campaigns.tables.js';

export type NewCampaign = Omit<Insertable<CampaignsTable>, 'account_id'>;
export type CampaignChanges = Omit<Updateable<CampaignsTable>, 'id' | 'account_id' | 'created_at'>;
/** Where a dial pass leaves a contact it claimed. */
export interface ContactSettlement {
  contactId: string;
  state: 'pending' | 'in_call' | 'done';
  attempts?: number;
  nextAttemptAt?: Date;
  lastOutcome?: string;
}
type StatColumn = Exclude<keyof CampaignStatsTable, 'campaign_id' | 'account_id' | 'cost_usd'>;

export function campaignQueries(db: Executor) {
  const owned = (accountId: string) => db.selectFrom('campaigns').where('account_id', '=', accountId);

  return {
    async insertCampaign(accountId: string, campaign: NewCampaign) {
      const row = await db
        .insertInto('campaigns')
        .values({ ...campaign, account_id: accountId })
        .returningAll()
        .executeTakeFirstOrThrow();
      await db.insertInto('campaign_stats').values({ campaign_id: row.id, account_id: accountId }).execute();
      return row;
    },

    find(accountId: string, id: string) {
      return owned(accountId).selectAll().where('id', '=', id).executeTakeFirst();
    },

    findForUpdate(accountId: string, id: string) {
      return owned(accountId).selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
    },

    list(accountId: string, filters: { status?: CampaignStatus }, page: Page) {
      let matching = owned(accountId);
      if (filters.status) matching = matching.where('status', '=', filters.status);
      return paginate(matching, page, (q) => q.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc'));
    },

    update(accountId: string, id: string, changes: CampaignChanges) {
      return db
        .updateTable('campaigns')
        .set(changes)
        .where('account_id', '=', accountId)
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirstOrThrow();
    },

    /** Takes `count` turns of the caller-number rotation; answers the first position. */
    async takeNumberTurns(accountId: string, id: string, count: number): Promise<number> {
      const row = await db
        .updateTable('campaigns')
        .set({ number_cursor: sql`number_cursor + ${count}` } as never)
        .where('account_id', '=', accountId)
        .where('id', '=', id)
        .returning(sql<string>`number_cursor - ${count}`.as('first'))
        .executeTakeFirstOrThrow();
      return Number(row.first);
    },

    /** Running campaigns of every account: the scheduled sweep wakes each one's dialer. */
    runningCampaigns() {
      return db
        .selectFrom('campaigns')
        .select(['id', 'account_id'])
        .where('status', '=', 'running')
        .limit(10_000)
        .execute();
    },

    /** Copies the lists' contacts into the campaign's queue, once; answers how many. */
    async loadContacts(
      accountId: string,
      campaignId: string,
      members: RawBuilder<unknown>,
      dueAt: Date,
    ): Promise<number> {
      const { rows } = await sql<{ loaded: string }>`
        WITH inserted AS (
          INSERT INTO campaign_contacts (campaign_id, account_id, contact_id, next_attempt_at)
          SELECT ${campaignId}::uuid, ${accountId}::uuid, m.contact_id, ${dueAt}::timestamptz FROM (${members}) AS m
          ON CONFLICT DO NOTHING RETURNING 1
        ) SELECT count(*) AS loaded FROM inserted`.execute(db);
      const loaded = Number(rows[0]!.loaded);
      await db
        .updateTable('campaign_stats')
        .set({ contacts_total: sql`contacts_total + ${loaded}` } as never)
        .where('account_id', '=', accountId)
        .where('campaign_id', '=', campaignId)
        .execute();
      return loaded;
    },

    /** Due contacts, locked and marked claimed; two dialers never claim the same one (SKIP LOCKED). */
    async claimDue(accountId: string, campaignId: string, now: Date, limit: number) {
      // Materialized: the locked batch is chosen once (a plain subquery may be re-run per row and grow the batch).
      const { rows } = await sql<{ contact_id: string; attempts: number }>`
        WITH due AS MATERIALIZED (
          SELECT contact_id FROM campaign_contacts
          WHERE account_id = ${accountId} AND campaign_id = ${campaignId} AND state = 'pending' AND next_attempt_at <= ${now}
          ORDER BY next_attempt_at LIMIT ${limit} FOR UPDATE SKIP LOCKED
        )
        UPDATE campaign_contacts AS cc SET state = 'claimed', claimed_at = ${now}
        FROM due
        WHERE cc.account_id = ${accountId} AND cc.campaign_id = ${campaignId} AND cc.contact_id = due.contact_id
        RETURNING cc.contact_id, cc.attempts`.execute(db);
      return rows;
    },

    /** Claims older than `before` whose dialer died before dialling go back to the queue. */
    async releaseStaleClaims(accountId: string, campaignId: string, before: Date) {
      const result = await db
        .updateTable('campaign_contacts')
        .set({ state: 'pending', claimed_at: null })
        .where('account_id', '=', accountId)
        .where('campaign_id', '=', campaignId)
        .where('state', '=', 'claimed')
        .where('claimed_at', '<', before)
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
    },

    setContact(
      accountId: string,
      campaignId: string,
      contactId: string,
      changes: Updateable<{
        state: string;
        attempts: number;
        next_attempt_at: Date;
        last_outcome: string | null;
        claimed_at: Date | null;
      }>,
    ) {
      return db
        .updateTable('campaign_contacts')
        .set(changes as never)
        .where('account_id', '=', accountId)
        .where('campaign_id', '=', campaignId)
        .where('contact_id', '=', contactId)
        .execute();
    },

    /**
     * Settles a dial pass's contacts in one statement: each row's state, and (when given) its attempts, next attempt
     * and last outcome; the claim is cleared.
     */
    async settleContacts(accountId: string, campaignId: string, rows: readonly ContactSettlement[]) {
      if (rows.length === 0) return;
      await sql`
        UPDATE campaign_contacts AS cc SET
          state = v.state,
          claimed_at = NULL,
          attempts = COALESCE(v.attempts, cc.attempts),
          next_attempt_at = COALESCE(v.next_attempt_at, cc.next_attempt_at),
          last_outcome = COALESCE(v.last_outcome, cc.last_outcome)
        FROM unnest(
          ${rows.map((r) => r.contactId)}::uuid[],
          ${rows.map((r) => r.state)}::text[],
          ${rows.map((r) => r.attempts ?? null)}::int[],
          ${rows.map((r) => r.nextAttemptAt?.toISOString() ?? null)}::timestamptz[],
          ${rows.map((r) => r.lastOutcome ?? null)}::text[]
        ) AS v(contact_id, state, attempts, next_attempt_at, last_outcome)
        WHERE cc.account_id = ${accountId} AND cc.campaign_id = ${campaignId} AND cc.contact_id = v.contact_id`.execute(
        db,
      );
    },

    /**
     * Records the gate's decisions of a dial pass, one row per attempt (campaign, contact, number), in one statement.
     * An attempt already dialled is never taken again: its contact is missing from the answer. A denied one may be
     * decided again. Answers the attempt id of each contact whose decision was recorded.
     */
    async decideAttempts(
      accountId: string,
      attempts: ReadonlyArray<{
        id: string;
        campaignId: string;
        contactId: string;
        number: number;
        decision: string;
        status: 'denied' | 'dialed';
        fromNumber: string | null;
        at: Date;
      }>,
    ): Promise<Map<string, string>> {
      if (attempts.length === 0) return new Map();
      const rows = await db
        .insertInto('campaign_attempts')
        .values(
          attempts.map((attempt) => ({
            id: attempt.id,
            account_id: accountId,
            campaign_id: attempt.campaignId,
            contact_id: attempt.contactId,
            attempt_number: attempt.number,
            status: attempt.status,
            decision: attempt.decision,
            decided_at: attempt.at,
            from_number: attempt.fromNumber,
          })),
        )
        .onConflict((oc) =>
          oc
            .columns(['campaign_id', 'contact_id', 'attempt_number'])
            .doUpdateSet((eb) => ({
              status: eb.ref('excluded.status'),
              decision: eb.ref('excluded.decision'),
              decided_at: eb.ref('excluded.decided_at'),
              from_number: eb.ref('excluded.from_number'),
            }))
            .where('campaign_attempts.status', '=', 'denied')
            .where('campaign_attempts.account_id', '=', accountId),
        )
        .returning(['contact_id', 'id'])
        .execute();
      return new Map(rows.map((row) => [row.contact_id, row.id]));
    },

    /** Links each dialled attempt to its call, in one statement. */
    async setAttemptCalls(accountId: string, links: ReadonlyArray<{ attemptId: string; callId: string }>) {
      if (links.length === 0) return;
      await sql`
        UPDATE campaign_attempts AS a SET call_id = v.call_id
        FROM unnest(${links.map((l) => l.attemptId)}::uuid[], ${links.map((l) => l.callId)}::uuid[]) AS v(id, call_id)
        WHERE a.account_id = ${accountId} AND a.id = v.id`.execute(db);
    },

    attemptOfCall(accountId: string, callId: string) {
      return db
        .selectFrom('campaign_attempts')
        .selectAll()
        .where('account_id', '=', accountId)
        .where('call_id', '=', callId)
        .forUpdate()
        .executeTakeFirst();
    },

    endAttempt(
      accountId: string,
      attemptId: string,
      changes: Updateable<{
        status: 'ended';
        outcome: string;
        live_answered: boolean;
        abandoned: boolean;
        talk_seconds: number | null;
        cost_usd: string | null;
        disposition: string | null;
        ended_at: Date;
      }>,
    ) {
      return db
        .updateTable('campaign_attempts')
        .set(changes as never)
        .where('account_id', '=', accountId)
        .where('id', '=', attemptId)
        .execute();
    },

    /** Calls of the campaign placed and not yet ended. */
    async inFlight(accountId: string, campaignId: string): Promise<number> {
      const row = await db
        .selectFrom('campaign_attempts')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('account_id', '=', accountId)
        .where('campaign_id', '=', campaignId)
        .where('status', '=', 'dialed')
        .executeTakeFirstOrThrow();
      return Number(row.n);
    },

    async dialedSince(accountId: string, campaignId: string, since: Date): Promise<number> {
      const row = await db
        .selectFrom('campaign_attempts')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('account_id', '=', accountId)
        .where('campaign_id', '=', campaignId)
        .where('status', '<>', 'denied')
        .where('decided_at', '>=', since)
        .executeTakeFirstOrThrow();
      return Number(row.n);
    },

    /** Per contact: dials across all the account's campaigns since `since`, and the last abandoned call since `abandonedSince`. */
    contactHistory(accountId: string, contactIds: readonly string[], since: Date, abandonedSince: Date) {
      return db
        .selectFrom('campaign_attempts')
        .select([
          'contact_id',
          sql<string>`count(*) FILTER (WHERE decided_at >= ${since})`.as('recent'),
          sql<string>`count(*) FILTER (WHERE abandoned AND ended_at >= ${abandonedSince})`.as('abandoned'),
        ])
        .where('account_id', '=', accountId)
        .where('contact_id', 'in', contactIds)
        .where('status', '<>', 'denied')
        .where('decided_at', '>=', since < abandonedSince ? since : abandonedSince)
        .groupBy('contact_id')
        .execute();
    },

    /** Live-answered and abandoned calls of the campaign that ended since each of these instants (exact, from the attempts). */
    async abandonFigures(
      accountId: string,
      campaignId: string,
      since: { last30Days: Date; today: Date; lastHour: Date },
    ) {
      const row = await db
        .selectFrom('campaign_attempts')
        .select([
          sql<string>`count(*)`.as('live30'),
          sql<string>`count(*) FILTER (WHERE abandoned)`.as('abandoned30'),
          sql<string>`count(*) FILTER (WHERE ended_at >= ${since.today})`.as('liveToday'),
          sql<string>`count(*) FILTER (WHERE abandoned AND ended_at >= ${since.today})`.as('abandonedToday'),
          sql<string>`count(*) FILTER (WHERE ended_at >= ${since.lastHour})`.as('liveHour'),
          sql<string>`count(*) FILTER (WHERE abandoned AND ended_at >= ${since.lastHour})`.as('abandonedHour'),
        ])
        .where('account_id', '=', accountId)
        .where('campaign_id', '=', campaignId)
        .where('live_answered', '=', true)
        .where('ended_at', '>=', since.last30Days)
        .executeTakeFirstOrThrow();
      const figure = (live: string, abandoned: string) => ({
        liveAnswered: Number(live),
        abandoned: Number(abandoned),
      });
      return {
        last30Days: figure(row.live30, row.abandoned30),
        today: figure(row.liveToday, row.abandonedToday),
        lastHour: figure(row.liveHour, row.abandonedHour),
      };
    },

    /** Adds to the campaign's aggregates. */
    async addStats(
      accountId: string,
      campaignId: string,
      deltas: Partial<Record<StatColumn, number>>,
      costUsd?: string,
    ) {
      const sets: Record<string, unknown> = {};
      for (const [column, delta] of Object.entries(deltas)) {
        if (delta) sets[column] = sql`${sql.ref(column)} + ${delta}`;
      }
      if (costUsd) sets.cost_usd = sql`cost_usd + ${costUsd}::numeric`;
      if (Object.keys(sets).length === 0) return;
      await db
        .updateTable('campaign_stats')
        .set(sets as never)
        .where('account_id', '=', accountId)
        .where('campaign_id', '=', campaignId)
        .execute();
    },

    async countUp(accountId: string, campaignId: string, kind: 'denial' | 'disposition', key: string) {
      await db
        .insertInto('campaign_counters')
        .values({ campaign_id: campaignId, account_id: accountId, kind, key, count: 1 })
        .onConflict((oc) =>
          oc.columns(['campaign_id', 'kind', 'key']).doUpdateSet({ count: sql`campaign_counters.count + 1` }),
        )
        .execute();
    },

    /** Adds to several counters of one kind at once (a dial pass's denials by reason). */
    async countUpMany(
      accountId: string,
      campaignId: string,
      kind: 'denial' | 'disposition',
      counts: ReadonlyMap<string, number>,
    ) {
      if (counts.size === 0) return;
      await db
        .insertInto('campaign_counters')
        .values(
          [...counts].map(([key, count]) => ({ campaign_id: campaignId, account_id: accountId, kind, key, count })),
        )
        .onConflict((oc) =>
          oc
            .columns(['campaign_id', 'kind', 'key'])
            .doUpdateSet({ count: sql`campaign_counters.count + excluded.count` }),
        )
        .execute();
    },

    stats(accountId: string, campaignId: string) {
      return db
        .selectFrom('campaign_stats')
        .selectAll()
        .where('account_id', '=', accountId)
        .where('campaign_id', '=', campaignId)
        .executeTakeFirstOrThrow();
    },

    counters(accountId: string, campaignId: string) {
      return db
        .selectFrom('campaign_counters')
        .select(['kind', 'key', 'count'])
        .where('account_id', '=', accountId)
        .where('campaign_id', '=', campaignId)
        .execute();
    },

    async dueNow(accountId: string, campaignId: string, now: Date): Promise<number> {
      const row = await db
        .selectFrom('campaign_contacts')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('account_id', '=', accountId)
        .where('campaign_id', '=', campaignId)
        .where('state', '=', 'pending')
        .where('next_attempt_at', '<=', now)
        .executeTakeFirstOrThrow();
      return Number(row.n);
    },
  };
}

export function createCampaignsRepo(db: Db, outbox: OutboxFactory) {
  return createRepo(db, outbox, campaignQueries);
}

export type CampaignsRepo = ReturnType<typeof createCampaignsRepo>;
export type CampaignsTx = Tx<ReturnType<typeof campaignQueries>>;
export type CampaignRow = NonNullable<Awaited<ReturnType<CampaignsRepo['find']>>>;
