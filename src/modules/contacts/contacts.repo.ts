import { setImmediate as nextTurn } from 'node:timers/promises';
import { sql, type ExpressionBuilder, type Insertable, type RawBuilder, type Selectable } from 'kysely';
import type { Db } from '../../db/client.js';
import type { Database } from '../../db/types.js';
import { createRepo, type Executor } from '../../db/repo.js';
import type { OutboxFactory } from '../../events/outbox.js';
import { paginate, type Page } from '../../db/pagination.js';
import { likePattern } from '../../db/like.js';
import { invalidField } from '../../lib/errors.js';
import type { ContactListsTable, ContactsTable, ImportFailure } from './contacts.tables.js';

export interface ContactFilters {
  listId?: string;
  q?: string;
  phoneE164?: string;
  dnc?: boolean;
}

export type ContactRow = Selectable<ContactsTable>;

/** Where an export batch starts: after this contact, newest first. */
export interface ExportCursor {
  /** created_at as PostgreSQL writes it (microseconds kept). */
  at: string;
  id: string;
}

export type ExportRow = ContactRow & {
  attributes_bytes: number;
  cursor_at: string;
  bytes_before: number;
  matched: number;
};

/** Every column but attributes, which list queries read only when they fit a budget. */
const CONTACT_COLUMNS = [
  'contacts.id',
  'contacts.account_id',
  'contacts.first_name',
  'contacts.last_name',
  'contacts.phone_e164',
  'contacts.email',
  'contacts.company',
  'contacts.timezone',
  'contacts.dnc',
  'contacts.created_at',
  'contacts.updated_at',
] as const;

/**
 * Attributes (as JSON text) one page of GET /v1/contacts may carry, so a response stays small whatever was stored.
 * Typical contacts hold a few hundred bytes; only pages of contacts near their attribute limits come close.
 */
export const PAGE_ATTRIBUTE_BYTES = 16 * 1024 * 1024;
const megabytes = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);

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

/**
 * What free text searches: name, email and number in lower case (contacts.search_text, migration 0019), under the
 * trigram index contacts_search_text_idx. Searched with LIKE and a lowercased pattern: ILIKE would lowercase every row.
 */
export const contactSearchText = sql<string>`contacts.search_text`;

/** The LIKE pattern that finds `text` anywhere in contactSearchText, ignoring case (lowercased by PostgreSQL too). */
export const contactSearchPattern = (text: string) => sql<string>`lower(${likePattern(text)})`;

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
      const text = contactSearchText;
      const matches = [eb(text, 'like', contactSearchPattern(filters.q.trim()))];
      const digits = filters.q.replace(/\D/g, '');
      // Digits match the number only: it follows the second separator.
      if (digits.length >= 3) matches.push(eb(text, 'like', `%\x1f%\x1f${likePattern(digits)}`));
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
      return db
        .selectFrom('contact_lists')
        .selectAll()
        .where('account_id', '=', accountId)
        .where('id', '=', id)
        .executeTakeFirst();
    },

    /** The list of an import answered at once, created once its file is received and its header checked. */
    createImportingList(accountId: string, values: Omit<Insertable<ContactListsTable>, 'account_id'>) {
      return db
        .insertInto('contact_lists')
        .values({
          ...values,
          account_id: accountId,
          import_state: 'processing',
          import_fraction: 0,
          import_finished_at: null,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
    },

    /** An import's progress, which is also its heartbeat (in database time). */
    async saveImportProgress(
      accountId: string,
      id: string,
      progress: { rows: number; bytes: number; fraction: number },
    ) {
      await db
        .updateTable('contact_lists')
        .set({
          import_rows_processed: progress.rows,
          import_bytes_read: progress.bytes,
          import_fraction: progress.fraction,
          import_heartbeat_at: sql<Date>`now()`,
        })
        .where('account_id', '=', accountId)
        .where('id', '=', id)
        .where('import_state', '=', 'processing')
        .execute();
    },

    /**
     * Fails an import still processing (when `staleSeconds` is given, only if its heartbeat is older than that), and
     * takes its members off the list; true when it did.
     */
    async failImport(accountId: string, id: string, failure: ImportFailure, staleSeconds: number | null) {
      let query = db
        .updateTable('contact_lists')
        .set({
          import_state: 'failed',
          import_failure: JSON.stringify(failure),
          import_heartbeat_at: sql<Date>`now()`,
          import_finished_at: sql<Date>`now()`,
        })
        .where('account_id', '=', accountId)
        .where('id', '=', id)
        .where('import_state', '=', 'processing');
      if (staleSeconds !== null)
        query = query.where('import_heartbeat_at', '<', sql<Date>`now() - make_interval(secs => ${staleSeconds})`);
      const failed = await query.returning('id').executeTakeFirst();
      if (!failed) return false;
      await db
        .deleteFrom('contact_list_members')
        .where('account_id', '=', accountId)
        .where('list_id', '=', id)
        .execute();
      return true;
    },

    /**
     * Imports across accounts that may have lost their process (the sweep): those whose heartbeat is older than
     * `staleSeconds`, or every import in progress (on the embedded database, which one process owns).
     */
    lostImportCandidates(staleSeconds: number | null) {
      let query = db.selectFrom('contact_lists').select(['id', 'account_id']).where('import_state', '=', 'processing');
      if (staleSeconds !== null)
        query = query.where('import_heartbeat_at', '<', sql<Date>`now() - make_interval(secs => ${staleSeconds})`);
      return query.orderBy('import_heartbeat_at').limit(1000).execute();
    },

    /**
     * A page of contacts. Their attributes are read only when the page's attributes, by their stored size
     * (contacts.attributes_bytes), fit PAGE_ATTRIBUTE_BYTES: otherwise the page is refused before they are
     * loaded, whatever was stored, and the caller is told a limit that fits.
     *
     * `total` counts every match, unless `countUpTo` is given: then the count stops there (`totalExact` false when
     * there are more), and is not run at all when the page itself shows where the matches end. The count then follows
     * the page, after a turn of the event loop, rather than running beside it: on PGlite other requests go between.
     */
    async listContacts(accountId: string, filters: ContactFilters, page: Page, countUpTo: number | null = null) {
      const where = contactFilters(accountId, filters);
      const sized = db
        .selectFrom('contacts')
        .select([
          ...CONTACT_COLUMNS,
          'contacts.attributes',
          sql<number>`contacts.attributes_bytes`.as('attributes_bytes'),
        ])
        .where(where)
        .orderBy('contacts.created_at', 'desc')
        .orderBy('contacts.id', 'desc')
        .limit(page.limit)
        .offset(page.offset)
        .as('page');
      const pageBytes = sql<number>`(sum(page.attributes_bytes) OVER ())::float8`;
      const pageQuery = db
        .selectFrom(sized)
        .select([
          'id',
          'account_id',
          'first_name',
          'last_name',
          'phone_e164',
          'email',
          'company',
          'timezone',
          'dnc',
          'created_at',
          'updated_at',
        ])
        .select(
          sql<ContactRow['attributes']>`CASE WHEN ${pageBytes} <= ${PAGE_ATTRIBUTE_BYTES} THEN page.attributes END`.as(
            'attributes',
          ),
        )
        .select(['attributes_bytes', pageBytes.as('page_attribute_bytes')])
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc');
      const countAll = () =>
        db
          .selectFrom('contacts')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where(where)
          .executeTakeFirstOrThrow()
          .then((count) => ({ total: Number(count.n), totalExact: true }));
      const [rows, counted] = await Promise.all([pageQuery.execute(), countUpTo === null ? countAll() : null]);
      const bytes = rows[0]?.page_attribute_bytes ?? 0;
      if (bytes > PAGE_ATTRIBUTE_BYTES) {
        let fits = 0;
        for (let sum = 0; fits < rows.length && (sum += rows[fits]!.attributes_bytes) <= PAGE_ATTRIBUTE_BYTES; ) fits++;
        throw invalidField(
          'querystring/limit',
          `asks for contacts holding ${megabytes(bytes)} MB of attributes, more than the ${megabytes(PAGE_ATTRIBUTE_BYTES)} MB one page may hold; ask for fewer (limit=${Math.max(1, fits)}) or use the CSV export`,
        );
      }
      const items: ContactRow[] = rows.map(({ page_attribute_bytes: _page, attributes_bytes: _bytes, ...row }) => ({
        ...row,
        attributes: row.attributes ?? {},
      }));
      if (countUpTo === null) return { items, ...counted! };
      // A page that is not full, and not past the end, ends the matches: its count is exact and free.
      if (items.length < page.limit && (items.length > 0 || page.offset === 0))
        return { items, total: page.offset + items.length, totalExact: true };
      await nextTurn();
      const matching = db
        .selectFrom('contacts')
        .select(sql<number>`1`.as('one'))
        .where(where)
        .limit(countUpTo + 1)
        .as('matching');
      const { n } = await db
        .selectFrom(matching)
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow();
      const found = Number(n);
      return { items, total: Math.min(found, countUpTo), totalExact: found <= countUpTo };
    },

    /**
     * One batch of the export, newest first, after the keyset cursor: the next `scan` contacts of the account in the
     * order of contacts_account_created_idx, those of them that match the filters, cut where their attributes pass
     * maxBytes (always at least one row). So a batch reads at most `scan` contacts however rare the matches, and rows
     * past the cut are never read in full. `next` is where the following batch starts; null when there is none.
     *
     * The plan is pinned to that index (no bitmap scan, no sort, for this transaction): the embedded database never
     * gathers statistics by itself, and without them the planner sorts all the account's remaining contacts for
     * every batch. The cursor's time travels as text so it keeps PostgreSQL's microseconds (a JS Date would round
     * them away and repeat rows).
     */
    exportBatch(
      accountId: string,
      filters: ContactFilters,
      after: ExportCursor | null,
      scan: number,
      maxBytes: number,
    ): Promise<{ rows: ExportRow[]; next: ExportCursor | null }> {
      const before = (cursor: ExportCursor) =>
        sql<boolean>`(contacts.created_at, contacts.id) < (${cursor.at}::timestamptz, ${cursor.id}::uuid)`;
      const batch = async (trx: Executor) => {
        // A plan with a disabled step looks a billion times dearer than it is: without jit off, PostgreSQL would
        // spend a quarter of a second compiling the query of every batch.
        await sql`SELECT set_config('enable_bitmapscan', 'off', true), set_config('enable_sort', 'off', true),
                         set_config('jit', 'off', true)`.execute(trx);
        const filtered =
          filters.listId !== undefined ||
          filters.q !== undefined ||
          filters.phoneE164 !== undefined ||
          filters.dnc !== undefined;
        // With filters, the last of the next `scan` contacts bounds the range the filters are applied to.
        let last: ExportCursor | null = null;
        if (filtered) {
          let scanned = trx
            .selectFrom('contacts')
            .select([sql<string>`contacts.created_at::text`.as('at'), 'contacts.id'])
            .where('contacts.account_id', '=', accountId);
          if (after) scanned = scanned.where(before(after));
          last =
            (await scanned
              .orderBy('contacts.created_at', 'desc')
              .orderBy('contacts.id', 'desc')
              .offset(scan - 1)
              .limit(1)
              .executeTakeFirst()) ?? null;
        }
        let matching = trx
          .selectFrom('contacts')
          .select([...CONTACT_COLUMNS, 'contacts.attributes'])
          .select(sql<number>`contacts.attributes_bytes`.as('attributes_bytes'))
          .select(sql<string>`contacts.created_at::text`.as('cursor_at'))
          .select(
            sql<number>`(sum(contacts.attributes_bytes) OVER (ORDER BY contacts.created_at DESC, contacts.id DESC ROWS UNBOUNDED PRECEDING) - contacts.attributes_bytes)::float8`.as(
              'bytes_before',
            ),
          )
          .where(contactFilters(accountId, filters));
        if (after) matching = matching.where(before(after));
        if (last)
          matching = matching.where(
            sql<boolean>`(contacts.created_at, contacts.id) >= (${last.at}::timestamptz, ${last.id}::uuid)`,
          );
        // Counted after the limit (a window in `matching` would count every remaining match), before the cut.
        const counted = trx
          .selectFrom(
            matching.orderBy('contacts.created_at', 'desc').orderBy('contacts.id', 'desc').limit(scan).as('limited'),
          )
          .selectAll()
          .select(sql<number>`(count(*) OVER ())::int`.as('matched'))
          .as('batch');
        const rows = await trx
          .selectFrom(counted)
          .selectAll()
          .where('bytes_before', '<', maxBytes)
          .orderBy('created_at', 'desc')
          .orderBy('id', 'desc')
          .execute();
        const final = rows[rows.length - 1];
        const cut = final !== undefined && rows.length < final.matched;
        let next: ExportCursor | null;
        if (cut) next = { at: final.cursor_at, id: final.id };
        else if (filtered) next = last;
        else next = rows.length < scan || !final ? null : { at: final.cursor_at, id: final.id };
        return { rows, next };
      };
      return db.isTransaction ? batch(db) : db.transaction().execute(batch);
    },

    /** What the dialer needs of these contacts (the missing ones were deleted). */
    dialerContacts(accountId: string, ids: readonly string[]) {
      return db
        .selectFrom('contacts')
        .select(['id', 'phone_e164', 'timezone', 'dnc'])
        .where('account_id', '=', accountId)
        .where('id', 'in', ids)
        .execute();
    },

    findContact(accountId: string, id: string) {
      return db
        .selectFrom('contacts')
        .selectAll()
        .where('account_id', '=', accountId)
        .where('id', '=', id)
        .executeTakeFirst();
    },

    listsOfContact(accountId: string, contactId: string) {
      return db
        .selectFrom('contact_list_members as m')
        .innerJoin('contact_lists as l', (join) =>
          join.onRef('l.id', '=', 'm.list_id').onRef('l.account_id', '=', 'm.account_id'),
        )
        .select(['l.id', 'l.name'])
        .where('m.account_id', '=', accountId)
        .where('m.contact_id', '=', contactId)
        .orderBy('l.created_at', 'desc')
        .execute();
    },

    findByPhone(accountId: string, phoneE164: string) {
      return db
        .selectFrom('contacts')
        .select('id')
        .where('account_id', '=', accountId)
        .where('phone_e164', '=', phoneE164)
        .executeTakeFirst();
    },

    /**
     * Flags the account's contacts whose number is among `phones` (a subquery), noting their ids in the temporary
     * table `record` when given, so a failed bulk request can take the flags back.
     */
    async flagDncAmong(
      accountId: string,
      phones: RawBuilder<unknown>,
      now: Date,
      record: string | null,
    ): Promise<number> {
      const noted = record ? sql`, noted AS (INSERT INTO ${sql.table(record)} (id) SELECT id FROM flagged)` : sql``;
      const { rows } = await sql<{ n: number }>`
        WITH flagged AS (
          UPDATE contacts c SET dnc = true, updated_at = ${now}::timestamptz
          WHERE c.account_id = ${accountId} AND NOT c.dnc AND c.phone_e164 IN (${phones})
          RETURNING c.id
        )${noted}
        SELECT count(*)::int AS n FROM flagged`.execute(db);
      return rows[0]!.n;
    },

    unflagDncByIds(accountId: string, ids: RawBuilder<unknown>) {
      return db
        .updateTable('contacts')
        .set({ dnc: false })
        .where('account_id', '=', accountId)
        .where('id', 'in', sql<string>`(${ids})`)
        .execute();
    },

    /** Sets the do-not-call flag of the account's contacts with these numbers (a list, or a subquery of numbers). */
    async setDncFlag(
      accountId: string,
      phones: string[] | RawBuilder<unknown>,
      dnc: boolean,
      now: Date,
    ): Promise<number> {
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

/** The distinct contacts of these lists of the account, as a subquery (one column, contact_id): for the dialer. */
export function membersOfListsQuery(accountId: string, listIds: readonly string[]): RawBuilder<unknown> {
  return sql`SELECT DISTINCT contact_id FROM contact_list_members WHERE account_id = ${accountId} AND list_id = ANY(${[...listIds]}::uuid[])`;
}

export function createContactsRepo(db: Db, outbox: OutboxFactory) {
  return createRepo(db, outbox, contactQueries);
}

export type ContactsRepo = ReturnType<typeof createContactsRepo>;
