/**
 * pg-boss talks to the database through `{ executeSql(text, values) }`. Ours runs that SQL through
 * Kysely on both storage modes, so:
 * - on PGlite, pg-boss waits its turn for the one connection like every other query (and never runs
 *   inside someone else's transaction);
 * - on PostgreSQL, it shares the application's pool (DATABASE_POOL_SIZE) and its int8 parsing;
 * - an enqueue can join a caller's transaction (the outbox), through the same code path.
 * Parameterless SQL goes to PGlite's `exec`, which accepts the several statements pg-boss sends at once.
 */
import type { Kysely } from 'kysely';
import { execRaw } from '../db/client.js';
import type { Database } from '../db/types.js';

export interface PgBossDb {
  executeSql(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>;
}

export interface TrackedSqlExecutor extends PgBossDb {
  /** Resolves once every statement already handed to executeSql has finished. */
  drain(): Promise<void>;
  /**
   * Drains, and leaves every later statement unanswered: pg-boss records a job that ended just as it stopped without
   * waiting for the write (a failure there would end the process), after the database may be closed. Such a job stays
   * active until its queue's expiry, then is retried by its policy.
   */
  close(): Promise<void>;
}

// pg-boss's install and maintenance scripts arrive as one string: BEGIN; ...; COMMIT;
const EXPLICIT_TRANSACTION = /^\s*BEGIN\b/i;

export function createSqlExecutor(db: Kysely<Database>): TrackedSqlExecutor {
  const inFlight = new Set<Promise<unknown>>();
  let closed = false;

  async function run(text: string, values: unknown[]) {
    if (values.length > 0 || !EXPLICIT_TRANSACTION.test(text)) return execRaw(db, text, values);
    // A failure midway leaves the connection inside an aborted transaction ("commands ignored until end
    // of transaction block"); roll it back before the connection is handed to anyone else.
    return db.connection().execute(async (connection) => {
      try {
        return await execRaw(connection, text);
      } catch (error) {
        await execRaw(connection, 'ROLLBACK').catch(() => undefined);
        throw error;
      }
    });
  }

  return {
    executeSql(text, values = []) {
      if (closed) return new Promise<never>(() => undefined);
      const query = run(text, values);
      inFlight.add(query);
      const forget = () => inFlight.delete(query);
      query.then(forget, forget);
      return query;
    },
    async drain() {
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    },
    async close() {
      closed = true;
      await this.drain();
    },
  };
}

/** Runs pg-boss's SQL inside the caller's transaction: the job exists only if that transaction commits. */
export function transactionExecutor(trx: Kysely<Database>): PgBossDb {
  return { executeSql: (text, values = []) => execRaw(trx, text, values) };
}
