/**
 * `requireOwned(auth, { agents: [...], contactLists: [...] })`: checks in one query that every id a request
 * references belongs to the caller's account, and answers the same 404 as a missing id otherwise. Bodies that
 * reference several resources (a campaign's agent, lists and numbers) check them all at once.
 */
import { sql } from 'kysely';
import type { Db } from './client.js';
import type { Auth } from '../lib/caller.js';
import { notFound } from '../lib/errors.js';

/** Every kind of resource a request may reference, where its rows live, and what hides one (a soft delete). */
const OWNED = {
  agents: { table: 'agents', label: 'Agent', live: sql`AND deleted_at IS NULL` },
  contactLists: { table: 'contact_lists', label: 'Contact list', live: sql`` },
  contacts: { table: 'contacts', label: 'Contact', live: sql`` },
  calls: { table: 'calls', label: 'Call', live: sql`` },
} as const;

export type OwnedKind = keyof typeof OWNED;
export type OwnedRefs = Partial<Record<OwnedKind, readonly string[]>>;

export function createOwnershipCheck(db: Db) {
  return {
    async requireOwned(auth: Auth, refs: OwnedRefs): Promise<void> {
      const wanted = (Object.entries(refs) as Array<[OwnedKind, readonly string[]]>)
        .map(([kind, ids]) => [kind, [...new Set(ids)]] as const)
        .filter(([, ids]) => ids.length > 0);
      if (wanted.length === 0) return;
      const selects = wanted.map(
        ([kind, ids]) =>
          sql`SELECT ${kind}::text AS kind, id::text AS id FROM ${sql.table(OWNED[kind].table)}
              WHERE account_id = ${auth.accountId} AND id = ANY(${ids}::uuid[]) ${OWNED[kind].live}`,
      );
      const { rows } = await sql<{ kind: OwnedKind; id: string }>`${sql.join(selects, sql` UNION ALL `)}`.execute(db);
      const found = new Set(rows.map((row) => `${row.kind}:${row.id}`));
      for (const [kind, ids] of wanted) {
        if (ids.some((id) => !found.has(`${kind}:${id}`))) throw notFound(OWNED[kind].label);
      }
    },
  };
}

export type OwnershipCheck = ReturnType<typeof createOwnershipCheck>;
