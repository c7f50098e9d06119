/**
 * Which of a queue's workers a wake-up goes to. Each wake-up asks for one fetch, so it goes to one worker: the next
 * one in turn that is not running a job (it fetches now), or, when every one is, the next busy one (it fetches again
 * as soon as its job is done, instead of sleeping until its next poll). Waking every worker instead costs a fetch per
 * worker per job, of which one finds it: 200 fetches per call with 200 call slots.
 */
export interface WakeRotation {
  /** Wakes `count` workers (one per job enqueued), never `except` (the worker asking). */
  wake(count?: number, except?: number): void;
  /** Worker `i` took a job (or a batch) and runs it. */
  started(i: number): void;
  /** Worker `i` is done with its job. */
  finished(i: number): void;
}

export function createWakeRotation(workers: number, notify: (i: number) => void): WakeRotation {
  const busy = new Array<boolean>(workers).fill(false);
  let next = 0;
  /** The next worker from `next` on that is idle (or, with `idle` false, any), skipping `except`. */
  const find = (idle: boolean, except: number | undefined) => {
    for (let step = 0; step < workers; step++) {
      const i = (next + step) % workers;
      if (i !== except && !(idle && busy[i])) return i;
    }
    return undefined;
  };
  return {
    wake(count = 1, except) {
      for (let n = 0; n < Math.min(count, workers); n++) {
        const i = find(true, except) ?? find(false, except);
        if (i === undefined) return;
        next = (i + 1) % workers;
        notify(i);
      }
    },
    started: (i) => void (busy[i] = true),
    finished: (i) => void (busy[i] = false),
  };
}
