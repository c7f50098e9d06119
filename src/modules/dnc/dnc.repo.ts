import { sql } from 'kysely';
import type { Db } from '../../db/client.js';
import type { Page } from '../../http/pagination.js';
import { likePattern } from '../../db/like.js';
import { lockAccountContacts } from '../../db/staging.js';

export function createDncRepo(db: Db) {
  return {
    /** Adds the number (keeping an existing entry as it is) and flags the account's contacts with it. */
    add(accountId: string, phoneE164: string, reason: string | null, now: Date) {
      return db.transaction().execute(async (trx) => {
        await lockAccountContacts(trx, accountId);
        await trx
          .insertInto('dnc_entries')
          .values({ account_id: accountId, phone_e164: phoneE164, reason, created_at: now })
          .onConflict((oc) => oc.columns(['account_id', 'phone_e164']).doNothing())
          .execute();
        await trx
          .updateTable('contacts')
          .set({ dnc: true, updated_at: now })
          .where('account_id', '=', accountId)
          .where('phone_e164', '=', phoneE164)
          .where('dnc', '=', false)
          .execute();
        return trx
          .selectFrom('dnc_entries')
          .selectAll()
          .where('account_id', '=', accountId)
          .where('phone_e164', '=', phoneE164)
          .executeTakeFirstOrThrow();
      });
    },

    /** Removes the number and clears the flag on the account's contacts; false when it was not listed. */
    remove(accountId: string, phoneE164: string, now: Date) {
      return db.transaction().execute(async (trx) => {
        await lockAccountContacts(trx, accountId);
        const deleted = await trx
          .deleteFrom('dnc_entries')
          .where('account_id', '=', accountId)
          .where('phone_e164', '=', phoneE164)
          .executeTakeFirst();
        if (deleted.numDeletedRows === 0n) return false;
        await trx
          .updateTable('contacts')
          .set({ dnc: false, updated_at: now })
          .where('account_id', '=', accountId)
          .where('phone_e164', '=', phoneE164)
          .where('dnc', '=', true)
          .execute();
        return true;
      });
    },

    async list(accountId: string, q: string | undefined, page: Page) {
      let query = db.selectFrom('dnc_entries').where('account_id', '=', accountId);
      if (q) {
        const digits = q.replace(/\D/g, '');
        query = query.where((eb) =>
          eb.or([
            eb('reason', 'ilike', likePattern(q.trim())),
            ...(digits ? [eb('phone_e164', 'like', likePattern(digits))] : []),
          ]),
        );
      }
      const [items, total] = await Promise.all([
        query.selectAll().orderBy('created_at', 'desc').orderBy('phone_e164').limit(page.limit).offset(page.offset).execute(),
        query.select(sql<number>`count(*)`.as('n')).executeTakeFirstOrThrow(),
      ]);
      return { items, total: Number(total.n) };
    },
  };
}

export type DncRepo = ReturnType<typeof createDncRepo>;
