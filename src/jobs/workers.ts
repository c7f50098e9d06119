/**
 * The consumer side: in the worker role (`all` or `worker`) each registered job and subscription gets pg-boss workers,
 * its schedule, and queue maintenance (expiry, archiving). Stopping lets running handlers finish.
 */
import type PgBoss from 'pg-boss';
import { Value } from 'typebox/value';
import type { Logger } from 'pino';
import type { Db } from '../db/client.js';
import { createSqlExecutor } from './sql-executor.js';
import { connectPgBoss, ensureQueues } from './queue.js';
import type { JobRegistry, RunnableJob, RunnableLoop, WorkerServices } from './define.js';
import { addWaker } from '../lib/wake.js';
import { createWakeRotation } from './wake-rotation.js';

/** How often a queue's other workers (past its first) look for jobs nobody woke them for. */
const SIBLING_POLL_SECONDS = 30;

export interface JobWorkerOptions {
  db: Db;
  services: WorkerServices;
  log: Logger;
  registry: JobRegistry;
  loops: Readonly<Record<string, RunnableLoop>>;
  /** How often an idle worker looks for new jobs; pg-boss allows 0.5 s at the least. */
  pollingIntervalSeconds?: number;
}

export interface JobWorkers {
  /** Stops taking jobs and waits up to graceMs for running handlers; a job still running then is failed (and retried later). */
  stop(graceMs: number): Promise<void>;
}

function describePayloadErrors(definition: RunnableJob, payload: unknown) {
  return [...Value.Errors(definition.payload, payload)].map((e) => `${e.instancePath || '/'} ${e.message}`).join('; ');
}

export async function startJobWorkers(options: JobWorkerOptions): Promise<JobWorkers> {
  const { services, log } = options;
  const { registry, loops } = options;
  const executor = createSqlExecutor(options.db);
  // Maintenance (one instance at a time) fails jobs past their expiry, so work a dead process had taken is retried:
  // every 30 s instead of pg-boss's 2 minutes.
  const boss = connectPgBoss(executor, {
    migrate: false,
    supervise: true,
    schedule: true,
    maintenanceIntervalSeconds: 30,
  });
  boss.on('error', (error) => log.error({ err: error }, 'job worker error'));
  await boss.start();
  await ensureQueues(boss, registry);

  const running = new Set<Promise<unknown>>();
  const removeWakers: Array<() => void> = [];

  async function runJob(name: string, definition: RunnableJob, job: PgBoss.Job<unknown>) {
    const jobLog = log.child({ job: name, jobId: job.id });
    // A scheduled send carries no data; treat it as an empty payload.
    const payload = job.data ?? {};
    let handling: Promise<unknown> | undefined;
    try {
      if (!Value.Check(definition.payload, payload)) {
        throw new Error(`Payload of ${name} does not match its schema: ${describePayloadErrors(definition, payload)}`);
      }
      handling = definition.run(payload, services, { log: jobLog, jobId: job.id });
      running.add(handling);
      return await handling;
    } catch (error) {
      // pg-boss records the error on the job and retries it per the queue's policy.
      jobLog.error({ err: error }, 'job failed');
      throw error;
    } finally {
      if (handling) running.delete(handling);
    }
  }

  const polling = options.pollingIntervalSeconds ? { pollingIntervalSeconds: options.pollingIntervalSeconds } : {};
  // A queue's first worker polls; the others poll rarely, and are woken one at a time, one per job (each fetch costs
  // a statement, which the embedded database feels: 29 workers polling every 2 s cost a tenth of a core while idle).
  const siblingPolling = {
    pollingIntervalSeconds: Math.max(SIBLING_POLL_SECONDS, options.pollingIntervalSeconds ?? 0),
  };
  for (const [name, definition] of Object.entries(registry)) {
    const work = (job: PgBoss.Job<unknown>) => runJob(name, definition, job);
    const queue = { boss, name, definition, config: services.config, polling, siblingPolling, work };
    removeWakers.push(...(await startQueueWorkers(queue)));
    if (definition.schedule) await boss.schedule(name, definition.schedule, {}, { tz: 'UTC' });
  }
  // The registry decides what runs on a schedule: a job dropped from it (or its schedule) stops firing.
  for (const { name } of await boss.getSchedules()) {
    if (!registry[name]?.schedule) await boss.unschedule(name);
  }
  for (const [name, definition] of Object.entries(registry)) if (definition.atStart) await boss.send(name, {});
  const stopLoops = new AbortController();
  const loopsRunning = Object.entries(loops).map(([name, loop]) =>
    runLoop(name, loop, {
      services,
      log: log.child({ loop: name }),
      signal: stopLoops.signal,
      pollMs: (options.pollingIntervalSeconds ?? 2) * 1000,
    }),
  );
  // Counts in the start line (one line on a terminal); the names at debug.
  log.debug({ jobs: Object.keys(registry), loops: Object.keys(loops) }, 'job workers of these jobs and loops');
  log.info({ jobs: Object.keys(registry).length, loops: Object.keys(loops).length }, 'job workers started');

  return {
    async stop(graceMs) {
      const deadline = Date.now() + graceMs;
      for (const remove of removeWakers.splice(0)) remove();
      stopLoops.abort(new Error('the worker is stopping'));
      await settleBefore(loopsRunning, deadline);
      await boss.stop({ graceful: true, wait: true, timeout: graceMs });
      // pg-boss stops waiting once its fetch loop is idle; a job fetched just as it stopped may still be running.
      if (running.size > 0) await settleBefore([...running], deadline);
      await executor.close();
    },
  };
}

/** A queue's workers: `concurrency` of them, each fetching one job or a batch; answers the remover of their waker. */
async function startQueueWorkers(queue: {
  boss: PgBoss;
  name: string;
  definition: RunnableJob;
  config: WorkerServices['config'];
  polling: { pollingIntervalSeconds?: number };
  siblingPolling: { pollingIntervalSeconds: number };
  work(job: PgBoss.Job<unknown>): Promise<unknown>;
}): Promise<Array<() => void>> {
  const { boss, name, definition, config, work } = queue;
  const concurrency =
    typeof definition.concurrency === 'function' ? definition.concurrency(config) : (definition.concurrency ?? 1);
  const batchSize = definition.batch?.size ?? 1;
  const parallel =
    typeof definition.batch?.parallel === 'function'
      ? definition.batch.parallel(config)
      : (definition.batch?.parallel ?? batchSize);
  const workerIds: string[] = [];
  const rotation = createWakeRotation(concurrency, (i) => boss.notifyWorker(workerIds[i]!));
  // Jobs enqueued in this process wake one worker each; a worker that found work wakes one more, since more may be
  // waiting (enqueued by another process, or due now): a burst drains at full concurrency, one fetch per job or two.
  const run = async (i: number, jobs: PgBoss.Job<unknown>[]) => {
    if (jobs.length === 0) return;
    rotation.started(i);
    rotation.wake(1, i);
    try {
      if (batchSize <= 1) return await work(jobs[0]!);
      // A full batch suggests more are waiting: fetch again as soon as this one is done, not at the next poll.
      if (jobs.length >= batchSize) boss.notifyWorker(workerIds[i]!);
      await runBatch(jobs, parallel, work);
    } finally {
      rotation.finished(i);
    }
  };
  for (let i = 0; i < concurrency; i++) {
    const polling = i === 0 ? queue.polling : queue.siblingPolling;
    workerIds[i] = await boss.work<unknown>(name, { batchSize, ...polling }, (jobs) => run(i, jobs));
  }
  return [addWaker(name, (jobs) => rotation.wake(jobs))];
}

/** `parallel` lanes take the batch's jobs in queue order; a failure fails the batch once every job has run. */
async function runBatch(
  jobs: PgBoss.Job<unknown>[],
  parallel: number,
  work: (job: PgBoss.Job<unknown>) => Promise<unknown>,
) {
  let next = 0;
  let failure: { error: unknown } | undefined;
  const lane = async () => {
    while (next < jobs.length) {
      const job = jobs[next++]!;
      await work(job).catch((error: unknown) => void (failure ??= { error }));
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(parallel, jobs.length)) }, lane));
  if (failure) throw failure.error;
}

/** Runs a worker loop until the signal; an error (the database was away) is logged and the loop starts again. */
async function runLoop(
  name: string,
  loop: RunnableLoop,
  options: { services: WorkerServices; log: Logger; signal: AbortSignal; pollMs: number },
) {
  const { signal, log } = options;
  // A loop may idle in several places at once (a dispatcher's lanes): a wake-up wakes every one of them.
  const sleepers = new Set<() => void>();
  let woken = false;
  const removeWaker = addWaker(name, () => {
    if (sleepers.size === 0) woken = true;
    for (const wake of [...sleepers]) wake();
  });
  const idle = (ms: number) =>
    new Promise<void>((resolve) => {
      // A wake-up that came while the loop was busy counts: the work it announced may not have been seen.
      if (woken || signal.aborted) {
        woken = false;
        return resolve();
      }
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        sleepers.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal.addEventListener('abort', done);
      sleepers.add(done);
    });
  try {
    while (!signal.aborted) {
      try {
        await loop.run(options.services, { log, signal, idle, pollMs: options.pollMs });
      } catch (error) {
        if (signal.aborted) break;
        log.error({ err: error }, 'worker loop failed; starting it again');
        await idle(options.pollMs);
      }
    }
  } finally {
    removeWaker();
  }
}

async function settleBefore(promises: Promise<unknown>[], deadline: number) {
  let timer: NodeJS.Timeout | undefined;
  const timeUp = new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.max(0, deadline - Date.now()))));
  await Promise.race([Promise.allSettled(promises), timeUp]);
  clearTimeout(timer);
}
