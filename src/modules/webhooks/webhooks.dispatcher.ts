/**
 * The dispatcher: sends due deliveries from every worker process, in batches, and records how each attempt ended.
 *
 * Lanes. A process runs three lanes of the same loop (claim a batch, send it, record it; again at once while there is
 * work, else wait for a commit that adds deliveries or for the next poll). Two lanes serve any endpoint, so one sends
 * while the other claims or records. The third, the quick lane, serves only the endpoints whose last attempt from
 * this process was quick (under a second; each process learns them for itself): their work is not held back while the
 * other lanes wait on slow receivers, and it never takes a slow endpoint's backlog. A new endpoint's first delivery
 * goes through the other lanes.
 *
 * Turns. A claim leases up to 250 due deliveries under one lease row; claims take turns under an advisory lock, so
 * two dispatchers never make the same attempt. Every endpoint with deliveries due gets an equal share of the batch,
 * the longest waiting first, and a delivery written behind an unsent one of the same subject waits for it. The lanes
 * share WEBHOOK_CONCURRENCY requests, which endpoints take in turn: no endpoint holds every place, so another's work
 * starts at once however slow the one holding the rest. A batch starts attempts for 15 s at most (the rest stay due
 * for the next batch), and an endpoint that fails ten times in a row within a batch gets no more attempts there.
 *
 * Recording. One transaction records a batch: each attempt joins its delivery's log, and the delivery is delivered,
 * due for its retry (after 5 s, 30 s, 120 s) or abandoned; each endpoint's failure streak is counted in the order its
 * attempts ended, and the tenth failure in a row disables the endpoint and stops its pending deliveries. A lease is
 * renewed while its batch is sent; one that runs out belonged to a process that died, and whoever claims next records
 * its attempts as cut off and makes them again.
 */
import type { WebhooksConfig } from '../../config.js';
import type { WorkerLoopContext } from '../../jobs/define.js';
import type { Clock } from '../../lib/clock.js';
import { createFairLimiter, type FairLimiter } from '../../lib/concurrency.js';
import { newId } from '../../lib/ids.js';
import { createWebhookSender, type Lookup, type WebhookSender } from './webhooks.http.js';
import type {
  AttemptOutcome,
  ClaimedDelivery,
  ClaimScope,
  EndpointRow,
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
} from './webhooks.rules.js';
import type { EndpointSecrets, WebhookSecrets } from './webhooks.secrets.js';

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
/** Lanes that serve any endpoint, beside the quick lane. */
const DISPATCH_LANES = 2;
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
}

type DispatchEndpoint = EndpointSecrets & Pick<EndpointRow, 'url'>;

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

/** Each endpoint's failure streak after a batch of its attempts; the tenth failure in a row disables it. */
async function countStreaks(tx: WebhooksTx, attempts: EndedAttempt[]) {
  const byEndpoint = new Map<string, EndedAttempt[]>();
  for (const attempt of attempts) {
    const ended = byEndpoint.get(attempt.delivery.endpoint_id);
    if (ended) ended.push(attempt);
    else byEndpoint.set(attempt.delivery.endpoint_id, [attempt]);
  }
  for (const [endpointId, ended] of byEndpoint) {
    const accountId = ended[0]!.delivery.account_id;
    const endpoint = await tx.findEndpointForUpdate(accountId, endpointId);
    if (!endpoint) continue;
    const { streak, disabledBy } = failureStreak(endpoint.failure_streak, endpoint.enabled, ended);
    if (disabledBy) {
      await tx.updateEndpoint(accountId, endpointId, {
        failure_streak: streak,
        enabled: false,
        disabled_reason: disabledReasonOf(disabledBy),
        disabled_at: disabledBy.finishedAt,
        updated_at: disabledBy.finishedAt,
      });
      await tx.stopPendingOfEndpoint(accountId, endpointId, disabledBy.finishedAt);
    } else if (streak !== endpoint.failure_streak) {
      await tx.updateEndpoint(accountId, endpointId, { failure_streak: streak });
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
}

export function createWebhookDispatcher(deps: DispatcherDeps) {
  const { repo, clock, config, secrets } = deps;
  let sender: WebhookSender | undefined;
  const http = () =>
    (sender ??= createWebhookSender({
      allowHttp: config.allowHttp,
      allowPrivate: config.allowPrivate,
      ...(deps.lookup ? { lookup: deps.lookup } : {}),
    }));
  let nextTakeOverAt = 0;
  // Endpoints whose last attempt from this process was quick: the quick lane's.
  const quickEndpoints = new Set<string>();

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
    const { statusCode, latencyMs, error, responseExcerpt } = result;
    return { delivery, startedAt, finishedAt: clock.now(), statusCode, latencyMs, error, responseExcerpt };
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
   * Sends a batch's attempts through `limited`, endpoints taking turns. An endpoint that fails ten times in a row
   * within the batch gets no more of its attempts (it is disabled when the batch is recorded, which stops the rest);
   * attempts not started within BATCH_SENDING_MS stay due. Answers the attempts made.
   */
  async function sendBatch(batch: Batch, limited: FairLimiter): Promise<EndedAttempt[]> {
    const failedInARow = new Map<string, number>();
    const stopStartingAt = performance.now() + BATCH_SENDING_MS;
    const attempt = async (delivery: ClaimedDelivery) => {
      const endpointId = delivery.endpoint_id;
      if (!keepsSending(failedInARow.get(endpointId) ?? 0) || performance.now() > stopStartingAt) return null;
      // The claim's transaction read the endpoint, and claims only deliveries of enabled endpoints.
      const ended = await send(delivery, batch.endpoints.get(endpointId)!);
      if (answeredQuickly(ended.latencyMs)) quickEndpoints.add(endpointId);
      else quickEndpoints.delete(endpointId);
      failedInARow.set(endpointId, attemptSucceeded(ended) ? 0 : (failedInARow.get(endpointId) ?? 0) + 1);
      return ended;
    };
    const made = await Promise.all(
      batch.claimed.map((delivery) => limited(delivery.endpoint_id, () => attempt(delivery))),
    );
    return made.filter((ended): ended is EndedAttempt => ended !== null);
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

  /** One batch: claimed, sent and recorded in one transaction with the endpoints' streaks. */
  async function dispatchBatch(limit: number, limited: FairLimiter, serving: ClaimScope = 'any endpoint') {
    if (serving !== 'any endpoint' && serving.only.length === 0) return { attempted: 0 };
    const batch = await claim(limit, serving);
    if (batch.claimed.length === 0) return { attempted: 0 };
    const stopRenewing = renewWhileSending(batch.leaseId);
    try {
      const ended = await sendBatch(batch, limited);
      await repo.transaction(async (tx) => {
        // A lease that ran out was taken over: its attempts are already recorded as cut off, and made again.
        if (!(await tx.releaseLease(batch.leaseId))) return;
        await tx.lockEndpoints(endpointsOf(ended));
        await tx.recordOutcomes(ended.map(outcomeOf), clock.now());
        await countStreaks(tx, ended);
      });
      return { attempted: ended.length };
    } finally {
      stopRenewing();
    }
  }

  return {
    /** Sends every delivery due now, batch after batch, until none is left; answers how many attempts were made. */
    async dispatchDue(): Promise<{ attempted: number }> {
      let attempted = 0;
      for (;;) {
        const batch = await dispatchBatch(DISPATCH_BATCH, createFairLimiter(config.concurrencyPerWorker));
        if (batch.attempted === 0) return { attempted };
        attempted += batch.attempted;
      }
    },

    /** The lanes of a worker process (see the file's header), until the worker stops. */
    async dispatchLoop(context: WorkerLoopContext) {
      const limited = createFairLimiter(config.concurrencyPerWorker);
      const lane = async (serving: () => ClaimScope) => {
        while (!context.signal.aborted) {
          const { attempted } = await dispatchBatch(DISPATCH_BATCH, limited, serving());
          if (attempted === 0) await context.idle(context.pollMs);
        }
      };
      await Promise.all([
        ...Array.from({ length: DISPATCH_LANES }, () => lane(() => 'any endpoint')),
        lane(() => ({ only: [...quickEndpoints] })),
      ]);
    },

    async close() {
      await sender?.close();
      sender = undefined;
    },
  };
}

export type WebhookDispatcher = ReturnType<typeof createWebhookDispatcher>;
