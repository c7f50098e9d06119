/**
 * How many job fetches the workers make per job, counted on the SQL they send, on whichever storage the run uses
 * (PGlite by default, PostgreSQL when DATABASE_URL is set). Each fetch is a statement; waking every idle worker for
 * each job enqueued would cost one fetch per worker per job.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import type { CompiledQuery } from 'kysely';
import { Type } from 'typebox';
import { pino } from 'pino';
import { createTestDatabase, type TestDatabase } from '../../test/helpers.js';
import { openDatabase, type Db, type DatabaseHandle } from '../db/client.js';
import { inTransaction } from '../db/repo.js';
import type { JobRegistry, WorkerServices } from './define.js';
import { openJobQueue, type JobQueue } from './queue.js';
import { startJobWorkers, type JobWorkers } from './workers.js';

const log = pino({ level: 'silent' });
const WORKERS = 20;
const QUEUE = 'test.counted';

let database: TestDatabase;
let handle: DatabaseHandle;
let jobs: JobQueue;
/** The gate every handler waits at; `open()` lets the waiting ones (and every later one) through. */
let gate = openGate();
const running = { now: 0, peak: 0, done: 0 };

function openGate() {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

const registry: JobRegistry = {
  [QUEUE]: {
    payload: Type.Object({}),
    policy: { retryLimit: 0 },
    concurrency: () => WORKERS,
    async run() {
      running.peak = Math.max(running.peak, ++running.now);
      try {
        await gate.promise;
      } finally {
        running.now--;
        running.done++;
      }
    },
  },
};

/** The database as the workers see it, counting pg-boss's fetches from QUEUE (its job-claiming statement). */
function countingFetches(db: Db) {
  const counter = { fetches: 0 };
  const counted = new Proxy(db, {
    get(target, property) {
      if (property === 'executeQuery') {
        return (query: CompiledQuery) => {
          if (query.sql.includes('FOR UPDATE SKIP LOCKED') && query.parameters[0] === QUEUE) counter.fetches++;
          return target.executeQuery(query);
        };
      }
      const value = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { db: counted, counter };
}

before(async () => {
  database = await createTestDatabase({ from: 'template' });
  handle = await openDatabase({
    databaseUrl: database.url,
    dataDir: ':memory:',
    restoreFrom: database.restoreFrom ?? undefined,
  });
  jobs = await openJobQueue(handle.db, { log, registry });
});
after(async () => {
  await jobs.close();
  await handle.close();
  await database.drop();
});

/** Starts the workers on a counting database; answers them once each has made its first fetch. */
async function startCounted(pollingIntervalSeconds: number) {
  const { db, counter } = countingFetches(handle.db);
  const workers = await startJobWorkers({
    db,
    services: {} as WorkerServices,
    log,
    registry,
    loops: {},
    pollingIntervalSeconds,
  });
  await waitFor(() => counter.fetches >= WORKERS, 'every worker made its first fetch');
  await sleep(100);
  counter.fetches = 0;
  return { workers, counter };
}

async function waitFor(condition: () => boolean, what: string) {
  for (let i = 0; i < 600 && !condition(); i++) await sleep(50);
  assert.ok(condition(), `timed out waiting until ${what}`);
}

async function stopped(workers: JobWorkers) {
  gate.open();
  await workers.stop(10_000);
  gate = openGate();
  Object.assign(running, { now: 0, peak: 0, done: 0 });
}

test('a job enqueued in this process costs one fetch or two, not one per worker', async (t) => {
  gate.open();
  // The first worker polls rarely here, so what is counted is what the wake-ups cost.
  const { workers, counter } = await startCounted(60);
  try {
    const sent = 15;
    for (let i = 0; i < sent; i++) {
      assert.ok(await jobs.enqueue(QUEUE, {}));
      await waitFor(() => running.done === i + 1, `job ${i + 1} ran`);
      // The worker that took it woke one more, which finds nothing: let its fetch be counted before the next job.
      await sleep(20);
    }
    const perJob = counter.fetches / sent;
    assert.ok(perJob <= 3, `${counter.fetches} fetches for ${sent} jobs with ${WORKERS} workers`);
    // With every worker woken for each job, this was about WORKERS.
    t.diagnostic(`fetches per job: ${perJob.toFixed(2)} (${WORKERS} workers)`);
  } finally {
    await stopped(workers);
  }
});

test('jobs enqueued together in one transaction start at once, one fetch or two each', async (t) => {
  const { workers, counter } = await startCounted(60);
  try {
    await inTransaction(handle.db, async (trx) => {
      for (let i = 0; i < WORKERS; i++) await jobs.enqueue(QUEUE, {}, { trx });
    });
    await waitFor(() => running.now === WORKERS, `${WORKERS} jobs ran at once`);
    assert.equal(running.peak, WORKERS);
    const fetches = counter.fetches;
    assert.ok(fetches <= 3 * WORKERS, `${fetches} fetches for ${WORKERS} jobs`);
    t.diagnostic(`fetches per job in a burst: ${(fetches / WORKERS).toFixed(2)}`);
  } finally {
    await stopped(workers);
  }
});

test('a burst enqueued elsewhere (no wake-up here) is found by the poll and drains at full concurrency', async (t) => {
  const { workers, counter } = await startCounted(0.5);
  try {
    // As another process would: straight into the queue, waking nobody here.
    await jobs.boss.insert(Array.from({ length: WORKERS }, () => ({ name: QUEUE, data: {} })));
    await waitFor(() => running.now === WORKERS, `${WORKERS} jobs ran at once`);
    assert.equal(running.peak, WORKERS);
    t.diagnostic(`fetches for a burst of ${WORKERS} found by polling: ${counter.fetches}`);
  } finally {
    await stopped(workers);
  }
});
