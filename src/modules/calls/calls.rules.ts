/**
 * The call engine's rules as pure functions: how a call's end is reported (by the engine, a provider or the sweep),
 * the disposition its outcome implies, how late the agent was, and what a campaign's call does at an answering machine.
 */
import { invalidField } from '../../lib/errors.js';
import type { VoicemailAction } from '../agents/agents.tables.js';
import type { CallAgent } from './calls.ports.js';
import type { CallUsage, FinalCallStatus, TranscriptSpeaker } from './calls.tables.js';

export interface TurnInput {
  speaker: TranscriptSpeaker;
  text: string;
  startMs: number | null;
  endMs: number | null;
}

/** How a call ended, as the engine or a provider reports it. */
export interface CallReport {
  status: FinalCallStatus;
  /** caller_hangup, agent_hangup, transferred, voicemail, max_duration, busy, no_answer, failed: …, worker_lost, … */
  endReason: string;
  endedAt: Date;
  answeredAt?: Date | null;
  /** Connected time in milliseconds (answer to hang-up); null when nobody answered. */
  durationMs?: number | null;
  disposition?: string | null;
  providerCallId?: string | null;
  recordingStorageKey?: string | null;
  /** Replaces what the call recorded as it ran, when given. */
  usage?: CallUsage;
  /** Turns to add (a provider that ran the conversation itself); turns already stored are kept. */
  transcript?: TurnInput[];
  /** Milliseconds from a person's greeting until the agent spoke (over 2 s: an abandoned call). */
  agentLatencyMs?: number | null;
}

/**
 * The disposition the network's outcome implies when nobody chose one: busy, no answer, a number that could not be
 * reached, voicemail, a transfer. A call cancelled, cut off or in error gets none.
 */
export function outcomeDisposition(report: Pick<CallReport, 'status' | 'endReason'>): string | null {
  if (report.status === 'busy' || report.status === 'no_answer') return report.status;
  if (report.status === 'failed') return report.endReason.startsWith('failed:') ? 'failed' : null;
  if (report.endReason === 'voicemail' || report.endReason === 'transferred') return report.endReason;
  return null;
}

/** A dial nobody answered ends with the network's status; an unreachable number names the network's reason. */
export function unansweredReport(
  dial: { status: 'busy' | 'no_answer' | 'failed'; reason: string; providerCallId: string },
  endedAt: Date,
): CallReport {
  const endReason = dial.status === 'failed' ? `failed: ${dial.reason}` : dial.status;
  return { status: dial.status, endReason, endedAt, providerCallId: dial.providerCallId };
}

/** A person who hung up in the silence before the agent was ready: a completed call that lasted the wait. */
export function gaveUpReport(answeredAt: Date, waitedMs: number, providerCallId: string): CallReport {
  return {
    status: 'completed',
    endReason: 'caller_hangup',
    answeredAt,
    durationMs: waitedMs,
    endedAt: new Date(answeredAt.getTime() + waitedMs),
    agentLatencyMs: waitedMs,
    providerCallId,
  };
}

/**
 * A call the engine could not carry on: whatever was said stays, and a connected call ends completed, with its time
 * to now; one that never connected failed.
 */
export function errorReport(error: unknown, now: Date, answeredAt: Date | null, connected: boolean): CallReport {
  const endReason = `error: ${error instanceof Error ? error.message : String(error)}`.slice(0, 500);
  const durationMs = answeredAt ? now.getTime() - answeredAt.getTime() : null;
  if (connected) return { status: 'completed', endReason, endedAt: now, durationMs };
  return { status: 'failed', endReason, endedAt: now, ...(answeredAt ? { durationMs } : {}) };
}

/** The report of a call left live by a process that died: failed at its last heartbeat, with its costs to then. */
export function lostCallReport(call: {
  heartbeat_at: Date | null;
  updated_at: Date;
  started_at: Date | null;
  answered_at: Date | null;
}): CallReport {
  const lastAlive = call.heartbeat_at ?? call.updated_at;
  return {
    status: 'failed',
    endReason: 'worker_lost',
    endedAt: call.started_at && lastAlive < call.started_at ? call.started_at : lastAlive,
    durationMs: call.answered_at ? Math.max(0, lastAlive.getTime() - call.answered_at.getTime()) : null,
  };
}

/**
 * The agent's latency: from the end of the person's greeting (or the answer) until the agent's first words; null
 * while the agent has not spoken. Turn offsets count from the answer, so an agent that speaks first has the wait in its
 * offset already; a greeting heard after the wait (the simulation's order) was really said while the person waited,
 * so the wait is added to it.
 */
export function agentLatency(
  turns: ReadonlyArray<Pick<TurnInput, 'speaker' | 'startMs' | 'endMs'>>,
  waitedMs: number,
): number | null {
  let greetingEndMs: number | null = null;
  for (const turn of turns) {
    if (turn.speaker === 'caller') greetingEndMs = turn.endMs ?? greetingEndMs;
    if (turn.speaker === 'agent') {
      const startMs = turn.startMs ?? 0;
      return greetingEndMs === null ? startMs : waitedMs + Math.max(0, startMs - greetingEndMs);
    }
  }
  return null;
}

/** What a campaign's call does at an answering machine: the campaign's action, kept on the call, wins over the agent's. */
export function withVoicemailAction<A extends Pick<CallAgent, 'voicemail'>>(
  agent: A,
  action: VoicemailAction | null,
): A {
  return action ? { ...agent, voicemail: { ...agent.voicemail, action } } : agent;
}

/** A provider's post-call report as the engine's report; times that contradict the call are request errors. */
export function postCallReport(
  input: {
    status: FinalCallStatus;
    endReason?: string;
    answeredAt?: string | null;
    endedAt?: string;
    durationSeconds?: number;
    disposition?: string | null;
    providerCallId?: string;
    recordingStorageKey?: string | null;
    transcript?: Array<{ speaker: TranscriptSpeaker; text: string; startMs?: number | null; endMs?: number | null }>;
    usage?: { llmInputTokens?: number; llmOutputTokens?: number; ttsCharacters?: number; sttSeconds?: number };
  },
  call: { started_at: Date | null },
  now: Date,
): CallReport {
  const answeredAt = input.answeredAt ? new Date(input.answeredAt) : null;
  const endedAt = input.endedAt ? new Date(input.endedAt) : now;
  if (answeredAt && call.started_at && answeredAt < call.started_at) {
    throw invalidField('body/answeredAt', `must not be before the call started (${call.started_at.toISOString()})`);
  }
  if (endedAt < (answeredAt ?? call.started_at ?? endedAt))
    throw invalidField('body/endedAt', 'must not be before the call started or was answered');
  return {
    status: input.status,
    endReason: input.endReason ?? (input.status === 'completed' ? 'caller_hangup' : input.status),
    endedAt,
    answeredAt,
    durationMs: input.durationSeconds !== undefined ? input.durationSeconds * 1000 : null,
    disposition: input.disposition ?? null,
    providerCallId: input.providerCallId ?? null,
    recordingStorageKey: input.recordingStorageKey ?? null,
    transcript: input.transcript?.map((turn) => ({
      speaker: turn.speaker,
      text: turn.text,
      startMs: turn.startMs ?? null,
      endMs: turn.endMs ?? null,
    })),
    ...(input.usage
      ? {
          usage: {
            llmInputTokens: input.usage.llmInputTokens ?? 0,
            llmOutputTokens: input.usage.llmOutputTokens ?? 0,
            ttsCharacters: input.usage.ttsCharacters ?? 0,
            sttMs: (input.usage.sttSeconds ?? 0) * 1000,
          },
        }
      : {}),
  };
}
