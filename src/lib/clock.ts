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
  /**
   * A time line of one sleeper (a call), starting now: a clock whose `now()` moves with this sleeper's own time, so
   * what it measures (a person waiting, a turn's offset) is not lengthened by other sleepers. Without it (the system
   * clock, where sleeps overlap in real time) the clock itself is that time line.
   */
  timeline?(): Clock;
}

/** The time line of one sleeper on `clock` (see Clock.timeline). */
export const timelineOf = (clock: Clock): Clock => clock.timeline?.() ?? clock;

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
 * side by side each move the one time forward, so concurrent sleeps add up instead of overlapping: the shared time
 * runs ahead of any one of them. What one sleeper measures of its own waits is taken on its `timeline()`, which starts
 * at the shared time and moves only with that sleeper's own sleeps (each of which still moves the shared time).
 * Used to run calls faster than real time (tests, benchmarks, demos).
 */
export function createVirtualClock(options: { start?: Date; speedup?: number } = {}): VirtualClock {
  let current = (options.start ?? new Date()).getTime();
  const speedup = options.speedup ?? Infinity;
  async function sleep(ms: number, signal?: AbortSignal) {
    signal?.throwIfAborted();
    const real = Number.isFinite(speedup) ? Math.max(0, ms) / speedup : 0;
    // Even an instant sleep yields, so the sleeper's peers (and I/O) get their turn.
    await (real > 0
      ? wait(real, undefined, signal ? { signal } : undefined)
      : new Promise<void>((resolve) => setImmediate(resolve)));
    signal?.throwIfAborted();
    current += Math.max(0, ms);
  }
  return {
    now: () => new Date(current),
    advance(ms) {
      current += Math.max(0, ms);
    },
    sleep,
    timeline() {
      let own = current;
      return {
        now: () => new Date(own),
        async sleep(ms, signal) {
          await sleep(ms, signal);
          own += Math.max(0, ms);
        },
      };
    },
  };
}
