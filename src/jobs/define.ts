/**
 * How a module declares its background work, in `<module>.jobs.ts`: jobs (a payload schema, a queue policy, an
 * optional schedule and a handler), domain-event subscriptions and worker loops. A handler receives its own module's
 * service, never the others. The composition root lists the modules' declarations (src/background.ts) and
 * `gatherJobs` turns them into what the queue and the workers run; nothing here knows any module.
 */
import type { Static, TSchema } from 'typebox';
import { Type } from 'typebox';
import { Value } from 'typebox/value';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { DomainEvent, DomainEventType } from '../events/domain-events.js';

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
export interface EventSubscription<Service, E extends DomainEventType = DomainEventType> {
  /** The event types it takes (its handler receives exactly those), or all of them. */
  events: readonly E[] | 'all';
  policy?: JobQueuePolicy;
  concurrency?: number;
  /** As for jobs: events taken per fetch by one worker. */
  batch?: ModuleJob<TSchema, Service>['batch'];
  handle(event: DomainEvent<E>, service: Service, context: JobContext): Promise<unknown>;
}

/** Each subscription's event types, by subscription name: what its handler's event is narrowed to. */
type Subscriptions<Service, S extends Record<string, DomainEventType>> = {
  [K in keyof S]: EventSubscription<Service, S[K]>;
};

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

/**
 * The services the workers run on, as the composition root built them: each module's service under its module's
 * name, plus the configuration and the domain events (a subscription's job carries only the event's id).
 */
export interface WorkerServices {
  readonly config: Config;
  readonly events: { find(id: string): Promise<DomainEvent | undefined> };
}

/** What the worker runs: any job or subscription, with the module's service picked out of all of them. */
export interface RunnableJob {
  payload: TSchema;
  schedule?: string;
  policy?: JobQueuePolicy;
  concurrency?: number | ((config: Config) => number);
  atStart?: boolean;
  batch?: JobBatch;
  run(payload: unknown, services: WorkerServices, context: JobContext): Promise<unknown>;
}
export type JobRegistry = Record<string, RunnableJob>;

export interface RunnableLoop {
  run(services: WorkerServices, context: WorkerLoopContext): Promise<void>;
}

/** Where each subscription's jobs go, and which events it takes: what the outbox needs to fan an event out. */
export interface SubscriptionRoute {
  queue: string;
  events: readonly DomainEventType[] | 'all';
}

/** Keeps a job's payload type tied to its handler's argument. */
export function defineJob<S extends TSchema, Service>(job: ModuleJob<S, Service>): ModuleJob<S, Service> {
  return job;
}

export interface ModuleJobs<M extends string, Service, J extends Record<string, ModuleJob<TSchema, Service>>> {
  module: M;
  jobs: J;
  subscriptions: Record<string, EventSubscription<Service, any>>;
  loops: Record<string, WorkerLoop<Service>>;
  /** Only a type: the service the handlers take, which the root checks against the service it builds under `module`. */
  readonly service?: Service;
}

/** A module's background work, under the name its service has in the composition root. */
export function moduleJobs<
  M extends string,
  Service,
  J extends Record<string, ModuleJob<any, Service>>,
  S extends Record<string, DomainEventType> = Record<never, DomainEventType>,
>(
  module: M,
  declared: {
    jobs?: J;
    subscriptions?: Subscriptions<Service, S>;
    loops?: Record<string, WorkerLoop<Service>>;
  },
): ModuleJobs<M, Service, J> {
  return {
    module,
    jobs: declared.jobs ?? ({} as J),
    subscriptions: (declared.subscriptions ?? {}) as Record<string, EventSubscription<Service, any>>,
    loops: declared.loops ?? {},
  };
}

export const EventJobPayload = Type.Object(
  { eventId: Type.String({ format: 'uuid' }) },
  { additionalProperties: false },
);

/** Any module's declaration, as `gatherJobs` reads it. */
type AnyModuleJobs = ModuleJobs<string, any, Record<string, ModuleJob<any, any>>>;

/** The modules' declarations as the queue, the outbox and the workers use them. A name declared twice is an error. */
export function gatherJobs(modules: readonly AnyModuleJobs[]) {
  const registry: JobRegistry = {};
  const subscriptions: SubscriptionRoute[] = [];
  const loops: Record<string, RunnableLoop> = {};
  const serviceOf = (services: WorkerServices, module: string) =>
    (services as unknown as Record<string, never>)[module];
  const claim = (name: string) => {
    if (registry[name] || loops[name]) throw new Error(`Job ${name} is declared twice`);
  };
  for (const { module, jobs, subscriptions: subscribed, loops: declaredLoops } of modules) {
    for (const [name, loop] of Object.entries(declaredLoops)) {
      claim(name);
      loops[name] = { run: (services, context) => loop.run(serviceOf(services, module), context) };
    }
    for (const [name, job] of Object.entries(jobs)) {
      claim(name);
      registry[name] = {
        ...job,
        run: (payload, services, context) => job.handle(payload, serviceOf(services, module), context),
      };
    }
    for (const [name, subscription] of Object.entries(subscribed)) {
      claim(name);
      subscriptions.push({ queue: name, events: subscription.events });
      registry[name] = {
        payload: EventJobPayload,
        // A handler is a few statements: a job still active after two minutes was taken by a process that died, and
        // is retried then rather than after pg-boss's default quarter of an hour (handlers are idempotent).
        policy: { retryLimit: 5, retryDelay: 10, retryBackoff: true, expireInSeconds: 120, ...subscription.policy },
        concurrency: subscription.concurrency,
        ...(subscription.batch ? { batch: subscription.batch } : {}),
        async run(payload, services, context) {
          const { eventId } = Value.Parse(EventJobPayload, payload);
          const event = await services.events.find(eventId);
          // Pruned by retention before it was delivered: nothing left to deliver.
          if (!event) return { skipped: 'event no longer stored' };
          return subscription.handle(event, serviceOf(services, module), context);
        },
      };
    }
  }
  return { registry, subscriptions, loops };
}

/**
 * The service each declared module's handlers take, by module name: the root's services must be assignable to it
 * (`services satisfies ServicesFor<typeof declared>`), which ties a declaration's name to the service built under it.
 */
export type ServicesFor<T extends readonly AnyModuleJobs[]> = {
  [K in T[number] as K['module']]: NonNullable<K['service']>;
};
