import { setTimeout as wait } from 'node:timers/promises';

/**
 * Time comes from a clock passed down, so services can be driven at a chosen time in tests and jobs. `sleep` is how
 * anything waits on the clock's time (a call ringing, a sentence being spoken), so a virtual clock can run a whole
 * phone call in milliseconds.
 */
export interface Clock {
  now(): Date;
  /** Resolves after `ms` of this clock's time; rejects with the signal's reason when it is aborted first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const systemClock: Clock = {
  now: () => new Date(),
  sleep: (ms, signal) => wait(Math.max(0, ms), undefined, signal ? { signal } : undefined),
};

export interface VirtualClock extends Clock {
  /** Moves the time forward without anyone sleeping. */
  advance(ms: number): void;
}

/**
 * A clock whose time moves only when something sleeps on it: `sleep(ms)` moves it forward by `ms` at once (or after
 * `ms / speedup` real milliseconds), so work that waits minutes of clock time finishes in milliseconds. Sleepers running
 * side by side each move the one time forward, so concurrent sleeps add up instead of overlapping.
 * Used to run calls faster than real time (tests, benchmarks, demos).
 */
export function createVirtualClock(options: { start?: Date; speedup?: number } = {}): VirtualClock {
  let current = (options.start ?? new Date()).getTime();
  const speedup = options.speedup ?? Infinity;
  return {
    now: () => new Date(current),
    advance(ms) {
      current += Math.max(0, ms);
    },
    async sleep(ms, signal) {
      signal?.throwIfAborted();
      const real = Number.isFinite(speedup) ? Math.max(0, ms) / speedup : 0;
      // Even an instant sleep yields, so the sleeper's peers (and I/O) get their turn.
      await (real > 0
        ? wait(real, undefined, signal ? { signal } : undefined)
        : new Promise<void>((resolve) => setImmediate(resolve)));
      signal?.throwIfAborted();
      current += Math.max(0, ms);
    },
  };
}
