/**
 * Runs calls in this process: takes a queued call (lifecycle claim), dials it through the voice provider (or answers
 * an inbound one), holds the conversation, stores the recording, and reports the end through the same `finish` a
 * provider's post-call report uses. While a call is live the process keeps a heartbeat on it, in database time, so a
 * call left behind by a process that died is found and closed (the sweep in calls.engine.ts). The engine knows the
 * voice provider by its port only: the far end, and how soon the agent's side is ready, are the provider's.
 */
import type { Logger } from 'pino';
import type { CallsConfig } from '../../config.js';
import type { Clock } from '../../lib/clock.js';
import { encodeWav, mixStereoRecording } from '../../lib/wav.js';
import type { ObjectStorage } from '../../providers/storage/index.js';
import type { TtsProvider } from '../../providers/tts/index.js';
import type { FarEndLine, FarEndParty, VoiceProvider } from '../../providers/voice/index.js';
import type { CallsRepo } from './calls.repo.js';
import type { AgentLlmForCalls, CallAgent, ContactsForCalls } from './calls.ports.js';
import type { CallUsage } from './calls.tables.js';
import type { CallLifecycle, CallRecord } from './calls.lifecycle.js';
import { converse, HUNG_UP, type ConversationResult } from './calls.conversation.js';
import {
  agentLatency,
  errorReport,
  gaveUpReport,
  unansweredReport,
  withVoicemailAction,
  type CallReport,
  type TurnInput,
} from './calls.rules.js';

/** Recordings are telephone quality: 8 kHz, agent left, far end right. */
export const RECORDING_SAMPLE_RATE = 8000;

/** Where an account's recordings are stored: every key under it is that account's. */
export const recordingsPrefix = (accountId: string) => `recordings/${accountId}/`;
export const recordingKey = (accountId: string, callId: string) => `${recordingsPrefix(accountId)}${callId}.wav`;

export interface RunnerDeps {
  lifecycle: CallLifecycle;
  repo: CallsRepo;
  contacts: ContactsForCalls;
  voice: VoiceProvider;
  agentLlm: AgentLlmForCalls;
  /** Where the agent's turns are written on the call (knowledge used, tokens). */
  turns: Parameters<AgentLlmForCalls>[0]['turns'];
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
  /** What the call used so far, sent with each heartbeat. */
  usage: CallUsage;
  /** Settles once the call's end is written. */
  done: Promise<void>;
}

export function createCallRunner(deps: RunnerDeps) {
  const {
    lifecycle,
    repo,
    contacts,
    voice,
    agentLlm,
    turns: turnRecorder,
    tts,
    objects,
    clock,
    config,
    runnerId,
    log,
  } = deps;
  const live = new Map<string, LiveCall>();
  // Every call this process has begun to claim and not yet finished; `live` holds those past the claim.
  const carried = new Set<string>();
  /** Set when the process stops: it starts no more calls (queued ones wait for another instance or the restart). */
  let stopping = false;

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

  /** Dials the call (or answers it): the connected line, or the report of a call nobody answered. */
  async function connect(
    accountId: string,
    call: CallRecord,
    signal: AbortSignal,
  ): Promise<{ line: FarEndLine; party: FarEndParty } | { report: CallReport }> {
    const party = await farEndParty(accountId, call);
    if (call.direction === 'inbound') {
      const line = await voice.answerCall({
        callId: call.id,
        to: call.to_number ?? '',
        from: call.from_number ?? '',
        farEnd: party,
        signal,
      });
      return { line, party };
    }
    try {
      const dial = await voice.placeCall(
        { callId: call.id, from: call.from_number ?? '', to: call.to_number ?? '', farEnd: party, signal },
        { ringing: () => lifecycle.markRinging(accountId, call.id) },
      );
      return dial.status === 'answered' ? { line: dial.line, party } : { report: unansweredReport(dial, clock.now()) };
    } catch (error) {
      if (signal.aborted)
        return { report: { status: 'failed', endReason: String(signal.reason), endedAt: clock.now() } };
      throw error;
    }
  }

  /** The conversation of a connected call, its turns stored as they are spoken; the line is hung up at its end. */
  async function talk(
    accountId: string,
    call: CallRecord,
    agent: CallAgent,
    { line, party }: { line: FarEndLine; party: FarEndParty },
    control: LiveCall,
  ) {
    const answeredAt = line.clock.now();
    await lifecycle.markConnected(accountId, call.id, {
      answeredAt,
      providerCallId: line.providerCallId,
      answeredBy: line.answeredBy,
    });
    const ready = await line.agentReady(control.abort.signal);
    // Hung up in the silence before the agent spoke: an early hang-up, never a call without a disposition.
    if (ready.gaveUp) return { ...gaveUpReport(answeredAt, ready.waitedMs, line.providerCallId), disposition: HUNG_UP };
    const turns: TurnInput[] = [];
    let result: ConversationResult;
    try {
      result = await converse({
        agent,
        line,
        direction: call.direction,
        farEnd: party,
        clock: line.clock,
        llm: agentLlm({ accountId, agent, callId: call.id, turns: turnRecorder }),
        tts,
        answeredAt,
        maxDurationMs: config.maxDurationSeconds * 1000,
        signal: AbortSignal.any([control.abort.signal, line.dropped]),
        onTurn: (turn, used) => {
          control.usage = used;
          turns.push(turn);
          return lifecycle.recordTurn(accountId, call.id, turns.length - 1, turn, used);
        },
      });
    } finally {
      // The agent's side is free for the next call as soon as the conversation ends.
      line.hangup();
    }
    const recordingStorageKey = await storeRecording(accountId, call.id, result);
    return {
      agentLatencyMs: line.answeredBy === 'human' ? (agentLatency(turns, ready.waitedMs) ?? result.durationMs) : null,
      status: 'completed',
      endReason: result.endReason,
      disposition: result.disposition,
      answeredAt,
      durationMs: result.durationMs,
      endedAt: new Date(answeredAt.getTime() + result.durationMs),
      usage: result.usage,
      recordingStorageKey,
      providerCallId: line.providerCallId,
    } satisfies CallReport;
  }

  async function conduct(accountId: string, call: CallRecord, agent: CallAgent, control: LiveCall) {
    const connected = await connect(accountId, call, control.abort.signal);
    if ('report' in connected) return connected.report;
    control.line = connected.line;
    return talk(accountId, call, agent, connected, control);
  }

  /** Keeps the call's heartbeat, with its usage so far, until the returned stop is called. */
  function keepHeartbeat(accountId: string, callId: string, control: LiveCall) {
    const beat = setInterval(
      () =>
        void repo
          .heartbeat(accountId, callId, runnerId, control.usage)
          .catch((error: unknown) => log.warn({ err: error, callId }, 'heartbeat failed')),
      Math.max(250, (config.heartbeatStaleSeconds * 1000) / 3),
    );
    beat.unref();
    return () => clearInterval(beat);
  }

  /** Claims the call (see lifecycle.claim) and runs it to its end; started false when it cannot start now. */
  async function claimAndRun(accountId: string, callId: string): Promise<{ started: boolean; status?: string }> {
    const claimed = await lifecycle.claim(accountId, callId, runnerId, voice.name);
    if (!claimed) return { started: false };
    let ended!: () => void;
    const control: LiveCall = {
      abort: new AbortController(),
      line: null,
      usage: {},
      done: new Promise((resolve) => (ended = resolve)),
    };
    live.set(callId, control);
    // Claimed while the process began to stop: it ends at once, like the calls already running.
    if (stopping) control.abort.abort('server_shutdown');
    const stopHeartbeat = keepHeartbeat(accountId, callId, control);
    const agent = withVoicemailAction(claimed.agent, claimed.call.voicemail_action);
    let report: CallReport;
    try {
      report = await conduct(accountId, claimed.call, agent, control);
    } catch (error) {
      log.error({ err: error, callId }, 'call failed');
      const row = await repo.findRow(accountId, callId);
      report = errorReport(error, clock.now(), row?.answered_at ?? null, control.line !== null);
    } finally {
      stopHeartbeat();
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
