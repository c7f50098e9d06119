/**
 * A number's reputation, estimated the way carriers' spam analytics judge a caller: from its own outbound calls that
 * ended in the last 24 hours. Many calls, few answers and answered calls hung up within seconds all lower the score.
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

/** An ended outbound call, as the reputation counts it. */
export interface EndedCall {
  callId: string;
  fromNumber: string;
  endedAt: Date;
  answered: boolean;
  /** Answered, and over in under SHORT_CALL_SECONDS. */
  short: boolean;
}

/**
 * What the reputation reads of a call's end event (call.completed or call.failed). The caller number and the answer
 * time are read when the event carries them: a call whose event has no caller number is not counted.
 */
export interface CallEndFacts {
  direction: string;
  durationSeconds: number | null;
  fromNumber?: string | null;
  answeredAt?: string | Date | null;
}

export interface CallEndEvent {
  subject: { id: string };
  occurredAt: Date;
  data: CallEndFacts;
}

/**
 * The call a call.completed or call.failed event reports, as the reputation counts it; null when it does not count:
 * an inbound call, or one placed from no number.
 */
export function endedCallOf(event: CallEndEvent): EndedCall | null {
  const { direction, fromNumber, answeredAt, durationSeconds } = event.data;
  if (direction !== 'outbound' || !fromNumber) return null;
  const answered = answeredAt !== undefined && answeredAt !== null;
  return {
    callId: event.subject.id,
    fromNumber,
    endedAt: event.occurredAt,
    answered,
    short: answered && durationSeconds !== null && durationSeconds < SHORT_CALL_SECONDS,
  };
}
