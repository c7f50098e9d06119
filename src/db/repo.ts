/**
 * The one way a module talks to its tables: `createRepo(db, outbox, queries)` gives the module's queries bound to
 * the pool, plus `transaction(async (tx) => …)`, where `tx` carries the same queries bound to the transaction and
 * the outbox (`tx.send` for jobs, `tx.emit` for domain events), so a write and what it causes commit together.
 * What the outbox is, is the caller's: this file knows no job and no event.
 */
import type { Db } from './client.js';
import { committed } from '../lib/wake.js';

/** Where queries run: the pool, or an open transaction (a Kysely Transaction is a Kysely too). */
export type Executor = Db;

/** An open transaction as another module receives it: that module binds its own repo to it with `within`. */
export interface TxHandle {
  readonly trx: Executor;
}

export function createRepo<Q extends object, O extends object>(
  db: Db,
  outbox: (trx: Executor) => O,
  queries: (executor: Executor) => Q,
) {
  return Object.assign(queries(db), {
    /** Runs `work` in one transaction. Inside it use only `tx`: on PGlite the pool is that one connection. */
    transaction<T>(work: (tx: Q & O & TxHandle) => Promise<T>): Promise<T> {
      return inTransaction(db, (trx) => work({ ...queries(trx), ...outbox(trx), trx }));
    },
    /** The same queries inside a transaction another module opened. */
    within(tx: TxHandle): Q {
      return queries(tx.trx);
    },
  });
}

const beforeCommitByTransaction = new WeakMap<object, Array<() => Promise<void>>>();

/**
 * Runs `step` inside the transaction once its work is done, just before it commits (writes gathered as the work went,
 * made in one statement). False when `trx` is not a transaction `inTransaction` opened: then nothing would run it.
 */
export function beforeCommit(trx: object, step: () => Promise<void>): boolean {
  const steps = beforeCommitByTransaction.get(trx);
  if (!steps) return false;
  steps.push(step);
  return true;
}

/**
 * `db.transaction().execute(work)`, with the steps `beforeCommit` added run last inside it, then wakes the workers of
 * the jobs it enqueued (they would otherwise wait for their poll).
 */
export async function inTransaction<T>(db: Db, work: (trx: Executor) => Promise<T>): Promise<T> {
  let transaction: Executor | undefined;
  const result = await db.transaction().execute(async (trx) => {
    const steps: Array<() => Promise<void>> = [];
    beforeCommitByTransaction.set((transaction = trx), steps);
    try {
      const done = await work(trx);
      // A step may add another (each runs once, in order).
      for (let i = 0; i < steps.length; i++) await steps[i]!();
      return done;
    } finally {
      beforeCommitByTransaction.delete(trx);
    }
  });
  if (transaction) committed(transaction);
  return result;
}
