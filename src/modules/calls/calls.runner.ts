/**
 * Runs calls in this process: takes a queued call (call-lifecycle claim), dials it through the voice provider (or
 * answers an inbound one), holds the conversation, stores the recording, and reports the end through the same
 * `finish` a provider's post-call report uses. While a call is live the process keeps a heartbeat on it, in database
 * time, so a call left behind by a process that died is found and closed (see sweepLostCalls in calls.service.ts).
 */
import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import type { CallsConfig } from '../../config.js';
import { timelineOf, type Clock } from '../../lib/clock.js';
import { encodeWav, mixStereoRecording } from '../../lib/wav.js';
import type { ObjectStorage } from '../../providers/storage/index.js';
import type { TtsProvider } from '../../providers/tts/index.js';
import type { FarEndLine, FarEndParty, VoiceProvider } from '../../providers/voice/index.js';
import type { CallsRepo } from './calls.repo.js';
import type { AgentLlmForCalls, CallAgent, CampaignVoicemailForCalls, ContactsForCalls } from './calls.ports.js';
import type { CallUsage } from './calls.tables.js';
import type { CallLifecycle, CallRecord, CallReport } from './calls.lifecycle.js';
import { converse, type ConversationResult } from './calls.conversation.js';

/** Recordings are telephone quality: 8 kHz, agent left, far end right. */
export const RECORDING_SAMPLE_RATE = 8000;

export const recordingKey = (accountId: string, callId: string) => `recordings/${accountId}/${callId}.wav`;

export interface RunnerDeps {
  lifecycle: CallLifecycle;
  repo: CallsRepo;
  contacts: ContactsForCalls;
  voice: VoiceProvider;
  agentLlm: AgentLlmForCalls;
  campaignVoicemail?: CampaignVoicemailForCalls;
  tts: TtsProvider;
  objects: ObjectStorage;
  clock: Clock;
  config: CallsConfig;
  /** This process's id on the calls it runs. */
  runnerId: string;
  log: Logger;
}

interface LiveCall {
  /** Ends the call from outside; the reason becomes its endReason. */
  abort: AbortController;
  line: FarEndLine | null;
  /** Settles once the call's end is written. */
  done: Promise<void>;
}

/** A simulated agent slot held by a conversation: its call's time line, and when on it the slot was taken. */
interface AgentSlot {
  timeline: Clock;
  heldSince: number;
}

/** A person waiting for a slot: the held slots' times when they answered, how much silence they take, their answer. */
interface SlotWaiter {
  marks: Map<AgentSlot, number>;
  patienceMs: number;
  settle(freed: AgentSlot | null): void;
}

/** A person hearing silence this long after answering hangs up. */
const SILENCE_HANGUP_MS = 5_000;

/** Deterministic share of calls: the same call id always falls on the same side of `rate`. */
const falls = (callId: string, rate: number) =>
  rate > 0 && createHash('sha1').update(callId).digest().readUInt16BE(0) / 65536 < rate;

export function createCallRunner(deps: RunnerDeps) {
  const { lifecycle, repo, contacts, voice, agentLlm, tts, objects, clock, config, runnerId, log } = deps;
  const live = new Map<string, LiveCall>();
  // Every call this process has begun to claim and not yet finished; `live` holds those past the claim.
  const carried = new Set<string>();
  /** Set when the process stops: it starts no more calls (queued ones wait for another instance or the restart). */
  let stopping = false;

  // Simulated agent capacity (SIM_AGENT_SLOTS): the conversations this process holds at once, and the people waiting
  // for one of them to end, first come first served.
  let agentsBusy = 0;
  const agentSlots = new Set<AgentSlot>();
  const slotWaiters: SlotWaiter[] = [];

  /** A slot is free: it passes to the first person waiting (still counted busy), else it is free. */
  function passSlotOn(freed: AgentSlot) {
    const next = slotWaiters.shift();
    if (next) next.settle(freed);
    else agentsBusy--;
  }

  function releaseSlot(slot: AgentSlot) {
    if (agentSlots.delete(slot)) passSlotOn(slot);
  }

  /**
   * How long a waiting person has heard silence: as far as any conversation has gone since they answered, each on its
   * own time line (a conversation that took its slot later counts from then).
   */
  function silenceOf(waiter: SlotWaiter, freed?: AgentSlot): number {
    let silence = 0;
    for (const slot of new Set([...waiter.marks.keys(), ...agentSlots, ...(freed ? [freed] : [])])) {
      const since = Math.max(waiter.marks.get(slot) ?? slot.heldSince, slot.heldSince);
      silence = Math.max(silence, slot.timeline.now().getTime() - since);
    }
    return silence;
  }

  /** A conversation's time moved on: people waiting who have now heard enough silence hang up. */
  function checkPatience() {
    for (const waiter of [...slotWaiters]) {
      if (silenceOf(waiter) < waiter.patienceMs) continue;
      slotWaiters.splice(slotWaiters.indexOf(waiter), 1);
      waiter.settle(null);
    }
  }

  /** The call's own time line (see Clock.timeline), telling the people waiting for a slot when it moves on. */
  function callTimeline(): Clock {
    const own = timelineOf(clock);
    return {
      now: () => own.now(),
      async sleep(ms, signal) {
        await own.sleep(ms, signal);
        checkPatience();
      },
    };
  }

  /**
   * Waits for a slot handed over (null: the person hung up first), with the silence heard until then; rejects when the
   * call is ended first.
   */
  function slotFreed(patienceMs: number, signal: AbortSignal): Promise<{ freed: AgentSlot | null; silenceMs: number }> {
    const marks = new Map([...agentSlots].map((slot) => [slot, slot.timeline.now().getTime()]));
    return new Promise((resolve, reject) => {
      const waiter: SlotWaiter = {
        marks,
        patienceMs,
        settle(freed) {
          signal.removeEventListener('abort', onAbort);
          resolve({ freed, silenceMs: freed ? silenceOf(waiter, freed) : patienceMs });
        },
      };
      const onAbort = () => {
        slotWaiters.splice(slotWaiters.indexOf(waiter), 1);
        reject(signal.reason);
      };
      slotWaiters.push(waiter);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  /**
   * Waits until the agent pipeline can take the answered call: a late start (SIM_AGENT_LATE_START_RATE) or no free
   * agent slot (SIM_AGENT_SLOTS). Answers how long the person waited, on the call's own time line, whether they gave up
   * first, and the slot the conversation holds. With every slot taken the person waits for a conversation to end, for
   * as long as the conversations went on after they answered, each on its own time line: on a virtual clock the wait
   * does not depend on how fast the process runs.
   */
  async function agentReady(
    callId: string,
    timeline: Clock,
    signal: AbortSignal,
  ): Promise<{ waitedMs: number; gaveUp: boolean; slot?: AgentSlot }> {
    let waitedMs = 0;
    if (falls(callId, config.simLateStartRate)) {
      await timeline.sleep(config.simLateStartMs, signal);
      waitedMs += config.simLateStartMs;
    }
    if (config.simAgentSlots > 0 && agentsBusy >= config.simAgentSlots) {
      const patienceMs = Math.max(0, SILENCE_HANGUP_MS - waitedMs);
      const began = timeline.now().getTime();
      const { freed, silenceMs } = await slotFreed(patienceMs, signal);
      // The silence goes on this call's own time line too: what has not passed on it already (it has on a real clock).
      const rest = Math.max(0, Math.min(silenceMs, patienceMs) - (timeline.now().getTime() - began));
      if (!freed || silenceMs >= patienceMs) {
        // They hung up before a slot came free: the slot goes on to the next person waiting.
        if (freed) passSlotOn(freed);
        await timeline.sleep(rest, signal);
        return { waitedMs: waitedMs + patienceMs, gaveUp: true };
      }
      try {
        await timeline.sleep(rest, signal);
      } catch (error) {
        passSlotOn(freed);
        throw error;
      }
      waitedMs += silenceMs;
    } else {
      agentsBusy++;
    }
    const slot = { timeline, heldSince: timeline.now().getTime() };
    agentSlots.add(slot);
    return { waitedMs, gaveUp: false, slot };
  }

  async function farEndParty(accountId: string, call: CallRecord): Promise<FarEndParty> {
    const phone = (call.direction === 'outbound' ? call.to_number : call.from_number) ?? '';
    const contact = call.contact_id ? await contacts.forCall(accountId, { id: call.contact_id }) : undefined;
    return {
      phone,
      firstName: contact?.firstName ?? null,
      lastName: contact?.lastName ?? null,
      attributes: contact?.attributes ?? {},
    };
  }

  async function storeRecording(accountId: string, callId: string, result: ConversationResult): Promise<string | null> {
    if (result.clips.agent.length === 0 && result.clips.callee.length === 0) return null;
    try {
      const audio = mixStereoRecording({
        sampleRate: RECORDING_SAMPLE_RATE,
        ...result.clips,
        durationMs: result.durationMs,
      });
      const key = recordingKey(accountId, callId);
      await objects.put(key, encodeWav(audio), { contentType: 'audio/wav' });
      return key;
    } catch (error) {
      log.error({ err: error, callId }, 'the call recording could not be stored; the call goes on without one');
      return null;
    }
  }

  async function conduct(
    accountId: string,
    call: CallRecord,
    agent: Parameters<typeof converse>[0]['agent'],
    control: LiveCall,
    usage: { current: CallUsage },
  ): Promise<CallReport> {
    const party = await farEndParty(accountId, call);
    const { signal } = control.abort;
    let line: FarEndLine;
    if (call.direction === 'outbound') {
      let dial;
      try {
        dial = await voice.placeCall(
          { callId: call.id, from: call.from_number ?? '', to: call.to_number ?? '', farEnd: party, signal },
          { ringing: () => lifecycle.markRinging(accountId, call.id) },
        );
      } catch (error) {
        if (signal.aborted) return { status: 'failed', endReason: String(signal.reason), endedAt: clock.now() };
        throw error;
      }
      if (dial.status !== 'answered') {
        const endReason = dial.status === 'failed' ? `failed: ${dial.reason}` : dial.status;
        return { status: dial.status, endReason, endedAt: clock.now(), providerCallId: dial.providerCallId };
      }
      line = dial.line;
    } else {
      line = await voice.answerCall({
        callId: call.id,
        to: call.to_number ?? '',
        from: call.from_number ?? '',
        farEnd: party,
        signal,
      });
    }
    control.line = line;
    // From the answer on, the call's waits and turn offsets are measured on its own time line: on a virtual clock the
    // shared time also moves with every other call's sleeps, which would make a call that overlaps others look late.
    const timeline = callTimeline();
    const answeredAt = timeline.now();
    await lifecycle.markConnected(accountId, call.id, {
      answeredAt,
      providerCallId: line.providerCallId,
      answeredBy: line.answeredBy,
    });
    const ready = await agentReady(call.id, timeline, signal);
    if (ready.gaveUp) {
      return {
        status: 'completed',
        endReason: 'caller_hangup',
        answeredAt,
        durationMs: ready.waitedMs,
        endedAt: new Date(answeredAt.getTime() + ready.waitedMs),
        agentLatencyMs: ready.waitedMs,
        providerCallId: line.providerCallId,
      };
    }
    // Latency: from the end of the person's greeting (or the answer) until the agent's first words. Turn offsets count
    // from the answer, so an agent that speaks first has the wait in its offset already; a greeting heard after the
    // wait (the simulation's order) was really said while the person waited, so the wait is added to it.
    let greetingEndMs: number | null = null;
    let agentLatencyMs: number | null = null;
    let seq = 0;
    let result: ConversationResult;
    try {
      result = await converse({
        agent,
        line,
        clock: timeline,
        llm: agentLlm({ accountId, agent, callId: call.id }),
        tts,
        answeredAt,
        maxDurationMs: config.maxDurationSeconds * 1000,
        signal: AbortSignal.any([signal, line.dropped]),
        onTurn: (turn, used) => {
          usage.current = used;
          if (agentLatencyMs === null && turn.speaker === 'caller') greetingEndMs = turn.endMs ?? greetingEndMs;
          if (agentLatencyMs === null && turn.speaker === 'agent')
            agentLatencyMs =
              greetingEndMs === null
                ? (turn.startMs ?? 0)
                : ready.waitedMs + Math.max(0, (turn.startMs ?? 0) - greetingEndMs);
          return lifecycle.recordTurn(accountId, call.id, seq++, turn, used);
        },
      });
    } finally {
      if (ready.slot) releaseSlot(ready.slot);
    }
    const recordingStorageKey = await storeRecording(accountId, call.id, result);
    return {
      agentLatencyMs: line.answeredBy === 'human' ? (agentLatencyMs ?? result.durationMs) : null,
      status: 'completed',
      endReason: result.endReason,
      disposition: result.disposition,
      answeredAt,
      durationMs: result.durationMs,
      endedAt: new Date(answeredAt.getTime() + result.durationMs),
      usage: result.usage,
      recordingStorageKey,
      providerCallId: line.providerCallId,
    };
  }

  /** A campaign's call does at an answering machine what its campaign says (leaving the agent's message, or not). */
  async function withCampaignVoicemail(accountId: string, call: CallRecord, agent: CallAgent): Promise<CallAgent> {
    if (!call.campaign_id || !deps.campaignVoicemail) return agent;
    const action = await deps.campaignVoicemail({ accountId, campaignId: call.campaign_id });
    return action ? { ...agent, voicemail: { ...agent.voicemail, action } } : agent;
  }

  /** Claims the call (see lifecycle.claim) and runs it to its end; started false when it cannot start now. */
  async function claimAndRun(accountId: string, callId: string): Promise<{ started: boolean; status?: string }> {
    const claimed = await lifecycle.claim(accountId, callId, runnerId, voice.name);
    if (!claimed) return { started: false };
    let ended!: () => void;
    const control: LiveCall = {
      abort: new AbortController(),
      line: null,
      done: new Promise((resolve) => (ended = resolve)),
    };
    live.set(callId, control);
    // Claimed while the process began to stop: it ends at once, like the calls already running.
    if (stopping) control.abort.abort('server_shutdown');
    const usage = { current: {} as CallUsage };
    const beat = setInterval(
      () =>
        void repo
          .heartbeat(accountId, callId, runnerId, usage.current)
          .catch((error: unknown) => log.warn({ err: error, callId }, 'heartbeat failed')),
      Math.max(250, (config.heartbeatStaleSeconds * 1000) / 3),
    );
    beat.unref();
    let report: CallReport;
    try {
      report = await conduct(
        accountId,
        claimed.call,
        await withCampaignVoicemail(accountId, claimed.call, claimed.agent),
        control,
        usage,
      );
    } catch (error) {
      log.error({ err: error, callId }, 'call failed');
      const reason = `error: ${error instanceof Error ? error.message : String(error)}`.slice(0, 500);
      // Whatever was said so far stays; the call ends now, with its costs to this moment.
      report = control.line
        ? { status: 'completed', endReason: reason, endedAt: clock.now(), durationMs: null }
        : { status: 'failed', endReason: reason, endedAt: clock.now() };
      const row = await repo.findRow(accountId, callId);
      if (row?.answered_at) report.durationMs = clock.now().getTime() - row.answered_at.getTime();
    } finally {
      clearInterval(beat);
      live.delete(callId);
      control.line?.hangup();
    }
    const finished = await lifecycle.finish(accountId, callId, report).finally(ended);
    return { started: true, status: finished?.status };
  }

  return {
    /** Runs the call if it can start now (see lifecycle.claim); resolves when it has ended. */
    async run(accountId: string, callId: string): Promise<{ started: boolean; status?: string }> {
      if (stopping) return { started: false };
      // Carried from before the claim commits: the sweep must never close a call this process is starting as lost.
      carried.add(callId);
      try {
        return await claimAndRun(accountId, callId);
      } finally {
        carried.delete(callId);
      }
    },

    /**
     * Ends every call this process runs with endReason `reason` and its costs to this moment, and waits until their
     * ends are written: a stopping server closes its own calls rather than leave them to the sweep after a crash.
     */
    async hangupAll(reason: string): Promise<number> {
      stopping = true;
      const calls = [...live.values()];
      for (const call of calls) {
        // The reason first: the line's own drop would otherwise name the end.
        call.abort.abort(reason);
        if (call.line) voice.hangup(call.line.providerCallId);
      }
      await Promise.allSettled(calls.map((call) => call.done));
      return calls.length;
    },

    /** Ends a call this process is running; false when it runs no such call. */
    hangup(callId: string): boolean {
      const call = live.get(callId);
      if (!call) return false;
      if (call.line) voice.hangup(call.line.providerCallId);
      call.abort.abort('operator_hangup');
      return true;
    },

    /** Has the agent of a connected call this process is running say `text` next; false when it cannot. */
    inject(callId: string, text: string): boolean {
      const line = live.get(callId)?.line;
      return line ? voice.inject(line.providerCallId, text) : false;
    },

    /** Whether this process is starting or running the call. */
    carries: (callId: string) => carried.has(callId),
  };
}

export type CallRunner = ReturnType<typeof createCallRunner>;
