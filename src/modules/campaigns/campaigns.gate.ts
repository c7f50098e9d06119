/**
 * The pre-dial gate: one function that answers allow, or deny with a reason, for one contact about to be dialled.
 * The facts it decides on are gathered for a whole batch first (a few queries), then each contact is decided alone.
 */
import type { CampaignsConfig } from '../../config.js';
import { timeZonesOfNumber } from '../../lib/phone-timezones.js';
import { insideWindow, nextWindowStart, type Schedule } from './campaigns.window.js';
import type { GateDenial } from './campaigns.tables.js';

export interface GateFacts {
  /** Null: the contact was deleted since it was queued. */
  contact: { id: string; phone: string; timezone: string | null; dnc: boolean } | null;
  /** On the account's do-not-call list right now. */
  dncListed: boolean;
  /** A call to the contact is queued or live. */
  inCall: boolean;
  /** Dials of the contact across the account's campaigns in the last 24 hours. */
  dialsLast24h: number;
  /** An abandoned call to the contact within the no-redial period. */
  recentlyAbandoned: boolean;
  /** The attempt about to be made (1 for the first). */
  attemptNumber: number;
}

export interface GateRules {
  schedule: Schedule;
  maxAttemptsPerContact: number;
  config: Pick<CampaignsConfig, 'dailyAttemptLimit' | 'abandonedRedialHours'>;
}

export type GateDecision =
  | { allow: true }
  /** retryAt: when to try the same attempt again; null: the contact is finished. */
  | { allow: false; reason: GateDenial; retryAt: Date | null };

/** The zones a contact is called by: its own time zone when set, else its number's (several: all must agree). */
export const zonesOf = (contact: { phone: string; timezone: string | null }) =>
  contact.timezone ? [contact.timezone] : timeZonesOfNumber(contact.phone);

const HOUR = 3600_000;

export function gate(facts: GateFacts, rules: GateRules, now: Date): GateDecision {
  const deny = (reason: GateDenial, retryAt: Date | null): GateDecision => ({ allow: false, reason, retryAt });
  const { contact } = facts;
  if (!contact) return deny('contact_deleted', null);
  if (contact.dnc || facts.dncListed) return deny('dnc_listed', null);
  if (facts.attemptNumber > rules.maxAttemptsPerContact) return deny('max_attempts', null);
  const zones = zonesOf(contact);
  if (zones.length === 0) return deny('timezone_unknown', null);
  if (!insideWindow(zones, rules.schedule, now)) {
    return deny('outside_window', nextWindowStart(zones, rules.schedule, now) ?? new Date(now.getTime() + 24 * HOUR));
  }
  if (facts.inCall) return deny('contact_in_call', new Date(now.getTime() + 5 * 60_000));
  if (facts.recentlyAbandoned)
    return deny('recently_abandoned', new Date(now.getTime() + rules.config.abandonedRedialHours * HOUR));
  if (facts.dialsLast24h >= rules.config.dailyAttemptLimit)
    return deny('daily_attempt_limit', new Date(now.getTime() + 6 * HOUR));
  return { allow: true };
}
