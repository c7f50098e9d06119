/**
 * A number's reputation, estimated the way carriers' spam analytics judge a caller: from its own outbound calls of
 * the last 24 hours. Many calls, few answers and answered calls hung up within seconds all lower the score.
 * The formula is in the README ("Phone numbers"); keep the two in step.
 */
import type { ReputationLabel } from './numbers.tables.js';

export const REPUTATION_WINDOW_MS = 24 * 60 * 60_000;
/** An answered call shorter than this counts as hung up at once. */
export const SHORT_CALL_SECONDS = 10;

export interface NumberActivity {
  /** Outbound calls placed from the number in the window. */
  calls: number;
  /** Of those, the ones answered. */
  answered: number;
  /** Of the answered ones, those that lasted under SHORT_CALL_SECONDS. */
  short: number;
}

export interface Reputation {
  score: number;
  label: ReputationLabel;
}

const clamp = (value: number, low: number, high: number) => Math.min(high, Math.max(low, value));

export function scoreReputation({ calls, answered, short }: NumberActivity): Reputation {
  // Rates over a handful of calls say little: their penalties grow to full weight at 20 calls.
  const confidence = Math.min(1, calls / 20);
  const answerRate = calls > 0 ? answered / calls : 1;
  const shortShare = answered > 0 ? short / answered : 0;
  const unansweredPenalty = 50 * confidence * clamp((0.6 - answerRate) / 0.6, 0, 1);
  const shortPenalty = 35 * confidence * shortShare;
  const volumePenalty = clamp((calls - 40) / 4, 0, 30);
  const score = Math.round(clamp(100 - unansweredPenalty - shortPenalty - volumePenalty, 0, 100));
  return { score, label: score >= 70 ? 'clean' : score >= 40 ? 'at_risk' : 'spam_likely' };
}
