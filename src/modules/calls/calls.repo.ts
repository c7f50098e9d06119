import { sql, type Insertable } from 'kysely';
import type { Db } from '../../db/client.js';
import { createRepo, type Executor } from '../../db/repo.js';
import type { OutboxFactory, Tx } from '../../events/outbox.js';
import type { Page } from '../../db/pagination.js';
import { compiledStatement, type Param } from '../../db/statements.js';
import type { CallAnalysesTable, CallEventType, CallStatus } from './calls.tables.js';
import { callWriteQueries } from './calls.writes.js';

export interface CallFilters {
  campaignId?: string;
  contactId?: string;
  agentId?: string;
  status?: CallStatus;
  hasRecording?: boolean;
  /** Inclusive lower bound on created_at. */
  createdFrom?: Date;
  /** Exclusive upper bound on created_at. */
  createdBefore?: Date;
}

export type NewCallAnalysis = Omit<Insertable<CallAnalysesTable>, 'account_id' | 'call_id'>;

export interface EventFilters {
  callId?: string;
  type?: CallEventType;
}

/** The call columns every read needs, plus the contact's name and the agent's name (soft-deleted agents included). */
const CALL_COLUMNS = [
  'c.id',
  'c.contact_id',
  'ct.first_name as contact_first_name',
  'ct.last_name as contact_last_name',
  'c.agent_id',
  'a.name as agent_name',
  'c.agent_version',
  'c.campaign_id',
  'c.direction',
  'c.status',
  'c.disposition',
  'c.from_number',
  'c.to_number',
  'c.duration_seconds',
  'c.total_cost_usd',
  'c.recording_storage_key',
  'c.started_at',
  'c.answered_at',
  'c.ended_at',
  'c.end_reason',
  'c.callback_at',
  'c.created_at',
  'c.updated_at',
] as const;

/** Measured on PostgreSQL: below this offset the straight join is cheaper, above it finding ids first is. */
const DEEP_OFFSET = 100;

/** The filters the trigger-kept call_counts table can answer `total` for; contactId and dates need count(*). */
const COUNTED_FILTERS = new Set(['status', 'agentId', 'campaignId', 'hasRecording']);
const countsTableAnswers = (filters: CallFilters) =>
  Object.entries(filters).every(([name, value]) => value === undefined || COUNTED_FILTERS.has(name));

interface ListArgs {
  accountId: string;
  filters: CallFilters;
}

interface PageArgs extends ListArgs {
  page: Page;
}

const FILTER_NAMES = [
  'campaignId',
  'contactId',
  'agentId',
  'status',
  'hasRecording',
  'createdFrom',
  'createdBefore',
] as const satisfies ReadonlyArray<keyof CallFilters>;

/** Which filters are set (and whether a recording is wanted): all the SQL of a list depends on. */
function filterShape(filters: CallFilters) {
  let shape = '';
  for (const name of FILTER_NAMES) {
    const value = filters[name];
    shape += value === undefined ? '-' : name === 'hasRecording' ? (value ? 'R' : 'r') : '+';
  }
  return shape;
}

/** The account's calls narrowed by the filters; every list query, page or count, starts here. */
function matchingCalls<A extends ListArgs>(db: Executor, { filters }: A, param: Param<A>) {
  let query = db.selectFrom('calls as c').where(
    'c.account_id',
    '=',
    param((a) => a.accountId),
  );
  if (filters.campaignId !== undefined)
    query = query.where(
      'c.campaign_id',
      '=',
      param((a) => a.filters.campaignId!),
    );
  if (filters.contactId !== undefined)
    query = query.where(
      'c.contact_id',
      '=',
      param((a) => a.filters.contactId!),
    );
  if (filters.agentId !== undefined)
    query = query.where(
      'c.agent_id',
      '=',
      param((a) => a.filters.agentId!),
    );
  if (filters.status !== undefined)
    query = query.where(
      'c.status',
      '=',
      param((a) => a.filters.status!),
    );
  if (filters.hasRecording !== undefined) {
    query = query.where('c.recording_storage_key', filters.hasRecording ? 'is not' : 'is', null);
  }
  if (filters.createdFrom !== undefined)
    query = query.where(
      'c.created_at',
      '>=',
      param((a) => a.filters.createdFrom!),
    );
  if (filters.createdBefore !== undefined)
    query = query.where(
      'c.created_at',
      '<',
      param((a) => a.filters.createdBefore!),
    );
  return query;
}

/** For queries built on every call: each value read straight from the arguments. */
const valuesOf =
  <A>(args: A): Param<A> =>
  (read) =>
    read(args);

function withNames(query: ReturnType<typeof matchingCalls>) {
  return query
    .leftJoin('contacts as ct', (join) =>
      join.onRef('ct.id', '=', 'c.contact_id').onRef('ct.account_id', '=', 'c.account_id'),
    )
    .leftJoin('agents as a', (join) => join.onRef('a.id', '=', 'c.agent_id').onRef('a.account_id', '=', 'c.account_id'))
    .select(CALL_COLUMNS);
}

const newestFirst = <Q extends ReturnType<typeof matchingCalls>>(query: Q) =>
  query.orderBy('c.created_at', 'desc').orderBy('c.id', 'desc') as Q;

/**
 * One page of calls, newest first. Past DEEP_OFFSET the page's ids are found first, by an index-only scan, so the
 * name joins run for the page's rows only instead of for every skipped row (offset 500,000 of 1M calls: ~60 ms
 * instead of ~1 s).
 */
const callPage = compiledStatement({
  shape: ({ filters, page }: PageArgs) => `${filterShape(filters)}${page.offset < DEEP_OFFSET ? '' : ' deep'}`,
  build: (db: Executor, args: PageArgs, param: Param<PageArgs>) => {
    const limit = param((a) => a.page.limit);
    const offset = param((a) => a.page.offset);
    if (args.page.offset < DEEP_OFFSET) {
      return newestFirst(withNames(matchingCalls(db, args, param)))
        .limit(limit)
        .offset(offset);
    }
    const pageIds = newestFirst(matchingCalls(db, args, param))
      .select('c.id')
      .limit(limit)
      .offset(offset);
    return newestFirst(withNames(matchingCalls(db, { ...args, filters: {} }, param)).where('c.id', 'in', pageIds));
  },
});

/** Sums the account's rows of call_counts: a few per (status, agent, campaign, has a recording) in use. */
const countedTotal = compiledStatement({
  shape: ({ filters }: ListArgs) => filterShape(filters),
  build: (db: Executor, { filters }: ListArgs, param: Param<ListArgs>) => {
    let query = db
      .selectFrom('call_counts')
      .select(sql<number>`coalesce(sum(calls), 0)::int8`.as('total'))
      .where(
        'account_id',
        '=',
        param((a) => a.accountId),
      );
    if (filters.status !== undefined)
      query = query.where(
        'status',
        '=',
        param((a) => a.filters.status!),
      );
    if (filters.agentId !== undefined)
      query = query.where(
        'agent_id',
        '=',
        param((a) => a.filters.agentId!),
      );
    if (filters.campaignId !== undefined)
      query = query.where(
        'campaign_id',
        '=',
        param((a) => a.filters.campaignId!),
      );
    if (filters.hasRecording !== undefined)
      query = query.where(
        'has_recording',
        '=',
        param((a) => a.filters.hasRecording!),
      );
    return query;
  },
});

/** count(*) over the matching rows, through the index for the filter. */
const scannedTotal = compiledStatement({
  shape: ({ filters }: ListArgs) => filterShape(filters),
  build: (db: Executor, args: ListArgs, param: Param<ListArgs>) =>
    matchingCalls(db, args, param).select((eb) => eb.fn.countAll<number>().as('total')),
});

const totalOf = (rows: Array<{ total: number }>) => {
  if (rows.length !== 1) throw new Error('a count answered no row');
  return rows[0]!.total;
};

export function callQueries(db: Executor) {
  function matchingEvents(accountId: string, filters: EventFilters) {
    let query = db.selectFrom('call_events').where('account_id', '=', accountId);
    if (filters.callId !== undefined) query = query.where('call_id', '=', filters.callId);
    if (filters.type !== undefined) query = query.where('type', '=', filters.type);
    return query;
  }

  /** Sums the account's rows of call_counts: a few per (status, agent, campaign, has a recording) in use. */
  async function countFromCounts(
    accountId: string,
    filters: Pick<CallFilters, 'status' | 'agentId' | 'campaignId' | 'hasRecording'>,
  ) {
    return totalOf(await countedTotal(db, { accountId, filters }));
  }

  /** count(*) over the matching rows, through the index for the filter. */
  async function countByScan(accountId: string, filters: CallFilters): Promise<number> {
    return totalOf(await scannedTotal(db, { accountId, filters }));
  }

  return {
    ...callWriteQueries(db),

    /** One page of calls, newest first. */
    listPage(accountId: string, filters: CallFilters, page: Page) {
      return callPage(db, { accountId, filters, page });
    },

    /** Exact number of calls matching the filters. */
    count(accountId: string, filters: CallFilters): Promise<number> {
      return countsTableAnswers(filters) ? countFromCounts(accountId, filters) : countByScan(accountId, filters);
    },

    countFromCounts,
    countByScan,

    findById(accountId: string, id: string) {
      const args = { accountId, filters: {} };
      return withNames(matchingCalls(db, args, valuesOf(args)))
        .where('c.id', '=', id)
        .executeTakeFirst();
    },

    async exists(accountId: string, id: string): Promise<boolean> {
      const row = await db
        .selectFrom('calls')
        .select('id')
        .where('account_id', '=', accountId)
        .where('id', '=', id)
        .executeTakeFirst();
      return row !== undefined;
    },

    transcript(accountId: string, callId: string) {
      return db
        .selectFrom('call_transcript_turns')
        .select(['seq', 'speaker', 'text', 'start_ms', 'end_ms'])
        .where('account_id', '=', accountId)
        .where('call_id', '=', callId)
        .orderBy('seq')
        .execute();
    },

    costItems(accountId: string, callId: string) {
      return db
        .selectFrom('call_cost_items')
        .select(['id', 'kind', 'description', 'quantity', 'unit', 'unit_price_usd', 'amount_usd'])
        .where('account_id', '=', accountId)
        .where('call_id', '=', callId)
        .orderBy('created_at')
        .orderBy('id')
        .execute();
    },

    /**
     * What a call's analysis reads besides its transcript: the call, its contact's first name and time zone, its
     * agent's name (a deleted agent's too) and the account's time zone.
     */
    analysisSubject(accountId: string, callId: string) {
      return db
        .selectFrom('calls as c')
        .innerJoin('accounts as acc', 'acc.id', 'c.account_id')
        .leftJoin('contacts as ct', (join) =>
          join.onRef('ct.id', '=', 'c.contact_id').onRef('ct.account_id', '=', 'c.account_id'),
        )
        .leftJoin('agents as a', (join) =>
          join.onRef('a.id', '=', 'c.agent_id').onRef('a.account_id', '=', 'c.account_id'),
        )
        .selectAll('c')
        .select([
          'ct.first_name as contact_first_name',
          'ct.timezone as contact_timezone',
          'a.name as agent_name',
          'acc.timezone as account_timezone',
        ])
        .where('c.account_id', '=', accountId)
        .where('c.id', '=', callId)
        .executeTakeFirst();
    },

    findAnalysis(accountId: string, callId: string) {
      return db
        .selectFrom('call_analyses')
        .selectAll()
        .where('account_id', '=', accountId)
        .where('call_id', '=', callId)
        .executeTakeFirst();
    },

    /** Writes a call's analysis once: undefined when the call has one already. */
    insertAnalysis(accountId: string, callId: string, analysis: NewCallAnalysis) {
      return db
        .insertInto('call_analyses')
        .values({ ...analysis, account_id: accountId, call_id: callId })
        .onConflict((oc) => oc.column('call_id').doNothing())
        .returningAll()
        .executeTakeFirst();
    },

    /** Events, newest first for the account-wide feed, oldest first for one call's timeline. */
    listEvents(accountId: string, filters: EventFilters, page: Page, order: 'newest_first' | 'oldest_first') {
      const direction = order === 'newest_first' ? 'desc' : 'asc';
      return matchingEvents(accountId, filters)
        .select(['id', 'call_id', 'type', 'data', 'occurred_at'])
        .orderBy('occurred_at', direction)
        .orderBy('id', direction)
        .limit(page.limit)
        .offset(page.offset)
        .execute();
    },

    /** Without a call filter the trigger-kept counts answer; one call's events are few enough to count. */
    async countEvents(accountId: string, filters: EventFilters): Promise<number> {
      if (filters.callId === undefined) {
        let query = db
          .selectFrom('call_event_type_counts')
          .select(sql<number>`coalesce(sum(events), 0)::int8`.as('total'))
          .where('account_id', '=', accountId);
        if (filters.type !== undefined) query = query.where('type', '=', filters.type);
        return (await query.executeTakeFirstOrThrow()).total;
      }
      const row = await matchingEvents(accountId, filters)
        .select((eb) => eb.fn.countAll<number>().as('total'))
        .executeTakeFirstOrThrow();
      return row.total;
    },
  };
}

export function createCallsRepo(db: Db, outbox: OutboxFactory) {
  return createRepo(db, outbox, callQueries);
}

export type CallsRepo = ReturnType<typeof createCallsRepo>;
export type CallRow = NonNullable<Awaited<ReturnType<CallsRepo['findById']>>>;
export type CallsTx = Tx<ReturnType<typeof callQueries>>;
