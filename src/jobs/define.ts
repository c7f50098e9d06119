/**
 * How a module declares its background work, in `<module>.jobs.ts`: jobs (a payload schema, a queue policy, an
 * optional schedule and a handler) and domain-event subscriptions. A handler receives its own module's service,
 * never the others. jobs/registry.ts only gathers the modules' declarations.
 */
import type { Static, TSchema } from 'typebox';
import { Type } from 'typebox';
import type { Logger } from 'pino';
import type { Services } from '../services.js';
import type { Config } from '../config.js';
import type { DomainEvent, DomainEventType } from '../events/domain-events.js';
import type { TxHandle } from '../db/repo.js';

export interface JobContext {
  /** Carries the job's name and id on every line. */
  log: Logger;
  jobId: string;
}

export interface JobBatch {
  size: number;
  parallel?: number | ((config: Config) => number);
}

/** Stored by pg-boss with the queue, so every producer and worker applies the same policy. */
export interface JobQueuePolicy {
  retryLimit?: number;
  /** Seconds before the first retry (doubled each time with retryBackoff). */
  retryDelay?: number;
  retryBackoff?: boolean;
  /** A handler still running after this long is failed (and retried). */
  expireInSeconds?: number;
  /** How long a job waits to be picked up before it is dropped. */
  retentionMinutes?: number;
}

export interface ModuleJob<S extends TSchema, Service> {
  /** Checked before the handler runs: a job whose payload does not match fails instead of running. */
  payload: S;
  /** Cron expression, in UTC: the worker role enqueues the job on this schedule. */
  schedule?: string;
  policy?: JobQueuePolicy;
  /** Handlers running at once per worker process (or read from the configuration); 1 unless the job is safe to overlap. */
  concurrency?: number | ((config: Config) => number);
  /** Also enqueued once whenever a worker process starts (a sweep of what a previous process left behind). */
  atStart?: boolean;
  /**
   * Jobs one worker takes per fetch (1 unless set). A worker fetches at most once per polling interval, so a short,
   * frequent job needs batches to keep up. A batch runs `parallel` jobs at a time (1: one after another, in queue
   * order; all of them unless set) and fails (is retried) whole, so the handler must be idempotent.
   */
  batch?: JobBatch;
  handle(payload: Static<S>, service: Service, context: JobContext): Promise<unknown>;
}

/**
 * A subscriber to domain events. Each event it applies to becomes one job on its own queue, enqueued in the
 * transaction that wrote the event. Delivery is at least once (a crash mid-handler retries it), so a handler
 * must be idempotent on `event.id`; the audit log, for one, keys its rows by it.
 */
export interface EventSubscription<Service> {
  events: readonly DomainEventType[] | 'all';
  policy?: JobQueuePolicy;
  concurrency?: number;
  /** As for jobs: events taken per fetch by one worker. */
  batch?: ModuleJob<TSchema, Service>['batch'];
  handle(event: DomainEvent, service: Service, context: JobContext): Promise<unknown>;
}

/**
 * A subscriber that acts inside the transaction that writes the event, so what it writes exists exactly when the
 * event does, with no job in between (webhook deliveries are the event's own outbox rows). Every event of its types
 * pays for it in its transaction: keep it to a read and a write of the subscriber's own tables, through `tx`.
 */
export interface TransactionSubscription<Service> {
  events: readonly DomainEventType[];
  handle(event: DomainEvent, service: Service, tx: TxHandle): Promise<unknown>;
}

export interface WorkerLoopContext {
  log: Logger;
  /** Aborted when the worker process stops: finish the work in hand and return. */
  signal: AbortSignal;
  /** Waits until this loop is woken (work was committed in this process), `ms` pass, or the process stops. */
  idle(ms: number): Promise<void>;
  /** How long an idle worker waits before it looks for work again (the job polling interval). */
  pollMs: number;
}

/**
 * A loop each worker process runs from start to stop, claiming its own work from its module's tables (a dispatcher
 * that takes hundreds of small tasks per statement, where a job per task would cost statements per task). Woken by
 * `wake(name)` after a commit, else it polls.
 */
export interface WorkerLoop<Service> {
  run(service: Service, context: WorkerLoopContext): Promise<void>;
}

/** What the worker runs: any job or subscription, with the module's service picked out of all of them. */
export interface RunnableJob {
  payload: TSchema;
  schedule?: string;
  policy?: JobQueuePolicy;
  concurrency?: number | ((config: Config) => number);
  atStart?: boolean;
  batch?: JobBatch;
  run(payload: unknown, services: Services, context: JobContext): Promise<unknown>;
}
export type JobRegistry = Record<string, RunnableJob>;

export type ModuleName = keyof Services;

/** Keeps a job's payload type tied to its handler's argument. */
export function defineJob<S extends TSchema, Service>(job: ModuleJob<S, Service>): ModuleJob<S, Service> {
  return job;
}

export interface ModuleJobs<M extends ModuleName, J extends Record<string, ModuleJob<TSchema, Services[M]>>> {
  module: M;
  jobs: J;
  subscriptions: Record<string, EventSubscription<Services[M]>>;
  inTransaction: Record<string, TransactionSubscription<Services[M]>>;
  loops: Record<string, WorkerLoop<Services[M]>>;
}

export function moduleJobs<M extends ModuleName, J extends Record<string, ModuleJob<any, Services[M]>>>(
  module: M,
  declared: {
    jobs?: J;
    subscriptions?: Record<string, EventSubscription<Services[M]>>;
    inTransaction?: Record<string, TransactionSubscription<Services[M]>>;
    loops?: Record<string, WorkerLoop<Services[M]>>;
  },
): ModuleJobs<M, J> {
  return {
    module,
    jobs: declared.jobs ?? ({} as J),
    subscriptions: declared.subscriptions ?? {},
    inTransaction: declared.inTransaction ?? {},
    loops: declared.loops ?? {},
  };
}

export const EventJobPayload = Type.Object(
  { eventId: Type.String({ format: 'uuid' }) },
  { additionalProperties: false },
);
