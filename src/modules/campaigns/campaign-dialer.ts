/**
 * The dialer: a running campaign's worker loop. Each tick claims due contacts (SKIP LOCKED, so dialers never share
 * one), gathers the gate's facts for the batch (a few queries), gates each, and places the allowed ones through the
 * calls engine, in one transaction per batch with its attempt rows: the attempt's key (campaign, contact, attempt
 * number) means a retried job, a restart or a second worker never dials the same attempt twice, and a dialer that dies
 * between claim and dial leaves a claim that goes back to the queue. When a call ends, its outcome is recorded on the attempt, the aggregates move, the contact is
 * retried or finished, and the abandon rate is checked (the compliance pause and the pace governor).
 */
import type { Logger } from 'pino';
import type { CampaignsConfig } from '../../config.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { nextWindowStart } from './calling-window.js';
import { gate, zonesOf, type GateFacts } from './campaign-gate.js';
import type { CampaignRow, CampaignsRepo, CampaignsTx, ContactSettlement } from './campaigns.repo.js';
import type {
  AgentsForCampaigns,
  CallsForCampaigns,
  ContactsForCampaigns,
  DncForCampaigns,
  NumbersForCampaigns,
} from './campaigns.ports.js';
import { RETRY_OUTCOMES, type RetryOutcome } from './campaigns.tables.js';

/** Over 2 s from a live person's greeting to the agent's first words: the call was abandoned. */
export const ABANDON_LATENCY_MS = 2_000;
/** Above this 30-day abandon rate a campaign is paused for compliance. */
export const ABANDON_PAUSE_THRESHOLD = 0.035;
/** The governor keeps the 30-day rate under this; from it on, it dials one call at a time. */
export const ABANDON_TARGET = 0.03;
/** The governor raises the pace only while one more abandoned call would keep the 30-day rate at or under this. */
export const GOVERNOR_WORKING_TARGET = 0.02;
const DAY = 24 * 3600_000;

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
  /** Pauses the campaign with a reason (and its event), in the given transaction. */
  pause(
    tx: CampaignsTx,
    campaign: CampaignRow,
    reason: 'compliance' | 'no_usable_number',
    details: Record<string, unknown>,
  ): Promise<void>;
}

export interface TickResult {
  dialed: number;
  denied: number;
  status: string;
}

/** Calls of the campaign allowed under way at once by the governor's pace: its maximum, lowered. */
const governedConcurrency = (campaign: CampaignRow) =>
  Math.max(1, Math.min(campaign.max_concurrency, Math.floor(campaign.pace_limit)));

const rate = (figure: { abandoned: number; liveAnswered: number }) =>
  figure.liveAnswered === 0 ? 0 : figure.abandoned / figure.liveAnswered;

export function createCampaignDialer(deps: DialerDeps) {
  const { repo, clock, config, contacts, dnc, numbers, calls, log } = deps;

  /** Calls of the campaign allowed under way at once now: its maximum, lowered by the governor (when it is on). */
  const concurrencyOf = (campaign: CampaignRow) =>
    config.paceGovernor ? governedConcurrency(campaign) : campaign.max_concurrency;

  /** The numbers to call from now, in rotation order; numbers with a bad reputation are put to rest. */
  async function usableNumbers(campaign: CampaignRow): Promise<Array<{ id: string; number: string }>> {
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

  /** One pass of the dialer over a campaign: fills its free capacity with gated dials. */
  async function tick(accountId: string, campaignId: string): Promise<TickResult> {
    let campaign = await repo.find(accountId, campaignId);
    const result: TickResult = { dialed: 0, denied: 0, status: campaign?.status ?? 'missing' };
    if (!campaign || campaign.status !== 'running') return result;
    const now = clock.now();
    await repo.releaseStaleClaims(accountId, campaignId, new Date(now.getTime() - config.claimTimeoutSeconds * 1000));
    if (await completeIfDone(campaign)) return { ...result, status: 'completed' };
    const agent = await deps.agents.forCall(accountId, campaign.agent_id);
    if (!agent || agent.status !== 'active') return result;

    for (let round = 0; round < 10; round++) {
      const free = await capacity(campaign);
      if (free <= 0) break;
      const from = await usableNumbers(campaign);
      if (from.length === 0) {
        await repo.transaction(async (tx) => {
          const row = await tx.findForUpdate(accountId, campaignId);
          if (row?.status === 'running')
            await deps.pause(tx, row, 'no_usable_number', { numbers: campaign!.from_number_ids.length });
        });
        return { ...result, status: 'paused' };
      }
      const claimed = await repo.claimDue(accountId, campaignId, clock.now(), free);
      if (claimed.length === 0) break;
      const decidedAt = clock.now();
      const facts = await gateFacts(campaign, claimed, decidedAt);
      const decisions = claimed.map(({ contact_id }) => {
        const fact = facts.get(contact_id)!;
        const rules = {
          schedule: campaign!.schedule,
          maxAttemptsPerContact: campaign!.max_attempts_per_contact,
          config,
        };
        return { contactId: contact_id, fact, decision: gate(fact, rules, decidedAt) };
      });
      // One transaction for the batch, with the campaign's row locked: dial passes of one campaign take turns here, a
      // pass that started before a pause or cancel dials nothing, and two passes together never exceed the limit.
      const stop = await repo.transaction(async (tx) => {
        const current = await tx.findForUpdate(accountId, campaignId);
        const running = current?.status === 'running';
        let room = running ? concurrencyOf(current) - (await tx.inFlight(accountId, campaignId)) : 0;
        const toDecide: typeof decisions = [];
        const released: string[] = [];
        for (const entry of decisions) {
          // Contacts the pass cannot take now (no room left, or the campaign stopped) go back to the queue.
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
        const settled: ContactSettlement[] = released.map((contactId) => ({
          contactId,
          state: 'pending',
        }));
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
              agentId: campaign!.agent_id,
              contactId,
              campaignId,
              fromNumber: callers.get(contactId)!.number,
              toNumber: fact.contact!.phone,
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
      });
      campaign = (await repo.find(accountId, campaignId))!;
      if (stop || campaign.status !== 'running') break;
    }
    return result;
  }

  /** Outcome of an ended call as the dialer counts it. */
  function classify(outcome: NonNullable<Awaited<ReturnType<CallsForCampaigns['campaignCallOutcome']>>>) {
    const voicemail = outcome.endReason === 'voicemail';
    const connected = outcome.answeredAt !== null;
    const liveAnswered = connected && !voicemail;
    const abandoned = liveAnswered && (outcome.agentLatencyMs ?? 0) > ABANDON_LATENCY_MS;
    let kind: string;
    if (outcome.status === 'busy' || outcome.status === 'no_answer') kind = outcome.status;
    else if (voicemail) kind = 'voicemail';
    else if (liveAnswered) kind = abandoned ? 'abandoned' : 'answered';
    else kind = 'failed';
    return { kind, connected, liveAnswered, abandoned };
  }

  /**
   * The governor: the calls allowed under way (`pace_limit`) after a call ended. It cannot see the agents' capacity,
   * only the 30-day abandon rate over live answers, so it learns the pace from that rate's budget:
   * - an abandoned call halves the pace, below the level it happened at (a burst of them falls to one call fast);
   * - from a 30-day rate of 3% it dials one call at a time;
   * - a call that ended well raises the pace by one, a probe, only while the campaign has the budget for it: one more
   *   abandoned call keeps the 30-day rate at or under 2%, and even every call that can be under way after the raise
   *   abandoned keeps it under 3%. Abandoned calls not yet counted are among those under way, and the first of them to
   *   end halves the pace, so a probe never takes the rate over 3%. The budget is also the governor's memory: after an
   *   abandonment, about 50 more calls answered well per abandoned one come before the next probe, and each level
   *   needs about 33 live answers per call under way.
   * Without live answers there is no budget: a campaign whose calls nobody answers stays at its starting pace.
   */
  function governedPace(
    campaign: CampaignRow,
    abandoned: boolean,
    last30: { abandoned: number; liveAnswered: number },
    underWay: number,
  ): number {
    if (!config.paceGovernor) return campaign.max_concurrency;
    const level = governedConcurrency(campaign);
    if (abandoned) return Math.max(1, Math.floor(level / 2));
    if (rate(last30) >= ABANDON_TARGET) return 1;
    if (level >= campaign.max_concurrency) return level;
    const worstUnderWay = Math.max(level + 1, underWay);
    const withOneMore = (last30.abandoned + 1) / (last30.liveAnswered + 1);
    const withAllUnderWay = (last30.abandoned + worstUnderWay) / (last30.liveAnswered + worstUnderWay);
    return withOneMore <= GOVERNOR_WORKING_TARGET && withAllUnderWay < ABANDON_TARGET ? level + 1 : level;
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
      if (!attempt || attempt.status !== 'dialed') return false;
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
      const retryable = (RETRY_OUTCOMES as readonly string[]).includes(counted.kind)
        ? (counted.kind as RetryOutcome)
        : null;
      const rule = retryable ? campaign.retry_rules[retryable] : undefined;
      const retriesUsed = attempt.attempt_number - 1;
      let next: Date | null = null;
      if (rule && retriesUsed < rule.attempts && attempt.attempt_number < campaign.max_attempts_per_contact) {
        const earliest = new Date(now.getTime() + rule.spacingMinutes * 60_000);
        next = contact ? (nextWindowStart(zonesOf(contact), campaign.schedule, earliest) ?? earliest) : null;
      }
      if (next) {
        await tx.setContact(accountId, campaign.id, attempt.contact_id, {
          state: 'pending',
          next_attempt_at: next,
          last_outcome: counted.kind,
        });
      } else {
        await tx.setContact(accountId, campaign.id, attempt.contact_id, { state: 'done', last_outcome: counted.kind });
      }
      await tx.addStats(
        accountId,
        campaign.id,
        {
          contacts_done: next ? 0 : 1,
          connected: counted.connected ? 1 : 0,
          live_answered: counted.liveAnswered ? 1 : 0,
          voicemail: counted.kind === 'voicemail' ? 1 : 0,
          busy: counted.kind === 'busy' ? 1 : 0,
          no_answer: counted.kind === 'no_answer' ? 1 : 0,
          failed: counted.kind === 'failed' ? 1 : 0,
          abandoned: counted.abandoned ? 1 : 0,
          talk_seconds: outcome.durationSeconds ?? 0,
          talk_calls: outcome.durationSeconds !== null ? 1 : 0,
        },
        outcome.totalCostUsd,
      );
      if (outcome.disposition) await tx.countUp(accountId, campaign.id, 'disposition', outcome.disposition);

      const figures = await tx.abandonFigures(accountId, campaign.id, windows(now));
      const rate30 = rate(figures.last30Days);
      const underWay = config.paceGovernor ? await tx.inFlight(accountId, campaign.id) : 0;
      const pace = governedPace(campaign, counted.abandoned, figures.last30Days, underWay);
      if (pace !== campaign.pace_limit) await tx.update(accountId, campaign.id, { pace_limit: pace });
      if (
        campaign.status === 'running' &&
        figures.last30Days.liveAnswered >= config.abandonMinLiveAnswered &&
        rate30 > ABANDON_PAUSE_THRESHOLD
      ) {
        await deps.pause(tx, campaign, 'compliance', {
          abandonRate: Number(rate30.toFixed(6)),
          threshold: ABANDON_PAUSE_THRESHOLD,
          window: '30d',
          abandoned: figures.last30Days.abandoned,
          liveAnswered: figures.last30Days.liveAnswered,
        });
      }
      return true;
    });
    if (recorded && campaignId) log.debug({ campaignId, callId, outcome: counted.kind }, 'campaign call ended');
    return { recorded };
  }

  return { tick, recordOutcome, completeIfDone };
}

/** The abandon-rate windows ending at `now`: 30 days, since midnight UTC, the last hour. */
export function windows(now: Date) {
  const today = new Date(now);
  today.setUTCHours(0, 0, 0, 0);
  return { last30Days: new Date(now.getTime() - 30 * DAY), today, lastHour: new Date(now.getTime() - 3600_000) };
}

export { rate as abandonRate };
export type CampaignDialer = ReturnType<typeof createCampaignDialer>;
