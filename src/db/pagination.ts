import type { SelectQueryBuilder } from 'kysely';

export interface Page {
  limit: number;
  offset: number;
}

export interface Paged<T> {
  items: T[];
  total: number;
}

/**
 * One page of a query and the count of every matching row, run together. `matching` carries the table and the
 * filters; `select` adds the columns and the order, which the count does without.
 */
export async function paginate<DB, TB extends keyof DB, O>(
  matching: SelectQueryBuilder<DB, TB, object>,
  page: Page,
  select: (query: SelectQueryBuilder<DB, TB, object>) => SelectQueryBuilder<DB, TB, O>,
): Promise<Paged<O>> {
  const [items, count] = await Promise.all([
    select(matching).limit(page.limit).offset(page.offset).execute(),
    matching.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
  ]);
  return { items, total: Number((count as { total: number | string }).total) };
}

export type Envelope<K extends string, T> = { [P in K]: T[] } & { total: number; limit: number; offset: number };

/** What every list answers: `{ <resources>: items, total, limit, offset }`, the items under the resource's plural. */
export function envelope<K extends string, T>(key: K, items: T[], total: number, page: Page): Envelope<K, T> {
  return { [key]: items, total, limit: page.limit, offset: page.offset } as Envelope<K, T>;
}
