/**
 * The rules of delivery, as pure functions: how one attempt ends its delivery (delivered, retried after a wait, or
 * abandoned), and how an endpoint's run of failed attempts grows until it disables the endpoint.
 */

/** Waits before the retries of a failed delivery, in seconds; after the last one fails the delivery is abandoned. */
export const RETRY_DELAYS_SECONDS = [5, 30, 120] as const;
/** Consecutive failed attempts (across deliveries) that disable an endpoint. */
export const AUTO_DISABLE_AFTER = 10;
/** An attempt that took this long makes its endpoint slow for the quick lane, until an attempt is quick again. */
export const SLOW_ATTEMPT_MS = 1_000;

/** What an attempt got back: a status, or an error (a refusal, a timeout, a redirect not followed). */
export interface AttemptAnswer {
  statusCode: number | null;
  error: string | null;
}

/** A 2xx answer with no error delivers; anything else fails the attempt. */
export const attemptSucceeded = (answer: AttemptAnswer) =>
  answer.error === null && answer.statusCode !== null && answer.statusCode >= 200 && answer.statusCode < 300;

export type DeliveryStep =
  | { state: 'succeeded'; nextAttemptAt: null }
  | { state: 'pending'; nextAttemptAt: Date; waitSeconds: number }
  | { state: 'abandoned'; nextAttemptAt: null };

/**
 * Where a delivery goes after an attempt that ended at `finishedAt`, the `roundAttempts`-th of its round (a
 * redelivery starts a new round): delivered; due again after the next wait; or abandoned once the waits are used up.
 */
export function deliveryStep(answer: AttemptAnswer, roundAttempts: number, finishedAt: Date): DeliveryStep {
  if (attemptSucceeded(answer)) return { state: 'succeeded', nextAttemptAt: null };
  const waitSeconds = RETRY_DELAYS_SECONDS[roundAttempts - 1];
  if (waitSeconds === undefined) return { state: 'abandoned', nextAttemptAt: null };
  return { state: 'pending', nextAttemptAt: new Date(finishedAt.getTime() + waitSeconds * 1000), waitSeconds };
}

/** An ended attempt as the streak counts it. */
export interface StreakAttempt extends AttemptAnswer {
  finishedAt: Date;
}

/**
 * An endpoint's failure streak after these attempts (taken in the order they ended): a success ends it, each failure
 * adds one. An enabled endpoint is disabled by the attempt that makes the streak reach AUTO_DISABLE_AFTER; the
 * streak still counts the attempts after it. `disabledBy` is undefined when the endpoint stays as it is.
 */
export function failureStreak<A extends StreakAttempt>(
  streak: number,
  enabled: boolean,
  attempts: readonly A[],
): { streak: number; disabledBy: A | undefined } {
  let disabledBy: A | undefined;
  const inOrder = [...attempts].sort((a, b) => a.finishedAt.getTime() - b.finishedAt.getTime());
  for (const attempt of inOrder) {
    streak = attemptSucceeded(attempt) ? 0 : streak + 1;
    if (enabled && !disabledBy && streak >= AUTO_DISABLE_AFTER) disabledBy = attempt;
  }
  return { streak, disabledBy };
}

/** Why an endpoint was disabled, as its record shows it. */
export const disabledReasonOf = (attempt: StreakAttempt) =>
  `Disabled after ${AUTO_DISABLE_AFTER} consecutive failed deliveries; the last: ${attempt.error ?? `HTTP ${attempt.statusCode}`} at ${attempt.finishedAt.toISOString()}`;

/** Whether a batch still sends to an endpoint that failed this many times in a row within it. */
export const keepsSending = (failedInARow: number) => failedInARow < AUTO_DISABLE_AFTER;

/**
 * The attempt that puts its endpoint in the penalty lane: the last of these to end (in the order they ended), when it
 * timed out. Undefined when the last one ended otherwise (any answer, or an error that came before the limit).
 */
export function lastTimedOut<A extends StreakAttempt & { timedOut: boolean }>(attempts: readonly A[]): A | undefined {
  let last: A | undefined;
  for (const attempt of attempts) {
    if (!last || attempt.finishedAt.getTime() >= last.finishedAt.getTime()) last = attempt;
  }
  return last?.timedOut ? last : undefined;
}

/** Whether an attempt that took this long leaves its endpoint to the quick lane (see SLOW_ATTEMPT_MS). */
export const answeredQuickly = (latencyMs: number | null) => (latencyMs ?? 0) < SLOW_ATTEMPT_MS;
