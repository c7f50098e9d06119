/** At most `limit` of the functions passed run at once, across all callers; the others wait their turn in order. */
export function createLimiter(limit: number) {
  let running = 0;
  const waiting: Array<() => void> = [];
  return async function run<R>(work: () => Promise<R>): Promise<R> {
    if (running >= limit) await new Promise<void>((resolve) => waiting.push(resolve));
    else running++;
    try {
      return await work();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else running--;
    }
  };
}

export type Limiter = ReturnType<typeof createLimiter>;
