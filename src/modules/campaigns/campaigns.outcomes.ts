/**
 * What an ended campaign call counts as (answered, abandoned, voicemail, busy, ...), and when its contact is tried
 * again.
 */
import { ABANDON_LATENCY_MS } from './campaigns.pace.js';
import { RETRY_OUTCOMES, type RetryOutcome, type RetryRules } from './campaigns.tables.js';
import { nextWindowStart, type Schedule } from './campaigns.window.js';

/** What the dialer reads of an ended call. */
export interface EndedCallFacts {
  status: string;
  endReason: string | null;
  answeredAt: Date | null;
  /** From a person's greeting to the agent's first words; null when the agent never spoke. */
  agentLatencyMs: number | null;
}

export type OutcomeKind = 'busy' | 'no_answer' | 'voicemail' | 'answered' | 'abandoned' | 'failed';

export interface CountedOutcome {
  kind: OutcomeKind;
  /** Someone or something picked up (a person or an answering machine). */
  connected: boolean;
  /** A person picked up. */
  liveAnswered: boolean;
  /** A person picked up and waited over ABANDON_LATENCY_MS for the agent. */
  abandoned: boolean;
}

/** The outcome of an ended call as the dialer counts it. */
export function classify(call: EndedCallFacts): CountedOutcome {
  const voicemail = call.endReason === 'voicemail';
  const connected = call.answeredAt !== null;
  const liveAnswered = connected && !voicemail;
  const abandoned = liveAnswered && (call.agentLatencyMs ?? 0) > ABANDON_LATENCY_MS;
  let kind: OutcomeKind;
  if (call.status === 'busy' || call.status === 'no_answer') kind = call.status;
  else if (voicemail) kind = 'voicemail';
  else if (liveAnswered) kind = abandoned ? 'abandoned' : 'answered';
  else kind = 'failed';
  return { kind, connected, liveAnswered, abandoned };
}

/** The campaign settings a retry is decided by. */
export interface RetrySettings {
  retry_rules: RetryRules;
  max_attempts_per_contact: number;
  schedule: Schedule;
}

/**
 * When the contact is called again after attempt `attemptNumber` ended as `kind`, or null when it is finished: an
 * outcome with a retry rule is retried after the rule's spacing, at the next moment inside the calling window, while
 * the rule's retries and the campaign's attempts last. `zones`: the contact's time zones; null when the contact is
 * gone (never retried).
 */
export function retryAt(
  kind: OutcomeKind,
  attemptNumber: number,
  campaign: RetrySettings,
  zones: readonly string[] | null,
  now: Date,
): Date | null {
  if (!zones || !(RETRY_OUTCOMES as readonly string[]).includes(kind)) return null;
  const rule = campaign.retry_rules[kind as RetryOutcome];
  const retriesUsed = attemptNumber - 1;
  if (!rule || retriesUsed >= rule.attempts || attemptNumber >= campaign.max_attempts_per_contact) return null;
  const earliest = new Date(now.getTime() + rule.spacingMinutes * 60_000);
  return nextWindowStart(zones, campaign.schedule, earliest) ?? earliest;
}
