/**
 * Every background job and domain-event subscription of the service, gathered from the modules' `<module>.jobs.ts`.
 * Nothing here is written per job: a module adds its declaration to the list below and nothing else.
 */
import type { Static } from 'typebox';
import { Value } from 'typebox/value';
import { authJobs } from '../modules/auth/auth.jobs.js';
import { auditJobs } from '../modules/audit/audit.jobs.js';
import { domainEventsJobs } from '../events/domain-events.jobs.js';
import { callsJobs } from '../modules/calls/calls.jobs.js';
import { numbersJobs } from '../modules/numbers/numbers.jobs.js';
import { knowledgeJobs } from '../modules/knowledge/knowledge.jobs.js';
import { webhooksJobs } from '../modules/webhooks/webhooks.jobs.js';
import { campaignsJobs } from '../modules/campaigns/campaigns.jobs.js';
import type { DomainEvent, DomainEventType } from '../events/domain-events.js';
import type { TxHandle } from '../db/repo.js';
import type { Services } from '../services.js';
import { EventJobPayload, type JobRegistry, type WorkerLoopContext } from './define.js';

const declared = [
  authJobs,
  auditJobs,
  domainEventsJobs,
  callsJobs,
  numbersJobs,
  knowledgeJobs,
  webhooksJobs,
  campaignsJobs,
] as const;

type UnionToIntersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void ? I : never;
type AllJobs = UnionToIntersection<(typeof declared)[number]['jobs']>;
export type JobName = keyof AllJobs & string;
export type JobPayload<N extends JobName> = AllJobs[N] extends { payload: infer S } ? Static<S & object> : never;

/** Where each subscription's jobs go, and which events it takes: what the outbox needs to fan an event out. */
export interface SubscriptionRoute {
  queue: string;
  events: readonly DomainEventType[] | 'all';
}

/** A subscriber the outbox runs inside the event's transaction. */
export interface TransactionSubscriber {
  name: string;
  events: readonly DomainEventType[];
  run(event: DomainEvent, services: Services, tx: TxHandle): Promise<unknown>;
}

export interface RunnableLoop {
  run(services: Services, context: WorkerLoopContext): Promise<void>;
}

function gather(modules: typeof declared) {
  const registry: JobRegistry = {};
  const subscriptions: SubscriptionRoute[] = [];
  const transactionSubscribers: TransactionSubscriber[] = [];
  const loops: Record<string, RunnableLoop> = {};
  for (const { module, jobs, subscriptions: subscribed, inTransaction, loops: declaredLoops } of modules) {
    for (const [name, subscription] of Object.entries(inTransaction)) {
      transactionSubscribers.push({
        name,
        events: subscription.events,
        run: (event, services, tx) => subscription.handle(event, services[module] as never, tx),
      });
    }
    for (const [name, loop] of Object.entries(declaredLoops)) {
      if (loops[name] || registry[name]) throw new Error(`Worker loop ${name} is declared twice`);
      loops[name] = { run: (services, context) => loop.run(services[module] as never, context) };
    }
    for (const [name, job] of Object.entries(jobs)) {
      if (registry[name]) throw new Error(`Job ${name} is declared twice`);
      registry[name] = {
        ...job,
        run: (payload, services, context) => job.handle(payload as never, services[module] as never, context),
      };
    }
    for (const [name, subscription] of Object.entries(subscribed)) {
      if (registry[name]) throw new Error(`Job ${name} is declared twice`);
      subscriptions.push({ queue: name, events: subscription.events });
      registry[name] = {
        payload: EventJobPayload,
        policy: { retryLimit: 5, retryDelay: 10, retryBackoff: true, ...subscription.policy },
        concurrency: subscription.concurrency,
        ...(subscription.batch ? { batch: subscription.batch } : {}),
        async run(payload, services, context) {
          const { eventId } = Value.Parse(EventJobPayload, payload);
          const event = await services.events.find(eventId);
          // Pruned by retention before it was delivered: nothing left to deliver.
          if (!event) return { skipped: 'event no longer stored' };
          return subscription.handle(event, services[module] as never, context);
        },
      };
    }
  }
  return { registry, subscriptions, transactionSubscribers, loops };
}

const gathered = gather(declared);
export const jobRegistry: JobRegistry = gathered.registry;
export const eventSubscriptions: readonly SubscriptionRoute[] = gathered.subscriptions;
export const transactionSubscribers: readonly TransactionSubscriber[] = gathered.transactionSubscribers;
export const workerLoops: Readonly<Record<string, RunnableLoop>> = gathered.loops;
export type { JobRegistry };
