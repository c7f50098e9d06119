import type { Insertable, Updateable } from 'kysely';
import type { Db } from '../../db/client.js';
import { createRepo, type Executor } from '../../db/repo.js';
import type { OutboxFactory } from '../../events/outbox.js';
import { paginate, type Page } from '../../db/pagination.js';
import type { DispositionCategory, DispositionCodesTable } from './dispositions.tables.js';

export type NewDispositionCode = Omit<Insertable<DispositionCodesTable>, 'account_id'>;
export type DispositionChanges = Pick<
  Updateable<DispositionCodesTable>,
  'label' | 'description' | 'category' | 'active' | 'updated_at'
>;

export interface DispositionFilters {
  category?: DispositionCategory;
  active?: boolean;
}

export function dispositionQueries(db: Executor) {
  const codes = (accountId: string) => db.selectFrom('disposition_codes').where('account_id', '=', accountId);

  return {
    /** Whether the account has any code yet: system codes are never deleted, so any row means it was seeded. */
    async hasAny(accountId: string): Promise<boolean> {
      return (await codes(accountId).select('id').limit(1).executeTakeFirst()) !== undefined;
    },

    /** Inserts codes the account does not have yet (by code); answers how many were new. */
    async insertMissing(accountId: string, rows: NewDispositionCode[]): Promise<number> {
      if (rows.length === 0) return 0;
      const result = await db
        .insertInto('disposition_codes')
        .values(rows.map((row) => ({ ...row, account_id: accountId })))
        .onConflict((oc) => oc.columns(['account_id', 'code']).doNothing())
        .executeTakeFirst();
      return Number(result.numInsertedOrUpdatedRows ?? 0n);
    },

    insert(accountId: string, row: NewDispositionCode) {
      return db
        .insertInto('disposition_codes')
        .values({ ...row, account_id: accountId })
        .returningAll()
        .executeTakeFirstOrThrow();
    },

    list(accountId: string, filters: DispositionFilters, page: Page) {
      let matching = codes(accountId);
      if (filters.category !== undefined) matching = matching.where('category', '=', filters.category);
      if (filters.active !== undefined) matching = matching.where('active', '=', filters.active);
      return paginate(matching, page, (q) => q.selectAll().orderBy('created_at', 'desc').orderBy('code'));
    },

    find(accountId: string, id: string) {
      return codes(accountId).selectAll().where('id', '=', id).executeTakeFirst();
    },

    findForUpdate(accountId: string, id: string) {
      return codes(accountId).selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
    },

    findByCode(accountId: string, code: string) {
      return codes(accountId).selectAll().where('code', '=', code).executeTakeFirst();
    },

    update(accountId: string, id: string, changes: DispositionChanges) {
      return db
        .updateTable('disposition_codes')
        .set(changes)
        .where('account_id', '=', accountId)
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirstOrThrow();
    },

    async delete(accountId: string, id: string): Promise<boolean> {
      const result = await db
        .deleteFrom('disposition_codes')
        .where('account_id', '=', accountId)
        .where('id', '=', id)
        .where('is_system', '=', false)
        .executeTakeFirst();
      return result.numDeletedRows > 0n;
    },
  };
}

export function createDispositionsRepo(db: Db, outbox: OutboxFactory) {
  return createRepo(db, outbox, dispositionQueries);
}

export type DispositionsRepo = ReturnType<typeof createDispositionsRepo>;
