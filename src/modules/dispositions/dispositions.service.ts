import type { Selectable } from 'kysely';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { AppError, invalidField, notFound } from '../../lib/errors.js';
import type { Auth } from '../../lib/caller.js';
import { envelope } from '../../db/pagination.js';
import type { TxHandle } from '../../db/repo.js';
import { actorOf } from '../../events/domain-events.js';
import type { DispositionChanges, DispositionsRepo } from './dispositions.repo.js';
import type { DispositionCodesTable } from './dispositions.tables.js';
import type { CreateDispositionInput, ListDispositionsQuery, UpdateDispositionInput } from './dispositions.schemas.js';
import { DEFAULT_DISPOSITIONS, type DefaultDisposition } from './dispositions.defaults.js';

const SYSTEM_DISPOSITIONS = DEFAULT_DISPOSITIONS.filter((d) => d.system);

type CodeRow = Selectable<DispositionCodesTable>;
type Queries = Pick<DispositionsRepo, 'hasAny' | 'insertMissing' | 'findByCode'>;

/** A code as the call engine needs it. */
export interface ResolvedDisposition {
  id: string;
  code: string;
  label: string;
  category: CodeRow['category'];
  isSystem: boolean;
  active: boolean;
}

const toDispositionCode = (row: CodeRow) => ({
  id: row.id,
  code: row.code,
  label: row.label,
  description: row.description,
  category: row.category,
  isSystem: row.is_system,
  active: row.active,
  createdAt: row.created_at.toISOString(),
  updatedAt: row.updated_at.toISOString(),
});

function cleanLabel(label: string): string {
  const trimmed = label.trim();
  if (!trimmed) throw invalidField('body/label', 'must not be blank');
  return trimmed;
}

const duplicate = (code: string) =>
  new AppError('conflict', `The code "${code}" already exists in this account; change that one instead`, { code });

// Accounts known to have their default codes, so the check runs once per account per process.
const SEEDED_CACHE_MAX = 100_000;

export function createDispositionsService(deps: { repo: DispositionsRepo; clock: Clock }) {
  const { repo, clock } = deps;
  const seeded = new Set<string>();

  const rowsOf = (codes: readonly DefaultDisposition[], now: Date) =>
    codes.map((d) => ({
      id: newId(),
      code: d.code,
      label: d.label,
      description: d.description,
      category: d.category,
      is_system: d.system,
      created_at: now,
      updated_at: now,
    }));

  /**
   * Every account starts with the default set, written the first time the account's codes are used (so accounts
   * older than this feature get it too). An account that has its codes gets the system codes added since (they are
   * never deleted, so a missing one is new), not the defaults it deleted. Idempotent: codes already there are left
   * alone.
   */
  async function ensureDefaults(accountId: string, queries: Queries = repo, cache = true) {
    if (seeded.has(accountId)) return;
    const now = clock.now();
    const wanted = (await queries.hasAny(accountId)) ? SYSTEM_DISPOSITIONS : DEFAULT_DISPOSITIONS;
    await queries.insertMissing(accountId, rowsOf(wanted, now));
    // Inside someone else's transaction the rows exist only if it commits: do not remember them yet.
    if (!cache) return;
    if (seeded.size >= SEEDED_CACHE_MAX) seeded.clear();
    seeded.add(accountId);
  }

  async function resolve(accountId: string, code: string, tx?: TxHandle): Promise<ResolvedDisposition | null> {
    const queries = tx ? repo.within(tx) : repo;
    await ensureDefaults(accountId, queries, !tx);
    const row = await queries.findByCode(accountId, code);
    if (!row) return null;
    return {
      id: row.id,
      code: row.code,
      label: row.label,
      category: row.category,
      isSystem: row.is_system,
      active: row.active,
    };
  }

  return {
    async list(auth: Auth, query: ListDispositionsQuery) {
      await ensureDefaults(auth.accountId);
      const { limit, offset, ...filters } = query;
      const { items, total } = await repo.list(auth.accountId, filters, { limit, offset });
      return envelope('dispositionCodes', items.map(toDispositionCode), total, query);
    },

    async create(auth: Auth, input: CreateDispositionInput) {
      await ensureDefaults(auth.accountId);
      const label = cleanLabel(input.label);
      const now = clock.now();
      const row = await repo
        .transaction(async (tx) => {
          if (await tx.findByCode(auth.accountId, input.code)) throw duplicate(input.code);
          const created = await tx.insert(auth.accountId, {
            id: newId(),
            code: input.code,
            label,
            description: input.description?.trim() ?? '',
            category: input.category,
            active: input.active ?? true,
            created_at: now,
            updated_at: now,
          });
          await tx.emit({
            type: 'disposition_code.created',
            accountId: auth.accountId,
            subject: { type: 'disposition_code', id: created.id },
            data: { code: created.code, label: created.label, category: created.category },
            actor: actorOf(auth),
          });
          return created;
        })
        .catch((error: unknown) => {
          // Two requests creating the same code at once: the unique index decides, the loser gets the same 409.
          if ((error as { code?: string }).code === '23505') throw duplicate(input.code);
          throw error;
        });
      return toDispositionCode(row);
    },

    /** Relabels, recategorizes or (de)activates a code; a system code stays active. A save that changes nothing writes nothing. */
    async update(auth: Auth, id: string, input: UpdateDispositionInput) {
      return repo.transaction(async (tx) => {
        const current = await tx.findForUpdate(auth.accountId, id);
        if (!current) throw notFound('Disposition code');
        if (current.is_system && input.active === false) {
          throw new AppError(
            'conflict',
            `"${current.code}" is a system code the call engine sets by itself, so it stays active; you can relabel it`,
            { code: current.code },
          );
        }
        const wanted: DispositionChanges = {};
        if (input.label !== undefined) wanted.label = cleanLabel(input.label);
        if (input.description !== undefined) wanted.description = input.description.trim();
        if (input.category !== undefined) wanted.category = input.category;
        if (input.active !== undefined) wanted.active = input.active;
        const changes = Object.fromEntries(
          Object.entries(wanted).filter(([column, value]) => current[column as keyof CodeRow] !== value),
        ) as DispositionChanges;
        if (Object.keys(changes).length === 0) return toDispositionCode(current);
        const row = await tx.update(auth.accountId, id, { ...changes, updated_at: clock.now() });
        await tx.emit({
          type: 'disposition_code.updated',
          accountId: auth.accountId,
          subject: { type: 'disposition_code', id },
          data: { code: row.code, changed: Object.keys(changes) },
          actor: actorOf(auth),
        });
        return toDispositionCode(row);
      });
    },

    /** Deletes a code the account added (or a default it does not want); past calls keep the code they were given. */
    async delete(auth: Auth, id: string) {
      return repo.transaction(async (tx) => {
        const current = await tx.findForUpdate(auth.accountId, id);
        if (!current) throw notFound('Disposition code');
        if (current.is_system) {
          throw new AppError(
            'conflict',
            `"${current.code}" is a system code the call engine sets by itself, so it cannot be deleted; you can relabel it`,
            { code: current.code },
          );
        }
        await tx.delete(auth.accountId, id);
        await tx.emit({
          type: 'disposition_code.deleted',
          accountId: auth.accountId,
          subject: { type: 'disposition_code', id },
          data: { code: current.code },
          actor: actorOf(auth),
        });
        return { id, deleted: true as const };
      });
    },

    /**
     * For the calls module: the account's code, active or not, or null when it has no such code. Pass `tx` when
     * calling from inside a transaction (on the embedded database the pool is that one connection).
     */
    resolve,

    /**
     * Adds the codes the account does not have yet (an agent template's vocabulary, when an agent is made from it),
     * never as system codes; codes already there, active or not, are left as they are. Answers how many were added.
     */
    async addMissing(accountId: string, codes: readonly Omit<DefaultDisposition, 'system'>[]): Promise<number> {
      await ensureDefaults(accountId);
      return repo.insertMissing(
        accountId,
        rowsOf(
          codes.map((code) => ({ ...code, system: false })),
          clock.now(),
        ),
      );
    },

    /** Whether `code` may be set on a call now: the account has it and it is active. */
    async isValidCode(accountId: string, code: string, tx?: TxHandle): Promise<boolean> {
      return (await resolve(accountId, code, tx))?.active === true;
    },
  };
}

export type DispositionsService = ReturnType<typeof createDispositionsService>;
