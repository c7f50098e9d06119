import { sql, type ExpressionBuilder, type RawBuilder, type Selectable } from 'kysely';
import type { Db } from '../../db/client.js';
import type { Database } from '../../db/types.js';
import { createRepo, type Executor, type OutboxFactory } from '../../db/repo.js';
import { paginate, type Page } from '../../http/pagination.js';
import { likePattern } from '../../db/like.js';
import type { ContactsTable } from './contacts.tables.js';

export interface ContactFilters {
  listId?: string;
  q?: string;
  phoneE164?: string;
  dnc?: boolean;
}

export type ContactRow = Selectable<ContactsTable>;

export interface ContactChanges {
  first_name?: string | null;
  last_name?: string | null;
  phone_e164?: string;
  email?: string | null;
  company?: string | null;
  timezone?: string | null;
  /** Keys to set (string) or remove (null). */
  attributes?: Record<string, string | null>;
}


function contactFilters(accountId: string, filters: ContactFilters) {
  return (eb: ExpressionBuilder<Database, 'contacts'>) => {
    const conditions = [eb('contacts.account_id', '=', accountId)];
    if (filters.listId) {
      conditions.push(
        eb.exists(
          eb
            .selectFrom('contact_list_members as m')
            .select(sql<number>`1`.as('one'))
            .where('m.list_id', '=', filters.listId)
            .where('m.account_id', '=', accountId)
            .whereRef('m.contact_id', '=', 'contacts.id'),
        ),
      );
    }
    if (filters.phoneE164) conditions.push(eb('contacts.phone_e164', '=', filters.phoneE164));
    if (filters.dnc !== undefined) conditions.push(eb('contacts.dnc', '=', filters.dnc));
    if (filters.q) {
      const pattern = likePattern(filters.q.trim());
      const matches = [
        eb('contacts.first_name', 'ilike', pattern),
        eb('contacts.last_name', 'ilike', pattern),
        eb(sql<string>`concat_ws(' ', contacts.first_name, contacts.last_name)`, 'ilike', pattern),
        eb('contacts.email', 'ilike', pattern),
      ];
      const digits = filters.q.replace(/\D/g, '');
      if (digits.length >= 3) matches.push(eb('contacts.phone_e164', 'like', likePattern(digits)));
      conditions.push(eb.or(matches));
    }
    return eb.and(conditions);
  };
}

export function contactQueries(db: Executor) {
  return {
    listLists(accountId: string, page: Page) {
      const matching = db.selectFrom('contact_lists').where('account_id', '=', accountId);
      return paginate(matching, page, (q) => q.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc'));
    },

    findList(accountId: string, id: string) {
      return db.selectFrom('contact_lists').selectAll().where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst();
    },

    listContacts(accountId: string, filters: ContactFilters, page: Page) {
      const matching = db.selectFrom('contacts').where(contactFilters(accountId, filters));
      return paginate(matching, page, (q) => q.selectAll().orderBy('contacts.created_at', 'desc').orderBy('contacts.id', 'desc'));
    },

    /**
     * One batch of the export, newest first, after the keyset cursor. The cursor's time travels as
     * text so it keeps PostgreSQL's microseconds (a JS Date would round them away and repeat rows).
     */
    exportBatch(accountId: string, filters: ContactFilters, after: { at: string; id: string } | null, limit: number) {
      let query = db
        .selectFrom('contacts')
        .selectAll()
        .select(sql<string>`contacts.created_at::text`.as('cursor_at'))
        .where(contactFilters(accountId, filters));
      if (after) query = query.where(sql<boolean>`(contacts.created_at, contacts.id) < (${after.at}::timestamptz, ${after.id}::uuid)`);
      return query.orderBy('contacts.created_at', 'desc').orderBy('contacts.id', 'desc').limit(limit).execute();
    },

    findContact(accountId: string, id: string) {
      return db.selectFrom('contacts').selectAll().where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst();
    },

    listsOfContact(accountId: string, contactId: string) {
      return db
        .selectFrom('contact_list_members as m')
        .innerJoin('contact_lists as l', 'l.id', 'm.list_id')
        .select(['l.id', 'l.name'])
        .where('m.account_id', '=', accountId)
        .where('m.contact_id', '=', contactId)
        .orderBy('l.created_at', 'desc')
        .execute();
    },

    findByPhone(accountId: string, phoneE164: string) {
      return db.selectFrom('contacts').select('id').where('account_id', '=', accountId).where('phone_e164', '=', phoneE164).executeTakeFirst();
    },

    /** Sets the do-not-call flag of the account's contacts with these numbers (a list, or a subquery of numbers). */
    async setDncFlag(accountId: string, phones: string[] | RawBuilder<unknown>, dnc: boolean, now: Date): Promise<number> {
      if (Array.isArray(phones) && phones.length === 0) return 0;
      const result = await db
        .updateTable('contacts')
        .set({ dnc, updated_at: now })
        .where('account_id', '=', accountId)
        .where('phone_e164', 'in', Array.isArray(phones) ? phones : sql<string>`(${phones})`)
        .where('dnc', '=', !dnc)
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
    },

    /** Applies the changes; a new number takes its DNC flag from the account's do-not-call list (`listed`). */
    update(accountId: string, id: string, changes: ContactChanges, listed: RawBuilder<unknown>, now: Date) {
      const { attributes, ...columns } = changes;
      let query = db.updateTable('contacts').set({ ...columns, updated_at: now });
      if (attributes) {
        const removed = Object.keys(attributes).filter((key) => attributes[key] === null);
        const set = Object.fromEntries(Object.entries(attributes).filter(([, value]) => value !== null));
        query = query.set({
          attributes: sql`(contacts.attributes - ${sql.val(removed)}::text[]) || ${JSON.stringify(set)}::jsonb`,
        });
      }
      if (changes.phone_e164) {
        query = query.set({
          dnc: sql<boolean>`${changes.phone_e164} IN (${listed})`,
        });
      }
      return query.where('account_id', '=', accountId).where('id', '=', id).returningAll().executeTakeFirst();
    },
  };
}

export function createContactsRepo(db: Db, outbox: OutboxFactory) {
  return createRepo(db, outbox, contactQueries);
}

export type ContactsRepo = ReturnType<typeof createContactsRepo>;
