import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../../db/client.js';
import { likePattern } from '../../db/like.js';
import { createRepo, type Executor } from '../../db/repo.js';
import type { OutboxFactory, Tx } from '../../events/outbox.js';
import { paginate, type Page } from '../../db/pagination.js';
import { lockAccountContacts } from '../../db/staging.js';

export function dncQueries(db: Executor) {
  return {
    /** Under the account's contacts lock (an import merging at the same time waits): adds the number, keeping an existing entry as it is; answers the entry and whether it is new. */
    async add(accountId: string, phoneE164: string, reason: string | null, now: Date) {
      await lockAccountContacts(db, accountId);
      const inserted = await db
        .insertInto('dnc_entries')
        .values({ account_id: accountId, phone_e164: phoneE164, reason, created_at: now })
        .onConflict((oc) => oc.columns(['account_id', 'phone_e164']).doNothing())
        .executeTakeFirst();
      const entry = await db
        .selectFrom('dnc_entries')
        .selectAll()
        .where('account_id', '=', accountId)
        .where('phone_e164', '=', phoneE164)
        .executeTakeFirstOrThrow();
      return { entry, added: Number(inserted.numInsertedOrUpdatedRows ?? 0n) > 0 };
    },

    async isListed(accountId: string, phoneE164: string): Promise<boolean> {
      const row = await db
        .selectFrom('dnc_entries')
        .select('phone_e164')
        .where('account_id', '=', accountId)
        .where('phone_e164', '=', phoneE164)
        .executeTakeFirst();
      return row !== undefined;
    },

    /** Of these numbers, the ones on the account's list: one query for a whole batch. */
    async listedAmong(accountId: string, phonesE164: readonly string[]): Promise<Set<string>> {
      if (phonesE164.length === 0) return new Set();
      const rows = await db
        .selectFrom('dnc_entries')
        .select('phone_e164')
        .where('account_id', '=', accountId)
        .where('phone_e164', 'in', [...new Set(phonesE164)])
        .execute();
      return new Set(rows.map((row) => row.phone_e164));
    },

    /** Removes the number; false when it was not listed. */
    async remove(accountId: string, phoneE164: string): Promise<boolean> {
      await lockAccountContacts(db, accountId);
      const deleted = await db
        .deleteFrom('dnc_entries')
        .where('account_id', '=', accountId)
        .where('phone_e164', '=', phoneE164)
        .executeTakeFirst();
      return deleted.numDeletedRows > 0n;
    },

    list(accountId: string, q: string | undefined, page: Page) {
      let matching = db.selectFrom('dnc_entries').where('account_id', '=', accountId);
      if (q) {
        const digits = q.replace(/\D/g, '');
        matching = matching.where((eb) =>
          eb.or([
            eb('reason', 'ilike', likePattern(q.trim())),
            ...(digits ? [eb('phone_e164', 'like', likePattern(digits))] : []),
          ]),
        );
      }
      return paginate(matching, page, (query) => query.selectAll().orderBy('created_at', 'desc').orderBy('phone_e164'));
    },
  };
}

/**
 * The account's listed numbers as a subquery, for statements of other modules that must match against the list
 * in bulk (a contact import flags listed numbers in one pass) without naming this module's table.
 */
export function listedNumbersQuery(accountId: string): RawBuilder<unknown> {
  return sql`SELECT phone_e164 FROM dnc_entries WHERE account_id = ${accountId}`;
}

export type DncTx = Tx<ReturnType<typeof dncQueries>>;

export function createDncRepo(db: Db, outbox: OutboxFactory) {
  return createRepo(db, outbox, dncQueries);
}

export type DncRepo = ReturnType<typeof createDncRepo>;
