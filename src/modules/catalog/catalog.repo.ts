import type { Insertable, Updateable } from 'kysely';
import type { Db } from '../../db/client.js';
import { createRepo, type Executor } from '../../db/repo.js';
import type { OutboxFactory } from '../../events/outbox.js';
import { paginate, type Page } from '../../db/pagination.js';
import type { CatalogModelsTable, ModelKind, TelephonyRatesTable } from './catalog.tables.js';

export type NewCatalogModel = Insertable<CatalogModelsTable>;
export type CatalogModelChanges = Omit<Updateable<CatalogModelsTable>, 'id' | 'kind' | 'built_in' | 'created_at'>;
export type TelephonyRateRow = Omit<Insertable<TelephonyRatesTable>, 'updated_at'>;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The catalog is platform-wide: no account owns these rows, and only platform administrators change them. */
export function catalogQueries(db: Executor) {
  const models = (kind: ModelKind) => db.selectFrom('catalog_models').where('kind', '=', kind);

  return {
    list(kind: ModelKind, filters: { active?: boolean }, page: Page) {
      let matching = models(kind);
      if (filters.active !== undefined) matching = matching.where('active', '=', filters.active);
      return paginate(matching, page, (q) => q.selectAll().orderBy('created_at', 'desc').orderBy('slug'));
    },

    find(kind: ModelKind, id: string) {
      return models(kind).selectAll().where('id', '=', id).executeTakeFirst();
    },

    findForUpdate(kind: ModelKind, id: string) {
      return models(kind).selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
    },

    findBySlug(kind: ModelKind, slug: string) {
      return models(kind).selectAll().where('slug', '=', slug).executeTakeFirst();
    },

    /** A model by id or slug (agents may name either), or the kind's default when `reference` is undefined. */
    findForPricing(kind: ModelKind, reference: string | undefined) {
      const query = models(kind).selectAll();
      if (reference === undefined) return query.where('is_default', '=', true).executeTakeFirst();
      if (UUID.test(reference))
        return query.where((eb) => eb.or([eb('id', '=', reference), eb('slug', '=', reference)])).executeTakeFirst();
      return query.where('slug', '=', reference).executeTakeFirst();
    },

    insert(model: NewCatalogModel) {
      return db.insertInto('catalog_models').values(model).returningAll().executeTakeFirstOrThrow();
    },

    update(kind: ModelKind, id: string, changes: CatalogModelChanges) {
      return db
        .updateTable('catalog_models')
        .set(changes)
        .where('kind', '=', kind)
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirstOrThrow();
    },

    /** Clears the kind's default flag (on every model but `exceptId`), so another model can take it. */
    clearDefault(kind: ModelKind, exceptId: string, at: Date) {
      return db
        .updateTable('catalog_models')
        .set({ is_default: false, updated_at: at })
        .where('kind', '=', kind)
        .where('is_default', '=', true)
        .where('id', '!=', exceptId)
        .execute();
    },

    async delete(kind: ModelKind, id: string): Promise<boolean> {
      const result = await db
        .deleteFrom('catalog_models')
        .where('kind', '=', kind)
        .where('id', '=', id)
        .executeTakeFirst();
      return result.numDeletedRows > 0n;
    },

    listRates() {
      return db.selectFrom('telephony_rates').selectAll().orderBy('country').execute();
    },

    /** The rate of `country`, else the * fallback; the exact row sorts first. */
    findRate(country: string) {
      return db
        .selectFrom('telephony_rates')
        .selectAll()
        .where('country', 'in', [country, '*'])
        .orderBy((eb) => eb.case().when('country', '=', '*').then(1).else(0).end())
        .limit(1)
        .executeTakeFirst();
    },

    /** Replaces the whole rate table; rows whose prices did not change keep their updated_at. */
    async replaceRates(rows: TelephonyRateRow[], at: Date) {
      await db
        .deleteFrom('telephony_rates')
        .where(
          'country',
          'not in',
          rows.map((row) => row.country),
        )
        .execute();
      await db
        .insertInto('telephony_rates')
        .values(rows.map((row) => ({ ...row, updated_at: at })))
        .onConflict((oc) =>
          oc
            .column('country')
            .doUpdateSet((eb) => ({
              inbound_per_minute_usd: eb.ref('excluded.inbound_per_minute_usd'),
              outbound_per_minute_usd: eb.ref('excluded.outbound_per_minute_usd'),
              updated_at: eb.ref('excluded.updated_at'),
            }))
            .where((eb) =>
              eb.or([
                eb('telephony_rates.inbound_per_minute_usd', '!=', eb.ref('excluded.inbound_per_minute_usd')),
                eb('telephony_rates.outbound_per_minute_usd', '!=', eb.ref('excluded.outbound_per_minute_usd')),
              ]),
            ),
        )
        .execute();
    },

    async platformFeePerMinute(): Promise<string> {
      const row = await db
        .selectFrom('pricing_settings')
        .select('platform_fee_per_minute_usd')
        .executeTakeFirstOrThrow();
      return row.platform_fee_per_minute_usd;
    },

    setPlatformFeePerMinute(fee: string, at: Date) {
      return db.updateTable('pricing_settings').set({ platform_fee_per_minute_usd: fee, updated_at: at }).execute();
    },

    /** Locks the rate table's settings row, so two replacements of the table run one after the other. */
    lockPricing() {
      return db.selectFrom('pricing_settings').select('singleton').forUpdate().execute();
    },
  };
}

export function createCatalogRepo(db: Db, outbox: OutboxFactory) {
  return createRepo(db, outbox, catalogQueries);
}

export type CatalogRepo = ReturnType<typeof createCatalogRepo>;
