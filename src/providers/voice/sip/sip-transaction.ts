/**
 * The rules of SIP client transactions (RFC 3261 section 17) that need no socket: branch ids, which response
 * belongs to which transaction, the retransmission timers, and what a final answer to an INVITE means for a call.
 */
import { randomBytes } from 'node:crypto';
import { getHeader, parseCSeq, parseVia, type SipResponse } from './sip-message.js';

/** Every RFC 3261 branch starts with this, so a proxy knows the branch is unique (8.1.1.7). */
export const BRANCH_MAGIC_COOKIE = 'z9hG4bK';

export function newBranch(): string {
  return `${BRANCH_MAGIC_COOKIE}${randomBytes(12).toString('base64url')}`;
}

export function isRfc3261Branch(branch: string | undefined): boolean {
  return (branch?.length ?? 0) > BRANCH_MAGIC_COOKIE.length && branch!.startsWith(BRANCH_MAGIC_COOKIE);
}

/** A random token for From/To tags and Call-IDs. */
export function newTag(): string {
  return randomBytes(8).toString('hex');
}

/**
 * A response belongs to a client transaction when its top Via has the transaction's branch and its CSeq the
 * transaction's method (17.1.3); the method check tells a CANCEL's answer from the INVITE's (same branch).
 */
export function responseMatchesTransaction(
  response: SipResponse,
  transaction: { branch: string; method: string },
): boolean {
  try {
    const via = getHeader(response, 'Via');
    const cseq = getHeader(response, 'CSeq');
    if (via === undefined || cseq === undefined) return false;
    return parseVia(via).branch === transaction.branch && parseCSeq(cseq).method === transaction.method;
  } catch {
    return false;
  }
}

/** RFC 3261 timer values in milliseconds (Table 4), as data. */
export const SIP_TIMERS = {
  /** Round-trip estimate. */
  T1: 500,
  /** Longest interval between non-INVITE request retransmissions. */
  T2: 4000,
  /** Longest time a message stays in the network. */
  T4: 5000,
  /** INVITE retransmission, starting at T1 and doubling (UDP only). */
  A: 500,
  /** INVITE transaction timeout: 64 * T1. */
  B: 32_000,
  /** Wait for response retransmissions after a non-2xx to an INVITE (UDP). */
  D: 32_000,
  /** Non-INVITE retransmission, starting at T1, doubling up to T2 (UDP only). */
  E: 500,
  /** Non-INVITE transaction timeout: 64 * T1. */
  F: 32_000,
  /** Wait for response retransmissions after a non-INVITE final (UDP): T4. */
  K: 5000,
} as const;

/**
 * The delays (from the first send) of each retransmission over UDP until the transaction times out: INVITE
 * doubles without a cap (Timer A), other requests cap at T2 (Timer E). Reliable transports retransmit nothing.
 */
export function retransmitSchedule(
  method: string,
  transport: 'UDP' | 'TCP',
  timers: Record<keyof typeof SIP_TIMERS, number> = SIP_TIMERS,
): number[] {
  if (transport !== 'UDP') return [];
  const invite = method === 'INVITE';
  const timeout = invite ? timers.B : timers.F;
  const schedule: number[] = [];
  let interval: number = timers.T1;
  let at = interval;
  while (at < timeout) {
    schedule.push(at);
    interval = invite ? interval * 2 : Math.min(interval * 2, timers.T2);
    at += interval;
  }
  return schedule;
}

export type CallOutcome =
  | { outcome: 'answered' }
  | { outcome: 'busy'; code: number; reason: string }
  | { outcome: 'no_answer'; code: number | null; reason: string }
  | { outcome: 'failed'; code: number; reason: string };

/**
 * What the final response to our INVITE means for the call. 486 Busy Here and 600 Busy Everywhere are busy;
 * 408 Request Timeout, 480 Temporarily Unavailable and 487 Request Terminated (our CANCEL after the ring
 * timeout) are no answer; any other 3xx-6xx failed, with its code and reason.
 */
export function inviteOutcome(status: number, reason: string): CallOutcome {
  if (status < 200) throw new RangeError(`${status} is not a final response`);
  if (status < 300) return { outcome: 'answered' };
  if (status === 486 || status === 600) return { outcome: 'busy', code: status, reason };
  if (status === 408 || status === 480 || status === 487) return { outcome: 'no_answer', code: status, reason };
  return { outcome: 'failed', code: status, reason };
}

/** The outcome when nobody answered before our own ring timeout (we send CANCEL). */
export function ringTimeoutOutcome(): CallOutcome {
  return { outcome: 'no_answer', code: null, reason: 'ring timeout' };
}
