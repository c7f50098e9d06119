/**
 * At most `limit` of the functions passed run at once, across all callers, in groups that share the places fairly.
 * A place that frees goes to the next group in rotation that runs fewer than its share (the limit divided among the
 * groups running or waiting), each group's work in its own order; a group over its share gets a place only when no
 * other group waits. One group never holds every place (unless the limit is one): work of another group that comes
 * later starts at once, however slow the work holding the other places.
 */
export function createFairLimiter(limit: number) {
  const runningIn = new Map<string, number>();
  let running = 0;
  // Insertion order is the rotation: a group that is served goes to the back if it still has work waiting.
  const waiting = new Map<string, Array<() => void>>();
  const start = (group: string) => {
    running++;
    runningIn.set(group, (runningIn.get(group) ?? 0) + 1);
  };
  const groupLimit = Math.max(1, limit - 1);
  const mayStart = (group: string) => (runningIn.get(group) ?? 0) < groupLimit;
  const handOn = (group: string) => {
    running--;
    const left = runningIn.get(group)! - 1;
    if (left === 0) runningIn.delete(group);
    else runningIn.set(group, left);
    if (waiting.size === 0) return;
    const groups = new Set([...runningIn.keys(), ...waiting.keys()]).size;
    const share = Math.ceil(limit / groups);
    let chosen: string | undefined;
    for (const candidate of waiting.keys()) {
      if ((runningIn.get(candidate) ?? 0) < share && mayStart(candidate)) {
        chosen = candidate;
        break;
      }
    }
    chosen ??= [...waiting.keys()].find(mayStart);
    if (chosen === undefined) return;
    const queue = waiting.get(chosen)!;
    const next = queue.shift()!;
    waiting.delete(chosen);
    if (queue.length > 0) waiting.set(chosen, queue);
    start(chosen);
    next();
  };
  return async function run<R>(group: string, work: () => Promise<R>): Promise<R> {
    if (running >= limit || !mayStart(group)) {
      // Started by handOn, which counts the place as this group's before waking it.
      await new Promise<void>((resolve) => {
        const queue = waiting.get(group);
        if (queue) queue.push(resolve);
        else waiting.set(group, [resolve]);
      });
    } else start(group);
    try {
      return await work();
    } finally {
      handOn(group);
    }
  };
}

export type FairLimiter = ReturnType<typeof createFairLimiter>;
