/**
 * Every background job the service runs: its name, the shape of its payload, its queue policy,
 * an optional schedule and the handler. Adding a job is one entry here; the producer creates its
 * queue at start, and only processes in the worker role (`all` or `worker`) run the handlers.
 */
import { Type, type Static, type TSchema } from 'typebox';
import type { Logger } from 'pino';
import type { Services } from '../services.js';

export interface JobContext {
  services: Services;
  /** Carries the job's name and id on every line. */
  log: Logger;
  jobId: string;
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

export interface JobDefinition<S extends TSchema = TSchema> {
  /** Checked before the handler runs: a job whose payload does not match fails instead of running. */
  payload: S;
  /** Cron expression, in UTC: the worker role enqueues the job on this schedule. */
  schedule?: string;
  policy?: JobQueuePolicy;
  /** Handlers running at once per worker process; 1 unless the job is safe to overlap. */
  concurrency?: number;
  handle(payload: Static<S>, context: JobContext): Promise<unknown>;
}

/** Keeps each entry's payload type tied to its handler's argument. */
function defineJob<S extends TSchema>(definition: JobDefinition<S>): JobDefinition<S> {
  return definition;
}

const NoPayload = Type.Object({}, { additionalProperties: false });

export const jobRegistry = {
  'sessions.purge': defineJob({
    payload: NoPayload,
    schedule: '0 * * * *',
    policy: { retryLimit: 2, retryDelay: 60, expireInSeconds: 600 },
    async handle(_payload, { services, log }): Promise<{ deleted: number }> {
      const deleted = await services.auth.purgeDeadSessions();
      log.info({ deleted }, 'purged dead sessions');
      return { deleted };
    },
  }),
};

export type JobRegistry = Record<string, JobDefinition>;
export type JobName = keyof typeof jobRegistry;
export type JobPayload<N extends JobName> = Static<(typeof jobRegistry)[N]['payload']>;
