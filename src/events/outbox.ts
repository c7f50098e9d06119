/**
 * The outbox: what a transaction can cause besides its own writes (a job, a domain event), all written on the
 * transaction, so each exists exactly when the change commits. Also the subscribers that act inside the event's
 * own transaction.
 */
import type { Kysely } from 'kysely';
import { beforeCommit, type Executor, type TxHandle } from '../db/repo.js';
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
  /** These jobs, in one statement (domain events' subscribers). */
  enqueueAll(jobs: ReadonlyArray<{ queue: string; data: object }>, options?: Pick<SendOptions, 'trx'>): Promise<void>;
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
  /**
   * The same for several events of one transaction (in the order they were emitted), in a few statements for all of
   * them. An event whose in-transaction subscribers all have it is written with the transaction's others just before
   * it commits; one with a subscriber without it is written when emitted (what the subscriber writes is then there).
   */
  runAll?(events: readonly DomainEvent[], tx: TxHandle): Promise<unknown>;
}

/** Which queue takes which events: one job per subscribed queue for each event. */
export interface EventRoute {
  queue: string;
  events: readonly DomainEventType[] | 'all';
}

/** Events gathered in a transaction are written once this many wait, whether or not it is about to commit. */
const GATHERED_AT_MOST = 500;

/**
 * `send` enqueues a job and `emit` records a domain event, enqueues one job per subscriber that wants it and runs
 * the subscribers that act in the transaction itself. In a transaction `inTransaction` opened, events are gathered
 * and written together just before it commits: one statement for the events, one for their jobs and a few per
 * subscriber, whatever their number (see TransactionSubscriber.runAll).
 */
export function createOutboxFactory(deps: {
  jobs: OutboxQueue;
  routes: readonly EventRoute[];
  clock: Clock;
  inTransaction: readonly TransactionSubscriber[];
}): OutboxFactory {
  const { jobs, routes, clock, inTransaction } = deps;
  // By event type: its subscribers' queues, those acting in the transaction, and whether its writes can wait.
  const plans = new Map<DomainEventType, { queues: string[]; acting: TransactionSubscriber[]; gathered: boolean }>();
  const planOf = (type: DomainEventType) => {
    let plan = plans.get(type);
    if (!plan) {
      const queues = routes.filter(({ events }) => events === 'all' || events.includes(type)).map(({ queue }) => queue);
      const acting = inTransaction.filter((subscriber) => subscriber.events.includes(type));
      plans.set(type, (plan = { queues, acting, gathered: acting.every((subscriber) => subscriber.runAll) }));
    }
    return plan;
  };
  // Each open transaction's events not written yet, in the order they were emitted.
  const gatheredBy = new WeakMap<object, DomainEvent[]>();

  /** Writes the events gathered in `trx` so far: the events, their jobs, then each subscriber's part. */
  async function writeGathered(trx: Executor) {
    const events = gatheredBy.get(trx);
    if (!events?.length) return;
    gatheredBy.set(trx, []);
    await domainEventQueries(trx).insertAll(events);
    await jobs.enqueueAll(
      events.flatMap((event) => planOf(event.type).queues.map((queue) => ({ queue, data: { eventId: event.id } }))),
      { trx },
    );
    for (const subscriber of inTransaction) {
      const theirs = events.filter((event) => subscriber.events.includes(event.type));
      if (theirs.length > 0) await subscriber.runAll!(theirs, { trx });
    }
  }

  /** Whether the event waits to be written with the transaction's others (false: write it now). */
  function gather(trx: Executor, event: DomainEvent) {
    if (!planOf(event.type).gathered) return false;
    let events = gatheredBy.get(trx);
    if (!events) {
      const written = async () => {
        await writeGathered(trx);
        gatheredBy.delete(trx);
      };
      if (!beforeCommit(trx, written)) return false;
      gatheredBy.set(trx, (events = []));
    }
    events.push(event);
    return true;
  }

  return (trx): Outbox => ({
    send: (name, data, options) => jobs.enqueue(name, data as object, { ...options, trx }),
    async emit(input) {
      const event = { ...input, data: input.data ?? {}, id: newId(), occurredAt: clock.now() } as DomainEvent;
      if (gather(trx, event)) {
        if (gatheredBy.get(trx)!.length >= GATHERED_AT_MOST) await writeGathered(trx);
        return event;
      }
      // Written now, after those gathered before it, so events keep the order they happened in.
      await writeGathered(trx);
      const plan = planOf(event.type);
      await domainEventQueries(trx).insert(event);
      await jobs.enqueueAll(
        plan.queues.map((queue) => ({ queue, data: { eventId: event.id } })),
        { trx },
      );
      for (const subscriber of plan.acting) await subscriber.run(event, { trx });
      return event;
    },
  });
}
