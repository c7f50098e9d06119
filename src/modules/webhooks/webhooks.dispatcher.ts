/**
 * The dispatcher: sends due deliveries from every worker process, in batches, and records how each attempt ended.
 *
 * Turns. Accounts take turns first, then each account's endpoints, so one account's endpoints, however many and
 * however slow, do not hold back another account's deliveries:
 * - A claim leases up to 250 due deliveries under one lease row; claims take turns under an advisory lock, so two
 *   dispatchers never make the same attempt. Every account with deliveries due gets an equal share of the batch and
 *   each of its endpoints an equal share of the account's, the longest waiting first; a delivery written behind an
 *   unsent one of the same subject waits for it.
 * - A process's attempts share WEBHOOK_CONCURRENCY places (webhooks.turns.ts): a freed place goes to the waiting
 *   account running the fewest, then to its endpoint running the fewest; no account or endpoint takes every place,
 *   and endpoints not known to answer quickly (new, slow or timing out) hold half of them at most.
 * - The penalty lane: an endpoint whose last attempt timed out is claimed only by a lane of its own, one delivery per
 *   endpoint and batch, and its attempts hold at most a quarter of the places. An attempt that ends otherwise puts it
 *   back.
 *
 * Lanes. A process runs four lanes of the same loop (claim a batch, send it, claim the next): two serve any endpoint
 * not in the penalty lane; the quick lane only those whose last attempt from this process was quick (under a second);
 * the penalty lane, which new work does not wake, the others. A lane waits for its batch to be recorded (once its last
 * attempt has ended) while its answers keep coming; after a quarter of a second without one it leaves the batch to be
 * recorded when it ends and claims the next one, leaving out the endpoints with attempts of such batches still waiting for a place. So no slow
 * receiver holds a lane, and a delivery of another account is claimed within a quarter of a second. A batch starts attempts for 15 s at
 * most (the rest stay due for a later batch), and an endpoint that fails ten times in a row within a batch gets no
 * more attempts there.
 *
 * Recording. One transaction records a batch: each attempt joins its delivery's log, and the delivery is delivered,
 * due for its retry (after 5 s, 30 s, 120 s) or abandoned; each endpoint's failure streak is counted in the order its
 * attempts ended (the tenth failure in a row disables the endpoint and stops its pending deliveries), and whether its
 * last attempt timed out. A lease is renewed while its batch is sent; one that runs out belonged to a process that
 * died, and whoever claims next records its attempts as cut off and makes them again.
 */
import type { WebhooksConfig } from '../../config.js';
import type { WorkerLoopContext } from '../../jobs/define.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { enqueued } from '../../lib/wake.js';
import { createWebhookSender, type Lookup, type WebhookSender } from './webhooks.http.js';
import type {
  AttemptOutcome,
  ClaimedDelivery,
  ClaimScope,
  EndpointRow,
  LockedEndpoint,
  WebhooksRepo,
  WebhooksTx,
} from './webhooks.repo.js';
import {
  answeredQuickly,
  attemptSucceeded,
  deliveryStep,
  disabledReasonOf,
  failureStreak,
  keepsSending,
  lastTimedOut,
} from './webhooks.rules.js';
import type { EndpointSecrets, WebhookSecrets } from './webhooks.secrets.js';
import { createDeliveryTurns, penaltyPlacesOf, slowPlacesOf, type DeliveryTurns } from './webhooks.turns.js';

/** The worker loop that sends deliveries; a commit that adds due deliveries wakes it. */
export const DISPATCH_LOOP = 'webhooks.dispatch';
export const USER_AGENT = 'Service-Webhook/1.0';
/**
 * A batch's lease: renewed while its dispatcher works, so one that runs out belonged to a process that died, and its
 * attempts are made again. Longer than the 10 s limit of one attempt.
 */
const ATTEMPT_LEASE_MS = 60_000;
/** How often a dispatcher looks for leases that ran out (a statement per claim would cost as much as the claim). */
const TAKE_OVER_EVERY_MS = 10_000;
/**
 * Deliveries one lane claims per statement. Each batch costs about ten statements whatever its size, which the
 * embedded database feels (half a millisecond or more each); larger batches wait longer behind a slow endpoint.
 */
const DISPATCH_BATCH = 250;
/** Lanes that serve any endpoint in good standing, beside the quick lane and the penalty lane. */
const DISPATCH_LANES = 2;
/**
 * How long a lane waits for its batch to be recorded while none of its attempts ends, before it claims the next batch
 * (the batch is recorded when its last attempt ends): the longest a due delivery of another account waits for a lane
 * while every lane's batch waits on receivers that do not answer.
 */
const LANE_PATIENCE_MS = 250;
/**
 * How long a batch starts attempts: those not started by then stay due for the next batch. A batch is recorded once
 * its last attempt ends, so a slow receiver holds its lane for at most this plus one attempt's limit.
 */
const BATCH_SENDING_MS = 15_000;

/** An attempt made by the dispatcher, as it ended. */
interface EndedAttempt {
  delivery: ClaimedDelivery;
  startedAt: Date;
  finishedAt: Date;
  statusCode: number | null;
  latencyMs: number | null;
  error: string | null;
  responseExcerpt: string | null;
  timedOut: boolean;
}

type DispatchEndpoint = EndpointSecrets & Pick<EndpointRow, 'url'>;

/** A batch as it is sent. */
interface SendingBatch {
  /** By endpoint, its attempts not started yet. */
  waiting: Map<string, number>;
  /** The lane that claimed it went on before it was recorded. */
  left: boolean;
  /** When its last attempt ended (or it started), on the monotonic clock. */
  progressAt: number;
  /** The attempts made, once they have all ended. */
  ended: Promise<EndedAttempt[]>;
}

/** A claimed batch: its lease, its deliveries and their endpoints (read in the claim's transaction). */
interface Batch {
  leaseId: string;
  claimed: ClaimedDelivery[];
  endpoints: Map<string, DispatchEndpoint>;
}

/** The attempt's record and where its delivery goes next. */
function outcomeOf(attempt: EndedAttempt): AttemptOutcome {
  const { delivery, finishedAt } = attempt;
  const step = deliveryStep(attempt, delivery.round_attempts, finishedAt);
  return {
    deliveryId: delivery.id,
    attemptNumber: delivery.attempt_number,
    version: delivery.version,
    attempt: {
      number: delivery.attempt_number,
      startedAt: attempt.startedAt.toISOString(),
      finishedAt: finishedAt.toISOString(),
      statusCode: attempt.statusCode,
      latencyMs: attempt.latencyMs,
      error: attempt.error,
      responseBody: attempt.responseExcerpt,
    },
    state: step.state,
    nextAttemptAt: step.nextAttemptAt,
  };
}

/** The endpoints a batch's attempts went to, once each. */
function endpointsOf(attempts: EndedAttempt[]) {
  const byId = new Map(attempts.map(({ delivery }) => [delivery.endpoint_id, delivery.account_id]));
  return [...byId].map(([id, accountId]) => ({ id, accountId }));
}

/**
 * Each endpoint's failure streak after a batch of its attempts (the tenth failure in a row disables it), and whether
 * its last attempt timed out (the penalty lane).
 */
async function settleEndpoints(tx: WebhooksTx, attempts: EndedAttempt[], locked: LockedEndpoint[]) {
  const lockedById = new Map(locked.map((endpoint) => [endpoint.id, endpoint]));
  const byEndpoint = new Map<string, EndedAttempt[]>();
  for (const attempt of attempts) {
    const ended = byEndpoint.get(attempt.delivery.endpoint_id);
    if (ended) ended.push(attempt);
    else byEndpoint.set(attempt.delivery.endpoint_id, [attempt]);
  }
  for (const [endpointId, ended] of byEndpoint) {
    const accountId = ended[0]!.delivery.account_id;
    const endpoint = lockedById.get(endpointId);
    if (!endpoint) continue;
    const { streak, disabledBy } = failureStreak(endpoint.failure_streak, endpoint.enabled, ended);
    const timedOut = lastTimedOut(ended);
    const timedOutAt = timedOut ? timedOut.finishedAt : null;
    const penaltyChanged = (endpoint.timed_out_at === null) !== (timedOutAt === null);
    if (disabledBy) {
      await tx.updateEndpoint(accountId, endpointId, {
        failure_streak: streak,
        enabled: false,
        disabled_reason: disabledReasonOf(disabledBy),
        disabled_at: disabledBy.finishedAt,
        timed_out_at: timedOutAt,
        updated_at: disabledBy.finishedAt,
      });
      await tx.stopPendingOfEndpoint(accountId, endpointId, disabledBy.finishedAt);
    } else if (streak !== endpoint.failure_streak || penaltyChanged) {
      await tx.updateEndpoint(accountId, endpointId, { failure_streak: streak, timed_out_at: timedOutAt });
    }
  }
}

export interface DispatcherDeps {
  repo: WebhooksRepo;
  clock: Clock;
  config: WebhooksConfig;
  secrets: WebhookSecrets;
  /** Name resolution for target checks (tests give their own). */
  lookup?: Lookup;
  /** The limit of one attempt in milliseconds (10 s unless a test gives a shorter one). */
  attemptTimeoutMs?: number;
}

/**
 * Whether the batch is recorded before LANE_PATIENCE_MS pass without any of its attempts ending: a batch whose answers
 * keep coming holds its lane, one that waits on silent receivers does not.
 */
async function recordedUnlessStuck(batch: { sending: SendingBatch; recorded: Promise<unknown> }) {
  for (;;) {
    const patience = batch.sending.progressAt + LANE_PATIENCE_MS - performance.now();
    if (patience <= 0) return false;
    if (await settlesWithin(batch.recorded, patience)) return true;
  }
}

/** Whether `promise` settles within `ms` (a rejection counts as settled). */
async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const settled = promise.then(
    () => true,
    () => true,
  );
  const result = await Promise.race([
    settled,
    new Promise<false>((resolve) => (timer = setTimeout(resolve, ms, false))),
  ]);
  clearTimeout(timer);
  return result;
}

/** Waits `ms`, or until `signal` aborts. */
function pause(ms: number, signal: AbortSignal) {
  return new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

export function createWebhookDispatcher(deps: DispatcherDeps) {
  const { repo, clock, config, secrets } = deps;
  let sender: WebhookSender | undefined;
  const http = () =>
    (sender ??= createWebhookSender({
      allowHttp: config.allowHttp,
      allowPrivate: config.allowPrivate,
      ...(deps.lookup ? { lookup: deps.lookup } : {}),
      ...(deps.attemptTimeoutMs ? { timeoutMs: deps.attemptTimeoutMs } : {}),
    }));
  let nextTakeOverAt = 0;
  // Endpoints whose last attempt from this process was quick: the quick lane's.
  const quickEndpoints = new Set<string>();
  // Endpoints whose last attempt from this process timed out: the penalty lane's at once, before their batch is
  // recorded (then the database says so to every process).
  const timedOutEndpoints = new Set<string>();
  const places = config.concurrencyPerWorker;
  const newTurns = () =>
    createDeliveryTurns({ limit: places, slowPlaces: slowPlacesOf(places), penaltyPlaces: penaltyPlacesOf(places) });
  // The places of the worker loop's lanes, made once: a loop started again after an error still counts the attempts
  // its batches have under way.
  let loopTurns: DeliveryTurns | undefined;
  // Batches a lane left before they were recorded (slow answers), while some of their attempts wait for a place.
  const leftBatches = new Set<SendingBatch>();
  // Tells the worker loop's lanes to claim again (work they left aside may be due); several at once make one.
  let nudging = false;
  const nudge = () => {
    if (nudging) return;
    nudging = true;
    setImmediate(() => {
      nudging = false;
      enqueued(DISPATCH_LOOP);
    });
  };

  /** Sends one claimed attempt; never throws (a failure is the attempt's result). */
  async function send(delivery: ClaimedDelivery, endpoint: DispatchEndpoint): Promise<EndedAttempt> {
    const startedAt = clock.now();
    const { t, header } = await secrets.signatureFor(endpoint, delivery.body, startedAt);
    const headers = {
      'content-type': 'application/json',
      'user-agent': USER_AGENT,
      'x-service-event': delivery.event_type,
      'x-service-delivery': delivery.id,
      'x-service-timestamp': String(t),
      'x-service-signature': header,
    };
    const result = await http().post(endpoint.url, headers, delivery.body);
    const { statusCode, latencyMs, error, responseExcerpt, timedOut } = result;
    return { delivery, startedAt, finishedAt: clock.now(), statusCode, latencyMs, error, responseExcerpt, timedOut };
  }

  /** Leases up to `limit` due deliveries (taking over leases that ran out, every TAKE_OVER_EVERY_MS). */
  async function claim(limit: number, serving: ClaimScope): Promise<Batch> {
    const now = clock.now();
    const lease = { id: newId(), until: new Date(now.getTime() + ATTEMPT_LEASE_MS) };
    const takeOver = now.getTime() >= nextTakeOverAt;
    if (takeOver) nextTakeOverAt = now.getTime() + TAKE_OVER_EVERY_MS;
    return repo.transaction(async (tx) => {
      if (takeOver) await tx.takeOverExpiredLeases(now);
      const claimed = await tx.claimDue(now, limit, lease, serving);
      const endpointIds = [...new Set(claimed.map((delivery) => delivery.endpoint_id))];
      const endpoints = endpointIds.length > 0 ? await tx.endpointsByIds(endpointIds) : [];
      return { leaseId: lease.id, claimed, endpoints: new Map(endpoints.map((endpoint) => [endpoint.id, endpoint])) };
    });
  }

  /**
   * Starts a batch's attempts, each in its turn (see webhooks.turns.ts). An endpoint that fails ten times in a row
   * within the batch gets no more of its attempts (it is disabled when the batch is recorded, which stops the rest);
   * attempts not started within BATCH_SENDING_MS, or once the worker stops (`stoppers` holds what gives them up
   * then), are given up and stay due. `ended` resolves with the attempts made once they have all ended; `waiting`
   * counts, by endpoint, the attempts not started yet.
   */
  function sendBatch(batch: Batch, turns: DeliveryTurns, stoppers?: Set<() => void>): SendingBatch {
    const failedInARow = new Map<string, number>();
    const giveUp = new AbortController();
    const stop = () => giveUp.abort();
    const timer = setTimeout(stop, BATCH_SENDING_MS);
    stoppers?.add(stop);
    const sending: SendingBatch = {
      waiting: new Map(),
      left: false,
      progressAt: performance.now(),
      ended: Promise.resolve([]),
    };
    for (const { endpoint_id } of batch.claimed)
      sending.waiting.set(endpoint_id, (sending.waiting.get(endpoint_id) ?? 0) + 1);
    const oneStarted = (endpointId: string) => {
      const left = sending.waiting.get(endpointId)! - 1;
      if (left > 0) return void sending.waiting.set(endpointId, left);
      sending.waiting.delete(endpointId);
      // A lane that left this batch left the endpoint out of its claims: it may take it again.
      if (sending.left) nudge();
      if (sending.waiting.size > 0) return;
      clearTimeout(timer);
      stoppers?.delete(stop);
      leftBatches.delete(sending);
    };
    const attempt = async (delivery: ClaimedDelivery) => {
      const endpointId = delivery.endpoint_id;
      oneStarted(endpointId);
      if (!keepsSending(failedInARow.get(endpointId) ?? 0)) return null;
      // The claim's transaction read the endpoint, and claims only deliveries of enabled endpoints.
      const ended = await send(delivery, batch.endpoints.get(endpointId)!);
      sending.progressAt = performance.now();
      const quick = answeredQuickly(ended.latencyMs);
      if (quick) quickEndpoints.add(endpointId);
      else quickEndpoints.delete(endpointId);
      if (ended.timedOut) timedOutEndpoints.add(endpointId);
      else timedOutEndpoints.delete(endpointId);
      turns.attemptEnded(endpointId, ended.timedOut ? 'timed out' : quick ? 'quick' : 'slow');
      failedInARow.set(endpointId, attemptSucceeded(ended) ? 0 : (failedInARow.get(endpointId) ?? 0) + 1);
      return ended;
    };
    sending.ended = Promise.all(
      batch.claimed.map(async (delivery) => {
        const turn = { account: delivery.account_id, endpoint: delivery.endpoint_id, penalized: delivery.penalized };
        const made = await turns.run(turn, () => attempt(delivery), giveUp.signal);
        if (made === undefined) oneStarted(delivery.endpoint_id); // given up before its turn
        return made ?? null;
      }),
    ).then((made) => made.filter((attempt): attempt is EndedAttempt => attempt !== null));
    return sending;
  }

  /** Keeps the batch's lease while it is sent; answers the function that stops renewing. */
  function renewWhileSending(leaseId: string) {
    const renewal = setInterval(() => {
      repo.extendLease(leaseId, new Date(clock.now().getTime() + ATTEMPT_LEASE_MS)).catch(() => {
        // The next renewal tries again; a lease that runs out only means the batch's attempts are made again.
      });
    }, ATTEMPT_LEASE_MS / 3);
    renewal.unref();
    return () => clearInterval(renewal);
  }

  /** Records a batch's attempts in one transaction with the endpoints' streaks and penalties. */
  async function record(batch: Batch, ended: EndedAttempt[]) {
    await repo.transaction(async (tx) => {
      // A lease that ran out was taken over: its attempts are already recorded as cut off, and made again.
      const locked = await tx.releaseLeaseLockingEndpoints(batch.leaseId, endpointsOf(ended));
      if (!locked) return;
      await tx.recordOutcomes(ended.map(outcomeOf), clock.now());
      await settleEndpoints(tx, ended, locked);
    });
  }

  /**
   * Claims a batch and starts sending it; null when nothing was due, else the batch as it is sent, and `recorded`,
   * which resolves once it is recorded, with the number of attempts made.
   */
  async function startBatch(limit: number, turns: DeliveryTurns, serving: ClaimScope, stoppers?: Set<() => void>) {
    if (serving.only?.length === 0) return null;
    const batch = await claim(limit, serving);
    if (batch.claimed.length === 0) return null;
    const stopRenewing = renewWhileSending(batch.leaseId);
    const sending = sendBatch(batch, turns, stoppers);
    const recorded = sending.ended
      .then(async (attempts) => {
        await record(batch, attempts);
        return attempts.length;
      })
      .finally(stopRenewing);
    return { sending, recorded };
  }

  /** Endpoints with attempts still waiting for a place in batches their lanes left: claims leave them out. */
  function leftOut() {
    const endpoints = new Set<string>();
    for (const sending of leftBatches) for (const endpoint of sending.waiting.keys()) endpoints.add(endpoint);
    return [...endpoints];
  }

  return {
    /** Sends every delivery due now, batch after batch, until none is left; answers how many attempts were made. */
    async dispatchDue(): Promise<{ attempted: number }> {
      let attempted = 0;
      const turns = newTurns();
      for (;;) {
        const batch = await startBatch(DISPATCH_BATCH, turns, { lane: 'every' });
        const made = batch ? await batch.recorded : 0;
        if (made === 0) return { attempted };
        attempted += made;
      }
    },

    /** The lanes of a worker process (see the file's header), until the worker stops. */
    async dispatchLoop(context: WorkerLoopContext) {
      const turns = (loopTurns ??= newTurns());
      const underWay = new Set<Promise<void>>();
      // When the worker stops, attempts still waiting for a place are given up (they stay due).
      const stoppers = new Set<() => void>();
      const stopAll = () => {
        for (const stop of [...stoppers]) stop();
      };
      context.signal.addEventListener('abort', stopAll, { once: true });
      const lane = async (serving: () => ClaimScope, woken = true) => {
        while (!context.signal.aborted) {
          const batch = await startBatch(DISPATCH_BATCH, turns, serving(), stoppers);
          if (!batch) {
            // The penalty lane is not woken by new work: deliveries to endpoints that time out wait for the poll.
            await (woken ? context.idle(context.pollMs) : pause(context.pollMs, context.signal));
            continue;
          }
          // A batch answered quickly is recorded before the lane claims again. The lane leaves one that is not: it is
          // recorded when its last attempt ends, and the lanes then look again (the deliveries it gave up, and those
          // that waited for its first attempts, are due). Meanwhile claims leave out its endpoints with attempts
          // still waiting for a place, so that a stuck endpoint's work does not pile up.
          if (await recordedUnlessStuck(batch)) continue;
          batch.sending.left = true;
          if (batch.sending.waiting.size > 0) leftBatches.add(batch.sending);
          const recorded = batch.recorded.then(nudge, (error: unknown) => {
            // Its lease runs out, and whoever claims next records its attempts as cut off and makes them again.
            context.log.error({ err: error }, 'recording a batch of webhook attempts failed');
          });
          underWay.add(recorded);
          void recorded.finally(() => underWay.delete(recorded));
        }
      };
      const timedOut = () => [...timedOutEndpoints];
      try {
        await Promise.all([
          ...Array.from({ length: DISPATCH_LANES }, () =>
            lane(() => ({ lane: 'main', timedOut: timedOut(), except: leftOut() })),
          ),
          lane(() => ({ lane: 'main', only: [...quickEndpoints], timedOut: timedOut(), except: leftOut() })),
          lane(() => ({ lane: 'penalty', timedOut: timedOut(), except: leftOut() }), false),
        ]);
      } finally {
        context.signal.removeEventListener('abort', stopAll);
      }
      stopAll();
      await Promise.all(underWay);
    },

    async close() {
      await sender?.close();
      sender = undefined;
    },
  };
}

export type WebhookDispatcher = ReturnType<typeof createWebhookDispatcher>;
