/**
 * The platform administrator's reads of calls: across accounts by design (the platform-admin check on the route is
 * the access). Every statement here is listed as such an exception in test/sql-scoping.test.ts. Reads only: the
 * calls module writes through calls.repo.ts.
 */
import { sql } from 'kysely';
import type { Executor } from '../../db/repo.js';
import { likePattern } from '../../db/like.js';
import type { Page } from '../../db/pagination.js';
import type { CallDirection, CallStatus } from './calls.tables.js';

export interface AdminCallFilters {
  accountId?: string;
  agentId?: string;
  status?: CallStatus;
  direction?: CallDirection;
  /** Inclusive lower bound on created_at. */
  createdFrom?: Date;
  /** Exclusive upper bound on created_at. */
  createdBefore?: Date;
  /** Digits (or a + and digits) found anywhere in the caller's or the called number. */
  number?: string;
}

export interface PickerFilters {
  accountId?: string;
  q?: string;
}

export function callAdminQueries(db: Executor) {
  function matchingCalls(filters: AdminCallFilters) {
    let query = db.selectFrom('calls as c');
    if (filters.accountId !== undefined) query = query.where('c.account_id', '=', filters.accountId);
    if (filters.agentId !== undefined) query = query.where('c.agent_id', '=', filters.agentId);
    if (filters.status !== undefined) query = query.where('c.status', '=', filters.status);
    if (filters.direction !== undefined) query = query.where('c.direction', '=', filters.direction);
    if (filters.createdFrom !== undefined) query = query.where('c.created_at', '>=', filters.createdFrom);
    if (filters.createdBefore !== undefined) query = query.where('c.created_at', '<', filters.createdBefore);
    if (filters.number !== undefined) {
      const pattern = likePattern(filters.number);
      query = query.where((eb) => eb.or([eb('c.from_number', 'like', pattern), eb('c.to_number', 'like', pattern)]));
    }
    return query;
  }

  function pickerAgents(filters: PickerFilters) {
    let query = db.selectFrom('agents as a').innerJoin('accounts as acc', 'acc.id', 'a.account_id');
    if (filters.accountId !== undefined) query = query.where('a.account_id', '=', filters.accountId);
    if (filters.q !== undefined) query = query.where('a.name', 'ilike', likePattern(filters.q));
    return query;
  }

  function pickerAccounts(filters: { q?: string }) {
    let query = db.selectFrom('accounts');
    if (filters.q !== undefined) query = query.where('name', 'ilike', likePattern(filters.q));
    return query;
  }

  return {
    /** One page of calls of every account, newest first, with the account's, contact's and agent's names. */
    listPage(filters: AdminCallFilters, page: Page) {
      return matchingCalls(filters)
        .innerJoin('accounts as acc', 'acc.id', 'c.account_id')
        .leftJoin('contacts as ct', (join) =>
          join.onRef('ct.id', '=', 'c.contact_id').onRef('ct.account_id', '=', 'c.account_id'),
        )
        .leftJoin('agents as a', (join) =>
          join.onRef('a.id', '=', 'c.agent_id').onRef('a.account_id', '=', 'c.account_id'),
        )
        .select([
          'c.id',
          'c.account_id',
          'acc.name as account_name',
          'c.contact_id',
          'ct.first_name as contact_first_name',
          'ct.last_name as contact_last_name',
          'c.agent_id',
          'a.name as agent_name',
          'c.direction',
          'c.status',
          'c.disposition',
          'c.from_number',
          'c.to_number',
          'c.duration_seconds',
          'c.total_cost_usd',
          'c.recording_storage_key',
          'c.started_at',
          'c.ended_at',
          'c.created_at',
        ])
        .orderBy('c.created_at', 'desc')
        .orderBy('c.id', 'desc')
        .limit(page.limit)
        .offset(page.offset)
        .execute();
    },

    async count(filters: AdminCallFilters): Promise<number> {
      const row = await matchingCalls(filters)
        .select((eb) => eb.fn.countAll<number>().as('total'))
        .executeTakeFirstOrThrow();
      return Number(row.total);
    },

    /** A call's account (id and name), by the call's id alone. */
    accountOfCall(callId: string) {
      return db
        .selectFrom('calls as c')
        .innerJoin('accounts as acc', 'acc.id', 'c.account_id')
        .select(['c.account_id', 'acc.name as account_name'])
        .where('c.id', '=', callId)
        .executeTakeFirst();
    },

    /** An agent (not deleted) by its id alone, with its account and the number assigned to it. */
    agentById(agentId: string) {
      return db
        .selectFrom('agents')
        .select(['id', 'account_id', 'inbound_did'])
        .where('id', '=', agentId)
        .where('deleted_at', 'is', null)
        .executeTakeFirst();
    },

    /** The agents picker: agents of every account (deleted ones too, their calls stay), by name, A to Z. */
    agentPickerPage(filters: PickerFilters, page: Page) {
      return pickerAgents(filters)
        .select(['a.id', 'a.name', 'a.account_id', 'acc.name as account_name', 'a.deleted_at'])
        .orderBy(sql`lower(a.name)`)
        .orderBy('a.id')
        .limit(page.limit)
        .offset(page.offset)
        .execute();
    },

    async agentPickerCount(filters: PickerFilters): Promise<number> {
      const row = await pickerAgents(filters)
        .select((eb) => eb.fn.countAll<number>().as('total'))
        .executeTakeFirstOrThrow();
      return Number(row.total);
    },

    /** The accounts picker: every account, by name, A to Z. */
    accountPickerPage(filters: { q?: string }, page: Page) {
      return pickerAccounts(filters)
        .select(['id', 'name'])
        .orderBy(sql`lower(name)`)
        .orderBy('id')
        .limit(page.limit)
        .offset(page.offset)
        .execute();
    },

    async accountPickerCount(filters: { q?: string }): Promise<number> {
      const row = await pickerAccounts(filters)
        .select((eb) => eb.fn.countAll<number>().as('total'))
        .executeTakeFirstOrThrow();
      return Number(row.total);
    },
  };
}

export type CallsAdminRepo = ReturnType<typeof callAdminQueries>;
export type AdminCallRow = Awaited<ReturnType<CallsAdminRepo['listPage']>>[number];
