/**
 * Wakes this process's workers of a queue as soon as a job is enqueued, instead of at their next poll (pg-boss polls
 * at most every 0.5 s; 2 s by default): the queue's waker learns how many jobs came and wakes one worker for each. A
 * job enqueued inside a transaction wakes them once the transaction commits, so the fetch sees it. Workers of other
 * processes find a job at their next poll; work for a worker loop also wakes the loop in every other process, through
 * the broadcast (`relayLoopWakes`).
 */
import { randomUUID } from 'node:crypto';
import type { Broadcast } from '../lib/broadcast.js';

/** Called with how many jobs were enqueued (a worker loop may ignore it: it looks for all of its work at once). */
export type Waker = (jobs: number) => void;

const wakersByQueue = new Map<string, Set<Waker>>();
const queuesByTransaction = new WeakMap<object, Map<string, number>>();

/** Registers a wake-up for a queue; answers the function that removes it. */
export function addWaker(queue: string, wake: Waker): () => void {
  let wakers = wakersByQueue.get(queue);
  if (!wakers) wakersByQueue.set(queue, (wakers = new Set()));
  wakers.add(wake);
  return () => void wakers.delete(wake);
}

function wakeQueue(queue: string, jobs = 1) {
  for (const wake of wakersByQueue.get(queue) ?? []) wake(jobs);
}

/** A job was enqueued (or work for a worker loop written): wake its workers now, or when `transaction` commits. */
export function enqueued(queue: string, transaction?: object) {
  if (!wakersByQueue.get(queue)?.size) return;
  if (!transaction) return wakeQueue(queue);
  let queues = queuesByTransaction.get(transaction);
  if (!queues) queuesByTransaction.set(transaction, (queues = new Map()));
  queues.set(queue, (queues.get(queue) ?? 0) + 1);
}

/** The transaction committed: wake the workers of every queue it enqueued to, and the loops it added work for. */
export function committed(transaction: object) {
  const loops = loopsByTransaction.get(transaction);
  if (loops) {
    loopsByTransaction.delete(transaction);
    for (const loop of loops) relay?.(loop);
  }
  const queues = queuesByTransaction.get(transaction);
  if (!queues) return;
  queuesByTransaction.delete(transaction);
  for (const [queue, jobs] of queues) wakeQueue(queue, jobs);
}

const loopsByTransaction = new WeakMap<object, Set<string>>();
const LOOP_WAKE_TOPIC = 'worker-loops.wake';
const thisProcess = randomUUID();
let relay: ((loop: string) => void) | undefined;

/** Work for a worker loop (named like a queue) was written in `transaction`: wake the loop everywhere once it commits. */
export function workAdded(loop: string, transaction: object) {
  enqueued(loop, transaction);
  if (!relay) return;
  let loops = loopsByTransaction.get(transaction);
  if (!loops) loopsByTransaction.set(transaction, (loops = new Set()));
  loops.add(loop);
}

/**
 * Carries worker-loop wake-ups between the processes of a deployment (an API process writes a delivery, a worker
 * process sends it). Best effort: a lost message only means the loop finds the work at its next poll. Nothing to
 * carry when one process is every instance.
 */
export function relayLoopWakes(broadcast: Broadcast) {
  if (broadcast.transport === 'local') return;
  broadcast.subscribe(LOOP_WAKE_TOPIC, (message) => {
    if (message.from !== thisProcess && typeof message.loop === 'string') wakeQueue(message.loop);
  });
  relay = (loop) => void broadcast.publish(LOOP_WAKE_TOPIC, { loop, from: thisProcess }).catch(() => undefined);
}
