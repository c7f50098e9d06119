/**
 * The statements the call engine writes with: calls placed and moved through their statuses, transcript turns, cost
 * items and events. Part of callQueries (calls.repo.ts); every statement names the account, except the few that look
 * across accounts on purpose (the sweep of lost calls, the queue dispatcher, provider callbacks), which say why.
 */
import { sql, type Insertable, type Selectable, type Updateable } from 'kysely';
import type { Executor } from '../../db/repo.js';
import { newId } from '../../lib/ids.js';
import {
  LIVE_CALL_STATUSES,
  type CallCostItemsTable,
  type CallEventType,
  type CallsTable,
  type CallUsage,
  type TranscriptSpeaker,
} from './calls.tables.js';

export type NewCall = Omit<Insertable<CallsTable>, 'account_id'>;
export type CallChanges = Omit<Updateable<CallsTable>, 'id' | 'account_id' | 'created_at'>;

export interface NewCallEvent {
  callId: string | null;
  type: CallEventType;
  data: Record<string, unknown>;
  occurredAt: Date;
}

export interface NewTurn {
  callId: string;
  seq: number;
  speaker: TranscriptSpeaker;
  text: string;
  startMs: number | null;
  endMs: number | null;
}

export type NewCostItem = Omit<Insertable<CallCostItemsTable>, 'id' | 'account_id' | 'call_id' | 'created_at'>;

const LIVE = [...LIVE_CALL_STATUSES];
/** A call not ended yet: waiting in the queue, or live. */
const NOT_ENDED = ['queued' as const, ...LIVE];

type CallRow = Selectable<CallsTable>;

/**
 * The INSERT of one event on a call's timeline, for each row of the CTE `from` (the call, when a statement changed
 * it), at least a millisecond after the call's latest event as insertEvents does.
 */
function timelineEventFrom(
  from: 'live' | 'started',
  accountId: string,
  callId: string,
  event: { type: CallEventType; data: Record<string, unknown>; occurredAt: Date },
) {
  return sql`INSERT INTO call_events (id, account_id, call_id, type, data, occurred_at)
    SELECT ${newId()}, ${accountId}, id, ${event.type}, ${JSON.stringify(event.data)}::jsonb,
      greatest(${event.occurredAt}::timestamptz, (SELECT max(occurred_at) + interval '1 millisecond' FROM call_events
        WHERE account_id = ${accountId} AND call_id = ${callId}))
    FROM ${sql.table(from)}`;
}

export function callWriteQueries(db: Executor) {
  return {
    insertCall(accountId: string, call: NewCall) {
      return db
        .insertInto('calls')
        .values({ ...call, account_id: accountId })
        .returning(['id', 'status'])
        .executeTakeFirstOrThrow();
    },

    /** The whole call row, locked until the transaction ends: status changes of one call happen one at a time. */
    findForUpdate(accountId: string, id: string) {
      return db
        .selectFrom('calls')
        .selectAll()
        .where('account_id', '=', accountId)
        .where('id', '=', id)
        .forUpdate()
        .executeTakeFirst();
    },

    findRow(accountId: string, id: string) {
      return db
        .selectFrom('calls')
        .selectAll()
        .where('account_id', '=', accountId)
        .where('id', '=', id)
        .executeTakeFirst();
    },

    /**
     * A call by id alone: for platform tools, signed provider callbacks and signed asset URLs, which name a call without
     * its account (the signature, or the platform-admin check, is the access).
     */
    findAnyAccount(id: string) {
      return db
        .selectFrom('calls')
        .select(['id', 'account_id', 'status', 'provider_call_id', 'recording_storage_key'])
        .where('id', '=', id)
        .executeTakeFirst();
    },

    /** A secret the service generated for itself; the first instance to ask creates it, every other one reads that. */
    async serverSecret(name: string, candidate: string): Promise<string> {
      await db
        .insertInto('server_secrets')
        .values({ name, value: candidate })
        .onConflict((oc) => oc.column('name').doNothing())
        .execute();
      const row = await db
        .selectFrom('server_secrets')
        .select('value')
        .where('name', '=', name)
        .executeTakeFirstOrThrow();
      return row.value;
    },

    /** `beat`: also stamps the heartbeat with the database's time (the running process is alive). */
    updateCall(accountId: string, id: string, changes: CallChanges, options: { beat?: boolean } = {}) {
      return db
        .updateTable('calls')
        .set(changes)
        .$if(options.beat === true, (q) => q.set({ heartbeat_at: sql<Date>`now()` }))
        .where('account_id', '=', accountId)
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirstOrThrow();
    },

    /**
     * Serializes the starts of one account's calls until the transaction ends, so two workers never both take the
     * account's last free slot. An advisory lock: nothing else waits on it.
     */
    async lockAccountQueue(accountId: string) {
      await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`parley:call-queue:${accountId}`}, 0))`.execute(db);
    },

    /**
     * Starts a queued call if the account has a free slot, with its event, in one statement: what runs under the
     * account's queue lock (lockAccountQueue) is this and the commit. Null: not queued any more, or no free slot.
     */
    async startQueued(
      accountId: string,
      callId: string,
      maxLive: number,
      changes: CallChanges,
      event: { type: CallEventType; data: Record<string, unknown>; occurredAt: Date },
    ): Promise<CallRow | null> {
      const assignments = sql.join(
        Object.entries(changes).map(([column, value]) => sql`${sql.ref(column)} = ${value}`),
      );
      const { rows } = await sql<CallRow>`
        WITH started AS (
          UPDATE calls SET ${assignments}, heartbeat_at = now()
          WHERE account_id = ${accountId} AND id = ${callId} AND status = 'queued'
            AND (SELECT count(*) FROM calls WHERE account_id = ${accountId} AND status IN (${sql.join(LIVE)})) < ${maxLive}
          RETURNING *
        ), event AS (
          ${timelineEventFrom('started', accountId, callId, event)}
        )
        SELECT * FROM started`.execute(db);
      return rows[0] ?? null;
    },

    async countLive(accountId: string): Promise<number> {
      const row = await db
        .selectFrom('calls')
        .select((eb) => eb.fn.countAll<number>().as('live'))
        .where('account_id', '=', accountId)
        .where('status', 'in', LIVE)
        .executeTakeFirstOrThrow();
      return Number(row.live);
    },

    /** The account's waiting calls, oldest first. */
    oldestQueued(accountId: string, limit: number) {
      return db
        .selectFrom('calls')
        .select(['id'])
        .where('account_id', '=', accountId)
        .where('status', '=', 'queued')
        .orderBy('created_at')
        .orderBy('id')
        .limit(limit)
        .execute();
    },

    /** Calls of the account queued or live. */
    async countActive(accountId: string): Promise<number> {
      const row = await db
        .selectFrom('calls')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('account_id', '=', accountId)
        .where('status', 'in', NOT_ENDED)
        .executeTakeFirstOrThrow();
      return Number(row.n);
    },

    /** Of these contacts, those with a call queued or live (the dialer never calls a contact twice at once). */
    contactsInCall(accountId: string, contactIds: readonly string[]) {
      return db
        .selectFrom('calls')
        .select('contact_id')
        .distinct()
        .where('account_id', '=', accountId)
        .where('contact_id', 'in', contactIds)
        .where('status', 'in', NOT_ENDED)
        .execute();
    },

    /** Accounts with calls waiting in the queue: the scheduled dispatcher goes through every account's queue. */
    accountsWithQueuedCalls() {
      return db.selectFrom('calls').select('account_id').distinct().where('status', '=', 'queued').execute();
    },

    /**
     * Live calls across accounts that may have been left behind by a process that died (the sweep after a crash): those
     * whose heartbeat is older than `staleBefore`, or every live call (on the embedded database, where one process owns
     * the data, so every live call it is not running itself is lost).
     */
    lostCallCandidates(criterion: { staleBefore: Date } | 'every live call') {
      // Only calls this engine runs keep a heartbeat; a call a hosted provider carries ends by its post-call report.
      let query = db
        .selectFrom('calls')
        .select(['id', 'account_id'])
        .where('status', 'in', LIVE)
        .where('runner_id', 'is not', null);
      if (criterion !== 'every live call') {
        query = query.where((eb) =>
          eb.or([eb('heartbeat_at', '<', criterion.staleBefore), eb('heartbeat_at', 'is', null)]),
        );
      }
      return query.orderBy('heartbeat_at').limit(1000).execute();
    },

    /** The running process's sign of life, in database time (process liveness, not the call's clock). */
    async heartbeat(accountId: string, id: string, runnerId: string, usage: CallUsage) {
      await db
        .updateTable('calls')
        .set({ heartbeat_at: sql<Date>`now()`, usage: JSON.stringify(usage) })
        .where('account_id', '=', accountId)
        .where('id', '=', id)
        .where('runner_id', '=', runnerId)
        .where('status', 'in', LIVE)
        .execute();
    },

    async databaseNow(): Promise<Date> {
      const { rows } = await sql<{ now: Date }>`SELECT now() AS now`.execute(db);
      return new Date(rows[0]!.now);
    },

    /**
     * Appends events to their calls' timelines. Within a call each event is at least a millisecond after the one before
     * (the clock may read the same instant twice), so a timeline's order is the order things happened.
     */
    async insertEvents(accountId: string, events: NewCallEvent[]) {
      for (const event of events) {
        const after =
          event.callId === null
            ? sql<Date | null>`NULL`
            : sql<Date | null>`(SELECT max(occurred_at) + interval '1 millisecond' FROM call_events
                 WHERE account_id = ${accountId} AND call_id = ${event.callId})`;
        await db
          .insertInto('call_events')
          .values({
            id: newId(),
            account_id: accountId,
            call_id: event.callId,
            type: event.type,
            data: JSON.stringify(event.data),
            occurred_at: sql<Date>`greatest(${event.occurredAt}::timestamptz, ${after})`,
          })
          .execute();
      }
    },

    /**
     * A turn spoken on a live call, in one statement (atomic without a transaction): the turn, the call's usage and
     * heartbeat, and its `call.turn` event, or nothing when the call has ended. Each turn of 200 live calls was a
     * transaction of six round trips holding a pooled connection between them; this is one. False: not live.
     */
    async recordLiveTurn(
      accountId: string,
      turn: NewTurn,
      usage: CallUsage,
      event: { data: Record<string, unknown>; occurredAt: Date },
    ): Promise<boolean> {
      const { callId } = turn;
      const { rows } = await sql<{ id: string }>`
        WITH live AS (
          UPDATE calls SET usage = ${JSON.stringify(usage)}::jsonb, heartbeat_at = now()
          WHERE account_id = ${accountId} AND id = ${callId} AND status IN (${sql.join(LIVE)})
          RETURNING id
        ), turn AS (
          INSERT INTO call_transcript_turns (call_id, account_id, seq, speaker, text, start_ms, end_ms)
          SELECT id, ${accountId}, ${turn.seq}, ${turn.speaker}, ${turn.text}, ${turn.startMs}, ${turn.endMs} FROM live
          ON CONFLICT (call_id, seq) DO NOTHING
        ), event AS (
          ${timelineEventFrom('live', accountId, callId, { type: 'call.turn', ...event })}
        )
        SELECT id FROM live`.execute(db);
      return rows.length > 0;
    },

    /** Adds turns; a turn already stored (same call and position) is kept as it is, so a repeated report adds nothing. */
    async insertTurns(accountId: string, turns: NewTurn[]): Promise<number> {
      if (turns.length === 0) return 0;
      const inserted = await db
        .insertInto('call_transcript_turns')
        .values(
          turns.map((turn) => ({
            call_id: turn.callId,
            account_id: accountId,
            seq: turn.seq,
            speaker: turn.speaker,
            text: turn.text,
            start_ms: turn.startMs,
            end_ms: turn.endMs,
          })),
        )
        .onConflict((oc) => oc.columns(['call_id', 'seq']).doNothing())
        .executeTakeFirst();
      return Number(inserted.numInsertedOrUpdatedRows ?? 0n);
    },

    async countTurns(accountId: string, callId: string): Promise<number> {
      const row = await db
        .selectFrom('call_transcript_turns')
        .select((eb) => eb.fn.countAll<number>().as('turns'))
        .where('account_id', '=', accountId)
        .where('call_id', '=', callId)
        .executeTakeFirstOrThrow();
      return Number(row.turns);
    },

    async insertCostItems(accountId: string, callId: string, items: NewCostItem[], at: Date) {
      if (items.length === 0) return;
      await db
        .insertInto('call_cost_items')
        .values(
          items.map((item, i) => ({
            ...item,
            id: newId(),
            account_id: accountId,
            call_id: callId,
            created_at: new Date(at.getTime() + i),
          })),
        )
        .execute();
    },
  };
}
