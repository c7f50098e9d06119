/**
 * The producer side of the job queue (pg-boss, in the same database as everything else).
 * Every role opens it, so any request can enqueue; only the worker role runs handlers (workers.ts).
 */
import PgBoss from 'pg-boss';
import { sql } from 'kysely';
import type { Logger } from 'pino';
import type { Db } from '../db/client.js';
import { createSqlExecutor, transactionExecutor, type PgBossDb } from './sql-executor.js';
import type { JobName, JobPayloads, OutboxQueue, SendOptions } from '../events/outbox.js';
import type { JobRegistry } from './define.js';
import { enqueued } from '../lib/wake.js';

/** A job due within this long wakes its workers when it is due, instead of waiting for their next poll. */
const WAKE_WHEN_DUE_MS = 10_000;

function wakeWhenDue(queue: string, startAfter: Date | number | undefined, trx: object | undefined) {
  if (startAfter === undefined) return enqueued(queue, trx);
  const dueInMs = typeof startAfter === 'number' ? startAfter * 1000 : startAfter.getTime() - Date.now();
  if (dueInMs <= 0) return enqueued(queue, trx);
  // A few milliseconds late, so the fetch finds it due (the database's clock and ours may differ by that much).
  if (dueInMs <= WAKE_WHEN_DUE_MS) setTimeout(() => enqueued(queue), dueInMs + 5).unref();
}

/** pg-boss keeps its tables in this schema, beside ours. */
export const JOBS_SCHEMA = 'pgboss';
// Any fixed number (apart from the migrations' one): serializes pg-boss installs and upgrades across instances.
const INSTALL_LOCK_KEY = 7_482_614;

export type { SendOptions };

export interface JobQueue extends OutboxQueue {
  /** Enqueues a job and answers its id, or null when a job with the same `id` already exists. */
  send<N extends JobName>(name: N, data: JobPayloads[N], options?: SendOptions): Promise<string | null>;
  /** The pg-boss instance, for reading job state (getJobById, getQueueSize). */
  readonly boss: PgBoss;
  close(): Promise<void>;
}

/**
 * Creates each job's queue if missing, and brings its stored policy up to date. The stored queues are read once and
 * only what differs is written: every start runs this, and a queue's create and update are several statements each.
 */
export async function ensureQueues(boss: PgBoss, registry: JobRegistry) {
  const stored = new Map((await boss.getQueues()).map((queue) => [queue.name, queue as unknown as StoredPolicy]));
  for (const [name, definition] of Object.entries(registry)) {
    const queue = { name, policy: 'standard' as const, ...definition.policy };
    const current = stored.get(name);
    if (!current) await boss.createQueue(name, queue);
    if (!current || !sameSettings(current, queue)) await boss.updateQueue(name, queue);
  }
}

type StoredPolicy = Record<string, unknown>;

/** True when every setting the definition gives is already stored (one it leaves out keeps its stored value). */
function sameSettings(stored: StoredPolicy, wanted: Record<string, unknown>) {
  return Object.entries(wanted).every(([key, value]) => value === undefined || stored[key] === value);
}

export function connectPgBoss(db: PgBossDb, options: PgBoss.ConstructorOptions): PgBoss {
  return new PgBoss({ ...options, db: db as PgBoss.Db, schema: JOBS_SCHEMA });
}

/**
 * Installs or upgrades pg-boss's schema and creates the registry's queues, under an advisory lock held
 * on one connection, with pg-boss running on that same connection. pg-boss's own install takes its lock
 * inside the transaction that creates the schema, and two instances starting at once on a fresh
 * PostgreSQL can still collide there ("duplicate key ... pg_namespace"); behind our lock the second
 * finds the schema installed. On PGlite the one connection is held throughout, so nothing interleaves.
 */
async function installJobSchema(db: Db, registry: JobRegistry, log: Logger) {
  await db.connection().execute(async (connection) => {
    await sql`SELECT pg_advisory_lock(${INSTALL_LOCK_KEY})`.execute(connection);
    try {
      const installer = connectPgBoss(createSqlExecutor(connection), {
        migrate: true,
        supervise: false,
        schedule: false,
      });
      installer.on('error', (error) => log.error({ err: error }, 'job queue install error'));
      await installer.start();
      await ensureQueues(installer, registry);
      await installer.stop({ graceful: false, close: false });
    } finally {
      await sql`SELECT pg_advisory_unlock(${INSTALL_LOCK_KEY})`.execute(connection);
    }
  });
}

/**
 * Prepares the job queue's schema and queues (so `--role migrate` does too), and answers a queue that
 * can only send: no polling, maintenance or schedules here.
 */
export async function openJobQueue(db: Db, options: { log: Logger; registry: JobRegistry }): Promise<JobQueue> {
  await installJobSchema(db, options.registry, options.log);
  const executor = createSqlExecutor(db);
  const boss = connectPgBoss(executor, { migrate: false, supervise: false, schedule: false });
  boss.on('error', (error) => options.log.error({ err: error }, 'job queue error'));
  await boss.start();
  const enqueue: JobQueue['enqueue'] = async (name, data, { trx, id, startAfter, priority } = {}) => {
    const jobId = await boss.send(name, data, {
      ...(trx ? { db: transactionExecutor(trx) as PgBoss.Db } : {}),
      ...(id ? { id } : {}),
      ...(startAfter !== undefined ? { startAfter } : {}),
      ...(priority !== undefined ? { priority } : {}),
    });
    // A job due now wakes this process's workers (after the commit, if any); one due within seconds wakes them when it
    // is due; a job due later is found by polling.
    if (jobId !== null) wakeWhenDue(name, startAfter, trx);
    return jobId;
  };
  const enqueueAll: JobQueue['enqueueAll'] = async (jobs, { trx } = {}) => {
    if (jobs.length === 0) return;
    if (jobs.length === 1) return void (await enqueue(jobs[0]!.queue, jobs[0]!.data, { trx }));
    await boss.insert(
      jobs.map(({ queue, data }) => ({ name: queue, data })),
      trx ? { db: transactionExecutor(trx) as PgBoss.Db } : {},
    );
    for (const { queue } of jobs) enqueued(queue, trx);
  };
  return {
    boss,
    enqueue,
    enqueueAll,
    send: (name, data, options) => enqueue(name, data as object, options),
    async close() {
      await boss.stop({ graceful: false, close: false });
      await executor.drain();
    },
  };
}
