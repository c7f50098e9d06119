/**
 * At most `limit` of the functions passed run at once, across all callers. The waiting ones are in groups that take
 * turns: a place that frees goes to the next group in rotation, each group's work in its own order, so a group with
 * much work waiting cannot keep the others waiting behind it.
 */
export function createFairLimiter(limit: number) {
  let running = 0;
  // Insertion order is the rotation: a group that is served goes to the back if it still has work waiting.
  const waiting = new Map<string, Array<() => void>>();
  const handOn = () => {
    const first = waiting.entries().next();
    if (first.done) {
      running--;
      return;
    }
    const [group, queue] = first.value;
    const next = queue.shift()!;
    waiting.delete(group);
    if (queue.length > 0) waiting.set(group, queue);
    next();
  };
  return async function run<R>(group: string, work: () => Promise<R>): Promise<R> {
    if (running >= limit) {
      await new Promise<void>((resolve) => {
        const queue = waiting.get(group);
        if (queue) queue.push(resolve);
        else waiting.set(group, [resolve]);
      });
    } else running++;
    try {
      return await work();
    } finally {
      handOn();
    }
  };
}

export type FairLimiter = ReturnType<typeof createFairLimiter>;
