/**
 * Every module's background work, gathered: jobs, domain-event subscriptions and worker loops, each declared by its
 * module in `<module>.jobs.ts`. The composition root owns this list, as it owns the list of services; a module adds
 * its declaration here and nothing else.
 */
import type { Static, TSchema } from 'typebox';
import type { Logger } from 'pino';
import type { Db } from './db/client.js';
import { gatherJobs, type ServicesFor, type WorkerServices } from './jobs/define.js';
import { startJobWorkers as startWorkers, type JobWorkers } from './jobs/workers.js';
import { domainEventsJobs } from './jobs/domain-events.jobs.js';
import { authJobs } from './modules/auth/auth.jobs.js';
import { auditJobs } from './modules/audit/audit.jobs.js';
import { callsJobs } from './modules/calls/calls.jobs.js';
import { numbersJobs } from './modules/numbers/numbers.jobs.js';
import { knowledgeJobs } from './modules/knowledge/knowledge.jobs.js';
import { webhooksJobs } from './modules/webhooks/webhooks.jobs.js';
import { campaignsJobs } from './modules/campaigns/campaigns.jobs.js';
import { contactsJobs } from './modules/contacts/contacts.jobs.js';

const declared = [
  authJobs,
  auditJobs,
  domainEventsJobs,
  callsJobs,
  numbersJobs,
  knowledgeJobs,
  webhooksJobs,
  campaignsJobs,
  contactsJobs,
] as const;

const gathered = gatherJobs(declared);
export const jobRegistry = gathered.registry;
export const eventRoutes = gathered.subscriptions;
export const workerLoops = gathered.loops;

/** The services the background work runs on: the composition root's services must satisfy it. */
export type BackgroundServices = ServicesFor<typeof declared> & WorkerServices;

type UnionToIntersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void ? I : never;
type DeclaredJobs = UnionToIntersection<(typeof declared)[number]['jobs']>;
type PayloadsOf<J> = { [N in keyof J & string]: J[N] extends { payload: infer S extends TSchema } ? Static<S> : never };

declare module './events/outbox.js' {
  /** Every declared job's payload, so `tx.send` and `jobs.send` are checked against the job's schema. */
  interface JobPayloads extends PayloadsOf<DeclaredJobs> {}
}

/** Starts the workers of every declared job, subscription and loop (the worker role). */
export function startJobWorkers(options: {
  db: Db;
  services: BackgroundServices;
  log: Logger;
  pollingIntervalSeconds?: number;
}): Promise<JobWorkers> {
  return startWorkers({ ...options, registry: jobRegistry, loops: workerLoops });
}
export type { JobWorkers };
