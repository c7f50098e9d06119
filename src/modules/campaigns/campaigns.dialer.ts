/**
 * The dialer: a running campaign's worker loop. Each tick claims due contacts (SKIP LOCKED, so dialers never share
 * one), gathers the gate's facts for the batch (a few queries), gates each, and places the allowed ones through the
 * calls engine, in one transaction per batch with its attempt rows: the attempt's key (campaign, contact, attempt
 * number) means a retried job, a restart or a second worker never dials the same attempt twice, and a dialer that dies
 * between claim and dial leaves a claim that goes back to the queue. When a call ends, its outcome is recorded on the
 * attempt, the aggregates move, the contact is retried or finished, and the abandon rate is checked (the compliance
 * pause and the pace governor).
 */
import type { Logger } from 'pino';
import type { CampaignsConfig } from '../../config.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { gate, zonesOf, type GateDecision, type GateFacts } from './campaigns.gate.js';
import { classify, retryAt, type CountedOutcome } from './campaigns.outcomes.js';
import {
  complianceBreach,
  governedConcurrency,
  governedPace,
  windows,
  type ComplianceBreach,
} from './campaigns.pace.js';
import type { CampaignRow, CampaignsRepo, CampaignsTx, ContactSettlement } from './campaigns.repo.js';
import type {
  AgentsForCampaigns,
  CallsForCampaigns,
  ContactsForCampaigns,
  DncForCampaigns,
  NumbersForCampaigns,
} from './campaigns.ports.js';

const DAY = 24 * 3600_000;

/** Why a campaign is paused, with what the pause records. */
export type CampaignPause =
  | { reason: 'manual'; details: { pausedAt: string } }
  | { reason: 'no_usable_number'; details: { numbers: number } }
  | { reason: 'compliance'; details: ComplianceBreach };

export interface DialerDeps {
  repo: CampaignsRepo;
  clock: Clock;
  config: CampaignsConfig;
  agents: AgentsForCampaigns;
  contacts: ContactsForCampaigns;
  dnc: DncForCampaigns;
  numbers: NumbersForCampaigns;
  calls: CallsForCampaigns;
  log: Logger;
  /** Pauses the campaign (and emits its event), in the given transaction. */
  pause(tx: CampaignsTx, campaign: CampaignRow, pause: CampaignPause): Promise<void>;
}

export interface TickResult {
  dialed: number;
  denied: number;
  status: string;
}

type Caller = { id: string; number: string };
type Decided = { contactId: string; fact: GateFacts; decision: GateDecision };
type Ended = NonNullable<Awaited<ReturnType<CallsForCampaigns['campaignCallOutcome']>>>;

export function createCampaignDialer(deps: DialerDeps) {
  const { repo, clock, config, contacts, dnc, numbers, calls, log } = deps;

  /** Calls of the campaign allowed under way at once now: its maximum, lowered by the governor (when it is on). */
  const concurrencyOf = (campaign: CampaignRow) =>
    config.paceGovernor ? governedConcurrency(campaign) : campaign.max_concurrency;

  /** The numbers to call from now, in rotation order; numbers with a bad reputation are put to rest. */
  async function usableNumbers(campaign: CampaignRow): Promise<Caller[]> {
    if (campaign.from_number_ids.length === 0) {
      const fallback = await numbers.callerNumber(campaign.account_id);
      return fallback ? [fallback] : [];
    }
    const now = clock.now();
    const resting = { ...campaign.resting_numbers };
    let changed = false;
    for (const [id, until] of Object.entries(resting)) {
      if (new Date(until) <= now) {
        delete resting[id];
        changed = true;
      }
    }
    const candidates = (await numbers.forCampaign(campaign.account_id, campaign.from_number_ids)).filter(
      (n) => !resting[n.id],
    );
    const usable = [];
    for (const candidate of candidates) {
      if (candidate.label === 'at_risk' || candidate.label === 'spam_likely') {
        resting[candidate.id] = new Date(now.getTime() + config.numberRestMinutes * 60_000).toISOString();
        changed = true;
        log.warn(
          { campaignId: campaign.id, phoneNumberId: candidate.id, label: candidate.label },
          'caller number rested',
        );
      } else {
        usable.push({ id: candidate.id, number: candidate.number });
      }
    }
    if (changed) await repo.update(campaign.account_id, campaign.id, { resting_numbers: JSON.stringify(resting) });
    // Keep the campaign's order, so the rotation is stable.
    const order = new Map(campaign.from_number_ids.map((id, i) => [id, i]));
    return usable.sort((a, b) => order.get(a.id)! - order.get(b.id)!);
  }

  /** How many more calls the campaign may place now: its governed concurrency, its pace per minute, the account's limit. */
  async function capacity(campaign: CampaignRow): Promise<number> {
    const now = clock.now();
    const concurrency = concurrencyOf(campaign);
    const [inFlight, lastMinute, load] = await Promise.all([
      repo.inFlight(campaign.account_id, campaign.id),
      repo.dialedSince(campaign.account_id, campaign.id, new Date(now.getTime() - 60_000)),
      calls.accountCallLoad(campaign.account_id),
    ]);
    return Math.min(
      concurrency - inFlight,
      campaign.calls_per_minute - lastMinute,
      load.limit - load.active,
      config.dialBatch,
    );
  }

  async function gateFacts(campaign: CampaignRow, claimed: Array<{ contact_id: string; attempts: number }>, now: Date) {
    const ids = claimed.map((c) => c.contact_id);
    const rows = await contacts.forDialer(campaign.account_id, ids);
    const [listed, inCall, history] = await Promise.all([
      // Read at the moment of the dial, the batch's numbers at once: a number listed a second ago is not called.
      dnc.listedAmong(
        campaign.account_id,
        rows.map((row) => row.phone),
      ),
      calls.contactsInCall(campaign.account_id, ids),
      repo.contactHistory(
        campaign.account_id,
        ids,
        new Date(now.getTime() - DAY),
        new Date(now.getTime() - config.abandonedRedialHours * 3600_000),
      ),
    ]);
    const byId = new Map(rows.map((row) => [row.id, row]));
    const historyById = new Map(history.map((row) => [row.contact_id, row]));
    const facts = new Map<string, GateFacts>();
    for (const { contact_id, attempts } of claimed) {
      const contact = byId.get(contact_id) ?? null;
      const past = historyById.get(contact_id);
      facts.set(contact_id, {
        contact,
        dncListed: contact !== null && listed.has(contact.phone),
        inCall: inCall.has(contact_id),
        dialsLast24h: Number(past?.recent ?? 0),
        recentlyAbandoned: Number(past?.abandoned ?? 0) > 0,
        attemptNumber: attempts + 1,
      });
    }
    return facts;
  }

  /** Completes the campaign when every contact is finished (or its stop time has passed) and no call is in flight. */
  async function completeIfDone(campaign: CampaignRow): Promise<boolean> {
    const stats = await repo.stats(campaign.account_id, campaign.id);
    const stopped = campaign.stop_at !== null && campaign.stop_at <= clock.now();
    if (!stopped && stats.contacts_done < stats.contacts_total) return false;
    if ((await repo.inFlight(campaign.account_id, campaign.id)) > 0) return false;
    await repo.transaction(async (tx) => {
      const row = await tx.findForUpdate(campaign.account_id, campaign.id);
      if (row?.status !== 'running') return;
      await tx.update(campaign.account_id, campaign.id, {
        status: 'completed',
        completed_at: clock.now(),
        updated_at: clock.now(),
      });
    });
    return true;
  }

  /** Gates each claimed contact at `now`. */
  async function decide(campaign: CampaignRow, claimed: Array<{ contact_id: string; attempts: number }>, now: Date) {
    const facts = await gateFacts(campaign, claimed, now);
    const rules = {
      schedule: campaign.schedule,
      maxAttemptsPerContact: campaign.max_attempts_per_contact,
      config,
    };
    return claimed.map(({ contact_id }): Decided => {
      const fact = facts.get(contact_id)!;
      return { contactId: contact_id, fact, decision: gate(fact, rules, now) };
    });
  }

  /**
   * Records the batch's decisions in the caller's transaction, the campaign's row locked: dial passes of one campaign
   * take turns here, a pass that started before a pause or cancel dials nothing, and two passes together never exceed
   * the limit. Contacts the pass cannot take now (no room left, or the campaign stopped) go back to the queue. Answers
   * whether any did (the pass stops then).
   */
  async function placeBatch(
    tx: CampaignsTx,
    campaign: CampaignRow,
    decisions: Decided[],
    from: Caller[],
    decidedAt: Date,
    result: TickResult,
  ): Promise<boolean> {
    const { account_id: accountId, id: campaignId } = campaign;
    const current = await tx.findForUpdate(accountId, campaignId);
    const running = current?.status === 'running';
    let room = running ? concurrencyOf(current) - (await tx.inFlight(accountId, campaignId)) : 0;
    const toDecide: Decided[] = [];
    const released: string[] = [];
    for (const entry of decisions) {
      if (!running || (entry.decision.allow && room <= 0)) released.push(entry.contactId);
      else {
        if (entry.decision.allow) room--;
        toDecide.push(entry);
      }
    }
    const dialing = toDecide.filter((entry) => entry.decision.allow);
    let turn = dialing.length > 0 ? await tx.takeNumberTurns(accountId, campaignId, dialing.length) : 0;
    const callers = new Map(dialing.map((entry) => [entry.contactId, from[turn++ % from.length]!]));
    const attemptIds = await tx.decideAttempts(
      accountId,
      toDecide.map(({ contactId, fact, decision }) => ({
        id: newId(),
        campaignId,
        contactId,
        number: fact.attemptNumber,
        decision: decision.allow ? 'allow' : decision.reason,
        status: decision.allow ? 'dialed' : 'denied',
        fromNumber: callers.get(contactId)?.number ?? null,
        at: decidedAt,
      })),
    );
    const settled: ContactSettlement[] = released.map((contactId) => ({ contactId, state: 'pending' }));
    const denials = new Map<string, number>();
    const links: Array<{ attemptId: string; callId: string }> = [];
    let finished = 0;
    for (const { contactId, fact, decision } of toDecide) {
      const attemptId = attemptIds.get(contactId);
      if (attemptId === undefined) {
        // Already dialled by another dialer or an earlier run: the call's end moves the contact on.
        settled.push({ contactId, state: 'in_call', attempts: fact.attemptNumber });
      } else if (!decision.allow) {
        result.denied++;
        denials.set(decision.reason, (denials.get(decision.reason) ?? 0) + 1);
        const lastOutcome = `denied: ${decision.reason}`;
        if (decision.retryAt)
          settled.push({ contactId, state: 'pending', nextAttemptAt: decision.retryAt, lastOutcome });
        else {
          settled.push({ contactId, state: 'done', lastOutcome });
          finished++;
        }
      } else {
        const placed = await calls.placeCampaignCall(tx, accountId, {
          agentId: campaign.agent_id,
          contactId,
          campaignId,
          fromNumber: callers.get(contactId)!.number,
          toNumber: fact.contact!.phone,
          voicemailAction: campaign.voicemail_action,
        });
        links.push({ attemptId, callId: placed.callId });
        settled.push({ contactId, state: 'in_call', attempts: fact.attemptNumber });
        result.dialed++;
      }
    }
    await tx.setAttemptCalls(accountId, links);
    await tx.settleContacts(accountId, campaignId, settled);
    await tx.countUpMany(accountId, campaignId, 'denial', denials);
    await tx.addStats(accountId, campaignId, { dialed: links.length, contacts_done: finished });
    return released.length > 0;
  }

  /** One pass of the dialer over a campaign: fills its free capacity with gated dials. */
  async function tick(accountId: string, campaignId: string): Promise<TickResult> {
    let campaign = await repo.find(accountId, campaignId);
    const result: TickResult = { dialed: 0, denied: 0, status: campaign?.status ?? 'missing' };
    if (campaign?.status !== 'running') return result;
    const now = clock.now();
    await repo.releaseStaleClaims(accountId, campaignId, new Date(now.getTime() - config.claimTimeoutSeconds * 1000));
    if (await completeIfDone(campaign)) return { ...result, status: 'completed' };
    const agent = await deps.agents.forCall(accountId, campaign.agent_id);
    if (agent?.status !== 'active') return result;

    for (let round = 0; round < 10; round++) {
      const free = await capacity(campaign);
      if (free <= 0) break;
      const from = await usableNumbers(campaign);
      if (from.length === 0) {
        const numberCount = campaign.from_number_ids.length;
        await repo.transaction(async (tx) => {
          const row = await tx.findForUpdate(accountId, campaignId);
          if (row?.status === 'running')
            await deps.pause(tx, row, { reason: 'no_usable_number', details: { numbers: numberCount } });
        });
        return { ...result, status: 'paused' };
      }
      const claimed = await repo.claimDue(accountId, campaignId, clock.now(), free);
      if (claimed.length === 0) break;
      const decidedAt = clock.now();
      const decisions = await decide(campaign, claimed, decidedAt);
      const current = campaign;
      const stop = await repo.transaction((tx) => placeBatch(tx, current, decisions, from, decidedAt, result));
      campaign = (await repo.find(accountId, campaignId))!;
      if (stop || campaign.status !== 'running') break;
    }
    return result;
  }

  /** The campaign's aggregates moved by one ended call. */
  const statsOf = (counted: CountedOutcome, outcome: Ended, finished: boolean) => ({
    contacts_done: finished ? 1 : 0,
    connected: counted.connected ? 1 : 0,
    live_answered: counted.liveAnswered ? 1 : 0,
    voicemail: counted.kind === 'voicemail' ? 1 : 0,
    busy: counted.kind === 'busy' ? 1 : 0,
    no_answer: counted.kind === 'no_answer' ? 1 : 0,
    failed: counted.kind === 'failed' ? 1 : 0,
    abandoned: counted.abandoned ? 1 : 0,
    talk_seconds: outcome.durationSeconds ?? 0,
    talk_calls: outcome.durationSeconds !== null ? 1 : 0,
  });

  /** After a call ended, in its transaction: the governor sets the pace, and a rate above the limit pauses. */
  async function checkAbandonRate(tx: CampaignsTx, campaign: CampaignRow, abandoned: boolean, now: Date) {
    const { account_id: accountId, id } = campaign;
    const figures = await tx.abandonFigures(accountId, id, windows(now));
    const pace = config.paceGovernor
      ? governedPace(campaign, abandoned, figures.last30Days, await tx.inFlight(accountId, id))
      : campaign.max_concurrency;
    if (pace !== campaign.pace_limit) await tx.update(accountId, id, { pace_limit: pace });
    const breach = complianceBreach(figures.last30Days, config.abandonMinLiveAnswered);
    if (campaign.status === 'running' && breach)
      await deps.pause(tx, campaign, { reason: 'compliance', details: breach });
  }

  /** A campaign call ended: record it on its attempt, retry or finish the contact, and check the abandon rate. */
  async function recordOutcome(accountId: string, callId: string): Promise<{ recorded: boolean; paused?: boolean }> {
    const outcome = await calls.campaignCallOutcome(accountId, callId);
    if (!outcome) return { recorded: false };
    const counted = classify(outcome);
    const now = clock.now();
    // Read before the transaction: on the embedded database a transaction holds the one connection.
    const contact = outcome.contactId ? (await contacts.forDialer(accountId, [outcome.contactId]))[0] : undefined;
    let campaignId: string | null = null;
    const recorded = await repo.transaction(async (tx) => {
      const attempt = await tx.attemptOfCall(accountId, callId);
      if (attempt?.status !== 'dialed') return false;
      campaignId = attempt.campaign_id;
      const campaign = (await tx.findForUpdate(accountId, attempt.campaign_id))!;
      await tx.endAttempt(accountId, attempt.id, {
        status: 'ended',
        outcome: counted.kind,
        live_answered: counted.liveAnswered,
        abandoned: counted.abandoned,
        talk_seconds: outcome.durationSeconds,
        cost_usd: outcome.totalCostUsd,
        disposition: outcome.disposition,
        ended_at: outcome.endedAt ?? now,
      });
      const zones = contact ? zonesOf(contact) : null;
      const next = retryAt(counted.kind, attempt.attempt_number, campaign, zones, now);
      await tx.setContact(
        accountId,
        campaign.id,
        attempt.contact_id,
        next
          ? { state: 'pending', next_attempt_at: next, last_outcome: counted.kind }
          : { state: 'done', last_outcome: counted.kind },
      );
      await tx.addStats(accountId, campaign.id, statsOf(counted, outcome, !next), outcome.totalCostUsd);
      if (outcome.disposition) await tx.countUp(accountId, campaign.id, 'disposition', outcome.disposition);
      await checkAbandonRate(tx, campaign, counted.abandoned, now);
      return true;
    });
    if (recorded && campaignId) log.debug({ campaignId, callId, outcome: counted.kind }, 'campaign call ended');
    return { recorded };
  }

  return { tick, recordOutcome, completeIfDone };
}

export type CampaignDialer = ReturnType<typeof createCampaignDialer>;
