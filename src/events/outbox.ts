/**
 * The outbox: what a transaction can cause besides its own writes (a job, a domain event), all written on the
 * transaction, so each exists exactly when the change commits. Also the subscribers that act inside the event's
 * own transaction.
 */
import type { Kysely } from 'kysely';
import type { Executor, TxHandle } from '../db/repo.js';
import type { Database } from '../db/types.js';
import type { Clock } from '../lib/clock.js';
import { newId } from '../lib/ids.js';
import type { DomainEvent, DomainEventInput, DomainEventType } from './domain-events.js';
import { domainEventQueries } from './domain-events.repo.js';

/**
 * Each job's payload, by job name. Empty here: the composition root adds every module's jobs to it (declaration
 * merging), so `tx.send(name, payload)` is checked against the job's schema without this file knowing any module.
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled in by declaration merging
export interface JobPayloads {}
export type JobName = keyof JobPayloads & string;

export interface SendOptions {
  /**
   * Enqueue inside this transaction, so the queue doubles as an outbox: the job exists if and only if
   * the write that caused it commits.
   */
  trx?: Kysely<Database>;
  /** A fixed job id: sending the same id twice enqueues once (the second send answers null). */
  id?: string;
  /** Run no earlier than this time, or this many seconds from now. */
  startAfter?: Date | number;
  priority?: number;
}

/** What the outbox needs of the job queue. */
export interface OutboxQueue {
  enqueue(queue: string, data: object, options?: SendOptions): Promise<string | null>;
  /** One job with the same data on each of these queues, in one statement (a domain event's subscribers). */
  enqueueAll(queues: readonly string[], data: object, options?: Pick<SendOptions, 'trx'>): Promise<void>;
}

/** What a transaction can cause besides its own writes; nothing of it happens unless the transaction commits. */
export interface Outbox {
  send<N extends JobName>(name: N, data: JobPayloads[N], options?: Omit<SendOptions, 'trx'>): Promise<string | null>;
  emit(event: DomainEventInput): Promise<DomainEvent>;
}

export type OutboxFactory = (trx: Executor) => Outbox;

/** A module's queries inside a transaction, with the outbox (`createRepo(db, outbox, queries).transaction`). */
export type Tx<Q> = Q & Outbox & TxHandle;

/**
 * A subscriber that acts inside the transaction that writes the event, so what it writes exists exactly when the
 * event does (webhook deliveries are the event's own outbox rows). It is built by the composition root before any
 * service, from configuration and its module's queries, so the outbox can hold it from the start. Every event of
 * its types pays for it in its transaction: keep it to a read and a write of the subscriber's own tables, on `tx`.
 */
export interface TransactionSubscriber {
  name: string;
  events: readonly DomainEventType[];
  run(event: DomainEvent, tx: TxHandle): Promise<unknown>;
}

/** Which queue takes which events: one job per subscribed queue for each event. */
export interface EventRoute {
  queue: string;
  events: readonly DomainEventType[] | 'all';
}

/**
 * `send` enqueues a job and `emit` records a domain event, enqueues one job per subscriber that wants it and runs
 * the subscribers that act in the transaction itself.
 */
export function createOutboxFactory(deps: {
  jobs: OutboxQueue;
  routes: readonly EventRoute[];
  clock: Clock;
  inTransaction: readonly TransactionSubscriber[];
}): OutboxFactory {
  const { jobs, routes, clock, inTransaction } = deps;
  return (trx): Outbox => ({
    send: (name, data, options) => jobs.enqueue(name, data as object, { ...options, trx }),
    async emit(input) {
      const event = { ...input, data: input.data ?? {}, id: newId(), occurredAt: clock.now() } as DomainEvent;
      await domainEventQueries(trx).insert(event);
      // One statement for all of the event's subscribers: an event's cost grows with its statements, not its readers.
      const queues = routes
        .filter(({ events }) => events === 'all' || events.includes(event.type))
        .map(({ queue }) => queue);
      await jobs.enqueueAll(queues, { eventId: event.id }, { trx });
      for (const subscriber of inTransaction) {
        if (subscriber.events.includes(event.type)) await subscriber.run(event, { trx });
      }
      return event;
    },
  });
}
