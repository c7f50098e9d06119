/**
 * Turns for the delivery attempts of one worker process: at most `limit` at once (WEBHOOK_CONCURRENCY), shared
 * between accounts first, then between each account's endpoints.
 *
 * A place that frees goes to the waiting account that runs the fewest attempts (among equals, the one served least
 * recently), and within it to its waiting endpoint that runs the fewest; each endpoint's attempts go in the order they
 * came. No account holds every place, and no endpoint every place its account may hold: one is kept for the other
 * accounts, one for the account's other endpoints (as far as the limit allows), so their attempts start at once
 * however slow the attempts holding the rest.
 *
 * Endpoints not known here to answer quickly (new ones, slow ones, those that time out) hold half the places at most
 * (`slowPlaces`), and no account all of those, nor one endpoint all of its account's; endpoints whose last attempt
 * timed out (the penalty lane) hold at most
 * `penaltyPlaces`. So hosts that never answer tie up a few requests, not all of them, and endpoints that answer keep
 * the rest. An endpoint's standing comes from its claim (whether it timed out last), then from how its attempts here
 * end (`attemptEnded`): attempts already waiting change lanes at once.
 */

export interface Turn {
  account: string;
  endpoint: string;
  /** The endpoint's last attempt timed out, as its claim said: its attempts share the penalty lane's few places. */
  penalized: boolean;
}

/** How an endpoint's last attempt here ended: answered within a second, answered later (or not yet tried), timed out. */
export type Standing = 'quick' | 'slow' | 'timed out';

/** Places for endpoints not known to answer quickly, for a given limit: half, at least one. */
export const slowPlacesOf = (limit: number) => Math.max(1, Math.ceil(limit / 2));
/** Places of the penalty lane for a given limit: a quarter, at least one. */
export const penaltyPlacesOf = (limit: number) => Math.max(1, Math.floor(limit / 4));

interface Waiting {
  turn: Turn;
  /** Answers whether the attempt started (false: given up). */
  resolve: (started: boolean) => void;
  giveUp: AbortSignal | undefined;
  /** Set as it starts: the standing its place was counted under. */
  standing: Standing;
}

export interface TurnsOptions {
  limit: number;
  /** Places for endpoints not known to answer quickly (slowPlacesOf). */
  slowPlaces: number;
  /** Places for endpoints that time out, among those (penaltyPlacesOf). */
  penaltyPlaces: number;
}

export function createDeliveryTurns(options: TurnsOptions) {
  const { limit, slowPlaces, penaltyPlaces } = options;
  // One place is kept for the other accounts, and one for the account's other endpoints, as far as there are places.
  const accountHoldsAtMost = Math.max(1, limit - 1);
  const endpointHoldsAtMost = Math.max(1, limit - 2);
  const accountHoldsOfSlowAtMost = Math.max(1, slowPlaces - 1);
  const endpointHoldsOfSlowAtMost = Math.max(1, slowPlaces - 2);
  let running = 0;
  let slowRunning = 0;
  let penaltyRunning = 0;
  const runningByAccount = new Map<string, number>();
  const slowRunningByAccount = new Map<string, number>();
  const slowRunningByEndpoint = new Map<string, number>();
  const runningByEndpoint = new Map<string, number>();
  // Insertion order is the rotation at both levels: an account or endpoint that is served goes to the back.
  const waiting = new Map<string, Map<string, Waiting[]>>();
  // How each endpoint's last attempt here ended: newer than what its attempts' claims said.
  const standingHere = new Map<string, Standing>();
  const standingOf = (turn: Turn): Standing =>
    standingHere.get(turn.endpoint) ?? (turn.penalized ? 'timed out' : 'slow');

  const count = (map: Map<string, number>, key: string, by: number) => {
    const next = (map.get(key) ?? 0) + by;
    if (next === 0) map.delete(key);
    else map.set(key, next);
  };

  /** Whether an endpoint's next attempt may take a free place (the account's own limit is checked apart). */
  function mayStart(next: Waiting) {
    const { account, endpoint } = next.turn;
    if ((runningByEndpoint.get(endpoint) ?? 0) >= endpointHoldsAtMost) return false;
    const standing = standingOf(next.turn);
    if (standing === 'quick') return true;
    if (
      slowRunning >= slowPlaces ||
      (slowRunningByAccount.get(account) ?? 0) >= accountHoldsOfSlowAtMost ||
      (slowRunningByEndpoint.get(endpoint) ?? 0) >= endpointHoldsOfSlowAtMost
    ) {
      return false;
    }
    return standing !== 'timed out' || penaltyRunning < penaltyPlaces;
  }

  /** The endpoint of `endpoints` that may start and runs the fewest attempts (the first in rotation among equals). */
  function pickEndpoint(endpoints: Map<string, Waiting[]>) {
    let chosen: string | undefined;
    let fewest = Infinity;
    for (const [endpoint, queue] of endpoints) {
      const runs = runningByEndpoint.get(endpoint) ?? 0;
      if (runs < fewest && mayStart(queue[0]!)) {
        chosen = endpoint;
        fewest = runs;
      }
    }
    return chosen;
  }

  /** Counts a start under the standing its endpoint has now. */
  function begin(entry: Waiting) {
    const { account, endpoint } = entry.turn;
    entry.standing = standingOf(entry.turn);
    running++;
    count(runningByAccount, account, 1);
    count(runningByEndpoint, endpoint, 1);
    if (entry.standing === 'quick') return;
    slowRunning++;
    count(slowRunningByAccount, account, 1);
    count(slowRunningByEndpoint, endpoint, 1);
    if (entry.standing === 'timed out') penaltyRunning++;
  }

  function end(entry: Waiting) {
    const { account, endpoint } = entry.turn;
    running--;
    count(runningByAccount, account, -1);
    count(runningByEndpoint, endpoint, -1);
    if (entry.standing === 'quick') return;
    slowRunning--;
    count(slowRunningByAccount, account, -1);
    count(slowRunningByEndpoint, endpoint, -1);
    if (entry.standing === 'timed out') penaltyRunning--;
  }

  /** Starts waiting attempts while places are free and some may take them. */
  function pump() {
    while (running < limit) {
      let account: string | undefined;
      let endpoint: string | undefined;
      let fewest = Infinity;
      for (const [candidate, endpoints] of waiting) {
        const runs = runningByAccount.get(candidate) ?? 0;
        if (runs >= fewest || runs >= accountHoldsAtMost) continue;
        const picked = pickEndpoint(endpoints);
        if (picked === undefined) continue;
        account = candidate;
        endpoint = picked;
        fewest = runs;
      }
      if (account === undefined || endpoint === undefined) return;
      const endpoints = waiting.get(account)!;
      const queue = endpoints.get(endpoint)!;
      const next = queue.shift()!;
      endpoints.delete(endpoint);
      if (queue.length > 0) endpoints.set(endpoint, queue);
      waiting.delete(account);
      if (endpoints.size > 0) waiting.set(account, endpoints);
      begin(next);
      if (next.giveUp) byGiveUp.get(next.giveUp)?.delete(next);
      next.resolve(true);
    }
  }

  // The attempts waiting under each give-up signal: one listener per signal (a batch's), however many attempts.
  const byGiveUp = new WeakMap<AbortSignal, Set<Waiting>>();
  function givenUpWith(signal: AbortSignal) {
    let entries = byGiveUp.get(signal);
    if (!entries) {
      const waitingUnder = new Set<Waiting>();
      byGiveUp.set(signal, (entries = waitingUnder));
      signal.addEventListener(
        'abort',
        () => {
          for (const entry of waitingUnder) {
            leave(entry);
            entry.resolve(false);
          }
          waitingUnder.clear();
        },
        { once: true },
      );
    }
    return entries;
  }

  function leave(entry: Waiting) {
    const endpoints = waiting.get(entry.turn.account);
    const queue = endpoints?.get(entry.turn.endpoint);
    if (!endpoints || !queue) return;
    const at = queue.indexOf(entry);
    if (at < 0) return;
    queue.splice(at, 1);
    if (queue.length > 0) return;
    endpoints.delete(entry.turn.endpoint);
    if (endpoints.size === 0) waiting.delete(entry.turn.account);
  }

  return {
    /**
     * Runs `work` in its turn; answers its result, or `undefined` when `giveUp` aborted before the turn came (the
     * work then never runs).
     */
    async run<R>(turn: Turn, work: () => Promise<R>, giveUp?: AbortSignal): Promise<R | undefined> {
      if (giveUp?.aborted) return undefined;
      const entry: Waiting = { turn, resolve: () => {}, giveUp, standing: 'slow' };
      const started = await new Promise<boolean>((resolve) => {
        entry.resolve = resolve;
        let endpoints = waiting.get(turn.account);
        if (!endpoints) waiting.set(turn.account, (endpoints = new Map()));
        const queue = endpoints.get(turn.endpoint);
        if (queue) queue.push(entry);
        else endpoints.set(turn.endpoint, [entry]);
        if (giveUp) givenUpWith(giveUp).add(entry);
        pump();
      });
      if (!started) return undefined;
      try {
        return await work();
      } finally {
        end(entry);
        pump();
      }
    },

    /** How an attempt to the endpoint ended: its standing for the attempts that start after. */
    attemptEnded(endpoint: string, standing: Standing) {
      standingHere.set(endpoint, standing);
    },

    /** Endpoints with attempts waiting for a place (for tests and diagnostics). */
    waitingEndpoints(): string[] {
      return [...waiting.values()].flatMap((endpoints) => [...endpoints.keys()]);
    },

    /** Attempts under way: in all, to endpoints not known to answer quickly, in the penalty lane, and by account. */
    usage: () => ({ running, slowRunning, penaltyRunning, byAccount: new Map(runningByAccount) }),
  };
}

export type DeliveryTurns = ReturnType<typeof createDeliveryTurns>;
