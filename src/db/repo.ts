/**
 * The one way a module talks to its tables: `createRepo(db, outbox, queries)` gives the module's queries bound to
 * the pool, plus `transaction(async (tx) => …)`, where `tx` carries the same queries bound to the transaction and
 * the outbox (`tx.send` for jobs, `tx.emit` for domain events), so a write and what it causes commit together.
 */
import type { Db } from './client.js';
import type { DomainEvent, DomainEventInput } from '../events/domain-events.js';
import type { JobName, JobPayload } from '../jobs/registry.js';
import type { SendOptions } from '../jobs/queue.js';
import { committed } from '../jobs/wake.js';

/** Where queries run: the pool, or an open transaction (a Kysely Transaction is a Kysely too). */
export type Executor = Db;

/** An open transaction as another module receives it: that module binds its own repo to it with `within`. */
export interface TxHandle {
  readonly trx: Executor;
}

/** What a transaction can cause besides its own writes; nothing of it happens unless the transaction commits. */
export interface Outbox {
  send<N extends JobName>(name: N, data: JobPayload<N>, options?: Omit<SendOptions, 'trx'>): Promise<string | null>;
  emit(event: DomainEventInput): Promise<DomainEvent>;
}

export type OutboxFactory = (trx: Executor) => Outbox;

export type Tx<Q> = Q & Outbox & TxHandle;

export function createRepo<Q extends object>(db: Db, outbox: OutboxFactory, queries: (executor: Executor) => Q) {
  return Object.assign(queries(db), {
    /** Runs `work` in one transaction. Inside it use only `tx`: on PGlite the pool is that one connection. */
    transaction<T>(work: (tx: Tx<Q>) => Promise<T>): Promise<T> {
      return inTransaction(db, (trx) => work({ ...queries(trx), ...outbox(trx), trx }));
    },
    /** The same queries inside a transaction another module opened. */
    within(tx: TxHandle): Q {
      return queries(tx.trx);
    },
  });
}

/** `db.transaction().execute(work)`, then wakes the workers of the jobs it enqueued (they would otherwise wait for their poll). */
export async function inTransaction<T>(db: Db, work: (trx: Executor) => Promise<T>): Promise<T> {
  let transaction: Executor | undefined;
  const result = await db.transaction().execute((trx) => work((transaction = trx)));
  if (transaction) committed(transaction);
  return result;
}
