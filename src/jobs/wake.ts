/**
 * Wakes this process's idle workers of a queue as soon as a job is enqueued, instead of at their next poll
 * (pg-boss polls at most every 0.5 s; 2 s by default). A job enqueued inside a transaction wakes them once the
 * transaction commits, so the fetch sees it. Workers of other processes still find the job at their next poll.
 */
const wakersByQueue = new Map<string, Set<() => void>>();
const queuesByTransaction = new WeakMap<object, Set<string>>();

/** Registers a worker's wake-up for a queue; answers the function that removes it. */
export function addWaker(queue: string, wake: () => void): () => void {
  let wakers = wakersByQueue.get(queue);
  if (!wakers) wakersByQueue.set(queue, (wakers = new Set()));
  wakers.add(wake);
  return () => void wakers.delete(wake);
}

function wakeQueue(queue: string) {
  for (const wake of wakersByQueue.get(queue) ?? []) wake();
}

/** A job was enqueued (or work for a worker loop written): wake its workers now, or when `transaction` commits. */
export function enqueued(queue: string, transaction?: object) {
  if (!wakersByQueue.get(queue)?.size) return;
  if (!transaction) return wakeQueue(queue);
  let queues = queuesByTransaction.get(transaction);
  if (!queues) queuesByTransaction.set(transaction, (queues = new Set()));
  queues.add(queue);
}

/** The transaction committed: wake the workers of every queue it enqueued to. */
export function committed(transaction: object) {
  const queues = queuesByTransaction.get(transaction);
  if (!queues) return;
  queuesByTransaction.delete(transaction);
  for (const queue of queues) wakeQueue(queue);
}

/** Work for a worker loop (named like a queue) was written in `transaction`: wake the loop once it commits. */
export const workAdded = (loop: string, transaction: object) => enqueued(loop, transaction);
