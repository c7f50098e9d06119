/**
 * Every state change of a call, each in one transaction with the events it causes: the call's own timeline
 * (call_events), the domain events webhooks read (call.queued, call.connected, call.completed, call.failed), and the
 * jobs it starts. queued -> dialing (inbound: ringing) -> ringing -> connected -> completed; or failed / busy /
 * no_answer. `finish` is the one way a call ends: the engine's own report, a provider's post-call report and the
 * sweep of lost calls all go through it, and a call that has already ended is left as it is.
 */
import type { Logger } from 'pino';
import type { CallsConfig } from '../../config.js';
import type { TxHandle } from '../../db/repo.js';
import type { Outbox } from '../../events/outbox.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { asksNotToBeCalled } from '../../providers/llm/index.js';
import type { CallsRepo, CallsTx } from './calls.repo.js';
import type { AgentsForCalls, CallAgent, DispositionsForCalls, DncForCalls, PricingForCalls } from './calls.ports.js';
import { isFinal, type CallUsage } from './calls.tables.js';
import { priceCall } from './calls.costs.js';
import { toCallEndedData } from './calls.views.js';
import type { NewCall, NewCallEvent } from './calls.writes.js';
import { outcomeDisposition, type CallReport, type TurnInput } from './calls.rules.js';
import type { Actor } from '../../events/domain-events.js';

type CallRecord = NonNullable<Awaited<ReturnType<CallsRepo['findRow']>>>;

export interface FinishResult {
  callId: string;
  status: string;
  /** True when the call had already ended: nothing was changed. */
  duplicate: boolean;
}

/** A call to queue: everything but what the queue sets itself. */
export type CallToQueue = Omit<NewCall, 'id' | 'status' | 'created_at' | 'updated_at'>;

const DNC_REASON = 'Asked not to be called again during a call';

export interface LifecycleDeps {
  repo: CallsRepo;
  clock: Clock;
  config: CallsConfig;
  agents: AgentsForCalls;
  dnc: DncForCalls;
  dispositions: DispositionsForCalls;
  pricing: PricingForCalls;
  log: Logger;
  /** A signed URL of the call's recording: the event of its end carries it (webhook bodies do). */
  recordingUrl(callId: string, within: TxHandle): Promise<string>;
}

export function createCallLifecycle(deps: LifecycleDeps) {
  const { repo, clock, config, agents, dnc, dispositions, pricing } = deps;

  const subject = (callId: string) => ({ type: 'call', id: callId });

  /** Starts the account's oldest waiting calls while it has free slots (inside the transaction that freed one). */
  async function dispatchQueued(tx: CallsTx, accountId: string) {
    const free = config.maxConcurrentPerAccount - (await tx.countLive(accountId));
    if (free <= 0) return;
    for (const { id } of await tx.oldestQueued(accountId, free)) await tx.send('calls.run', { accountId, callId: id });
  }

  /** Sets the call's disposition, with its event on the call's timeline and a domain event. */
  async function applyDisposition(
    tx: CallsTx,
    accountId: string,
    call: CallRecord,
    code: string,
    source: 'engine' | 'user',
    actor: Actor | null,
  ) {
    if (call.disposition === code) return;
    const now = clock.now();
    await tx.updateCall(accountId, call.id, { disposition: code, updated_at: now });
    const data = { callId: call.id, disposition: code, previous: call.disposition, source };
    await tx.insertEvents(accountId, [{ callId: call.id, type: 'call.disposition_set', data, occurredAt: now }]);
    await tx.emit({ type: 'call.disposition_set', accountId, subject: subject(call.id), data, actor });
  }

  /**
   * Sets a disposition the engine reached, when the account has that code. Once a call is do_not_call the engine
   * never changes it (a user still may).
   */
  async function setEngineDisposition(tx: CallsTx, accountId: string, call: CallRecord, code: string) {
    if (call.disposition === 'do_not_call' || !(await dispositions.isValidCode(accountId, code, tx))) return;
    await applyDisposition(tx, accountId, call, code, 'engine', null);
  }

  /** The far end asked not to be called again: its number goes on the account's list now, in this transaction. */
  async function listFarEnd(tx: CallsTx, accountId: string, call: CallRecord) {
    const phone = call.direction === 'outbound' ? call.to_number : call.from_number;
    if (!phone) return;
    const added = await dnc.addFromCall(tx, accountId, phone, { reason: DNC_REASON, callId: call.id });
    if (added) {
      await tx.insertEvents(accountId, [
        { callId: call.id, type: 'call.dnc_added', data: { callId: call.id, phone }, occurredAt: clock.now() },
      ]);
    }
  }

  async function finishLocked(
    tx: CallsTx,
    accountId: string,
    call: CallRecord,
    report: CallReport,
  ): Promise<FinishResult> {
    if (isFinal(call.status)) return { callId: call.id, status: call.status, duplicate: true };
    const now = clock.now();
    const answeredAt = call.answered_at ?? report.answeredAt ?? null;
    const durationSeconds =
      answeredAt && report.durationMs != null ? Math.max(0, Math.round(report.durationMs / 1000)) : null;
    const usage = report.usage ?? call.usage;

    if (report.transcript?.length) {
      const stored = await tx.countTurns(accountId, call.id);
      await tx.insertTurns(
        accountId,
        report.transcript.slice(stored).map((turn, i) => ({ ...turn, callId: call.id, seq: stored + i })),
      );
    }
    const agent = call.agent_id ? await agents.forCall(accountId, call.agent_id, tx) : undefined;
    const items = await priceCall(pricing, tx, {
      direction: call.direction,
      farEndNumber: call.direction === 'outbound' ? call.to_number : call.from_number,
      durationSeconds: durationSeconds ?? 0,
      usage,
      llmModelId: agent?.liveLlmId ?? null,
    });
    await tx.insertCostItems(accountId, call.id, items, now);

    const ended = await tx.updateCall(accountId, call.id, {
      status: report.status,
      answered_at: answeredAt,
      ended_at: report.endedAt,
      duration_seconds: durationSeconds,
      end_reason: report.endReason,
      recording_storage_key: report.recordingStorageKey ?? call.recording_storage_key,
      provider_call_id: report.providerCallId ?? call.provider_call_id,
      usage: JSON.stringify(usage),
      heartbeat_at: null,
      agent_latency_ms: report.agentLatencyMs ?? call.agent_latency_ms,
      updated_at: now,
    });

    const disposition = report.disposition ?? (call.disposition ? null : outcomeDisposition(report));
    if (disposition === 'do_not_call') await listFarEnd(tx, accountId, ended);
    if (disposition) await setEngineDisposition(tx, accountId, ended, disposition);
    const final = (await tx.findRow(accountId, call.id))!;

    if (report.endReason === 'transferred') {
      const data = { callId: call.id, to: agent?.transfer.number ?? null };
      await tx.insertEvents(accountId, [{ callId: call.id, type: 'call.transferred', data, occurredAt: now }]);
    }
    const type = report.status === 'completed' ? 'call.completed' : 'call.failed';
    const data = {
      callId: call.id,
      agentId: final.agent_id,
      contactId: final.contact_id,
      direction: final.direction,
      status: final.status,
      endReason: final.end_reason,
      durationSeconds: final.duration_seconds,
      disposition: final.disposition,
      totalCostUsd: final.total_cost_usd,
      hasRecording: final.recording_storage_key !== null,
      campaignId: final.campaign_id,
    };
    await tx.insertEvents(accountId, [{ callId: call.id, type, data, occurredAt: now }]);
    // An answered call gets its analysis, and a completed call is announced (call.completed) by that job, with the
    // analysis in it; a call that did not complete is announced now. Subscribers also get what the call's own
    // timeline leaves out: the signed recording URL (webhook bodies), the number it went out from and whether it was
    // answered (that number's reputation).
    if (final.answered_at || report.status === 'completed')
      await tx.send('calls.analyze', { accountId, callId: call.id });
    if (type === 'call.failed') {
      const recordingUrl = final.recording_storage_key ? await deps.recordingUrl(call.id, tx) : null;
      await tx.emit({
        type,
        accountId,
        subject: subject(call.id),
        data: toCallEndedData(final, recordingUrl),
        actor: null,
      });
    }
    if (report.status === 'completed' && final.agent_id)
      await agents.recordCompletedCall(tx, accountId, final.agent_id, report.endedAt);
    await dispatchQueued(tx, accountId);
    return { callId: call.id, status: final.status, duplicate: false };
  }

  return {
    dispatchQueued: (accountId: string) => repo.transaction((tx) => dispatchQueued(tx, accountId)),

    /**
     * Writes a new call in the queue, with its events and the job that starts it; inside `options.outer` (another
     * module's transaction, with its outbox) when given. `testPlacedBy`: a platform administrator placed it, which the
     * audit log of the call's account records.
     */
    async enqueue(
      accountId: string,
      call: CallToQueue,
      options: { actor: Actor | null; testPlacedBy?: Actor; outer?: TxHandle & Outbox },
    ) {
      const { outer } = options;
      const now = clock.now();
      const id = newId();
      const inTransaction = <T>(work: (tx: Omit<CallsTx, 'trx'>) => Promise<T>) =>
        outer ? work({ ...repo.within(outer), send: outer.send, emit: outer.emit }) : repo.transaction(work);
      return inTransaction(async (tx) => {
        await tx.insertCall(accountId, { ...call, id, status: 'queued', created_at: now, updated_at: now });
        const data = {
          callId: id,
          agentId: call.agent_id ?? null,
          contactId: call.contact_id ?? null,
          direction: call.direction,
          status: 'queued' as const,
        };
        await tx.insertEvents(accountId, [{ callId: id, type: 'call.queued', data, occurredAt: now }]);
        await tx.emit({ type: 'call.queued', accountId, subject: subject(id), data, actor: options.actor });
        if (options.testPlacedBy) {
          await tx.emit({
            type: 'call.test_placed',
            accountId,
            subject: subject(id),
            data: {
              callId: id,
              agentId: call.agent_id ?? null,
              toNumber: call.to_number ?? null,
              fromNumber: call.from_number ?? null,
            },
            actor: options.testPlacedBy,
          });
        }
        await tx.send('calls.run', { accountId, callId: id });
        return { callId: id, status: 'queued' as const };
      });
    },

    /**
     * Takes a queued call for this process: when the account has a free slot and the agent is active, the call is
     * pinned to the agent's current version and moves to dialing (inbound: ringing). Null when it must keep waiting
     * (or is no longer queued); a call whose agent was paused or deleted meanwhile fails at once.
     */
    async claim(
      accountId: string,
      callId: string,
      runnerId: string,
      provider: string,
    ): Promise<{ call: CallRecord; agent: CallAgent } | null> {
      return repo.transaction(async (tx) => {
        const call = await tx.findForUpdate(accountId, callId);
        if (call?.status !== 'queued') return null;
        const agent = call.agent_id ? await agents.forCall(accountId, call.agent_id, tx) : undefined;
        const now = clock.now();
        if (agent?.status !== 'active') {
          await finishLocked(tx, accountId, call, { status: 'failed', endReason: 'agent_unavailable', endedAt: now });
          return null;
        }
        const status = call.direction === 'outbound' ? 'dialing' : 'ringing';
        // Held to the commit: the account's calls start one at a time, so two never take its last free slot.
        await tx.lockAccountQueue(accountId);
        const started = await tx.startQueued(
          accountId,
          callId,
          config.maxConcurrentPerAccount,
          { status, started_at: now, runner_id: runnerId, provider, agent_version: agent.version, updated_at: now },
          { type: `call.${status}`, data: { callId, status, agentVersion: agent.version, provider }, occurredAt: now },
        );
        return started ? { call: started, agent } : null;
      });
    },

    async markRinging(accountId: string, callId: string) {
      await repo.transaction(async (tx) => {
        const call = await tx.findForUpdate(accountId, callId);
        if (call?.status !== 'dialing') return;
        const now = clock.now();
        await tx.updateCall(accountId, callId, { status: 'ringing', updated_at: now }, { beat: true });
        await tx.insertEvents(accountId, [
          { callId, type: 'call.ringing', data: { callId, status: 'ringing' }, occurredAt: now },
        ]);
      });
    },

    async markConnected(
      accountId: string,
      callId: string,
      input: { answeredAt: Date; providerCallId: string; answeredBy: 'human' | 'machine' },
    ) {
      await repo.transaction(async (tx) => {
        const call = await tx.findForUpdate(accountId, callId);
        if (!call || isFinal(call.status)) return;
        await tx.updateCall(
          accountId,
          callId,
          {
            status: 'connected',
            answered_at: input.answeredAt,
            provider_call_id: input.providerCallId,
            updated_at: input.answeredAt,
          },
          { beat: true },
        );
        const data = {
          callId,
          status: 'connected' as const,
          answeredBy: input.answeredBy,
          agentId: call.agent_id,
          contactId: call.contact_id,
          direction: call.direction,
        };
        const events: NewCallEvent[] = [{ callId, type: 'call.connected', data, occurredAt: input.answeredAt }];
        if (input.answeredBy === 'machine')
          events.push({ callId, type: 'call.voicemail', data: { callId }, occurredAt: input.answeredAt });
        await tx.insertEvents(accountId, events);
        await tx.emit({ type: 'call.connected', accountId, subject: subject(callId), data, actor: null });
      });
    },

    /**
     * Stores one transcript turn as it is spoken, with the call's usage so far. A far end asking not to be called
     * again is listed at once, and the call gets the do_not_call disposition, in the same transaction.
     */
    async recordTurn(accountId: string, callId: string, seq: number, turn: TurnInput, usage: CallUsage) {
      const event = { data: { callId, seq, ...turn }, occurredAt: clock.now() };
      if (!(turn.speaker === 'caller' && asksNotToBeCalled(turn.text))) {
        await repo.recordLiveTurn(accountId, { ...turn, callId, seq }, usage, event);
        return;
      }
      await repo.transaction(async (tx) => {
        const call = await tx.findForUpdate(accountId, callId);
        if (!call || isFinal(call.status)) return;
        await tx.insertTurns(accountId, [{ ...turn, callId, seq }]);
        await tx.updateCall(accountId, callId, { usage: JSON.stringify(usage) }, { beat: true });
        await tx.insertEvents(accountId, [{ callId, type: 'call.turn', ...event }]);
        await listFarEnd(tx, accountId, call);
        await setEngineDisposition(tx, accountId, call, 'do_not_call');
      });
    },

    /**
     * Ends the call with `report` (see the module comment); a call that already ended is left unchanged. A function
     * decides on the locked row, and may answer null to leave the call as it is.
     */
    finish(
      accountId: string,
      callId: string,
      report: CallReport | ((call: CallRecord) => CallReport | null),
    ): Promise<FinishResult | null> {
      return repo.transaction(async (tx) => {
        const call = await tx.findForUpdate(accountId, callId);
        if (!call) return null;
        const decided = typeof report === 'function' ? report(call) : report;
        if (!decided) return { callId, status: call.status, duplicate: true };
        return finishLocked(tx, accountId, call, decided);
      });
    },

    /** Sets the disposition a user chose (already checked against the account's codes), in place of the engine's. */
    setUserDisposition: (tx: CallsTx, accountId: string, call: CallRecord, code: string, actor: Actor) =>
      applyDisposition(tx, accountId, call, code, 'user', actor),
  };
}

export type CallLifecycle = ReturnType<typeof createCallLifecycle>;
export type { CallRecord };
