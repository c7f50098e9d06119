/**
 * The conversation of a connected call, turn by turn. Whoever picked up speaks first, as on a real line: on an
 * outbound call the agent waits for the callee's greeting (and speaks first only after a short silence), on an
 * inbound call the agent answers with its first message (without one, it waits for the caller). The agent opens with
 * its first message, its blanks filled from the contact, then speaks through the LLM with its assembled prompt and
 * the end_call tool (and transfer_call when it has a transfer number); the far end answers through the voice
 * provider. Every turn lasts as long as its audio (or a words-per-minute estimate without audio), on the clock, and is
 * stored when it is spoken. The call ends when the agent calls end_call or transfer_call, the far end hangs up (the
 * call's disposition: hung_up), an operator hangs up, or the maximum duration passes. An answering machine gets the
 * agent's voicemail setting: hang up, or leave the message after the beep.
 */
import type { Clock } from '../../lib/clock.js';
import { timeZonesOfNumber } from '../../lib/phone-timezones.js';
import type { RecordingClip } from '../../lib/wav.js';
import {
  CALL_DISPOSITIONS,
  collectChat,
  END_CALL_TOOL,
  transferCallTool,
  type AgentScript,
  type ChatMessage,
  type LlmClient,
  type ToolCall,
  type ToolDefinition,
} from '../../providers/llm/index.js';
import { fillSpoken, parseClosers, type CallFacts } from '../../providers/llm/playbook-script.js';
import { ProviderError } from '../../providers/provider-error.js';
import type { TtsProvider } from '../../providers/tts/index.js';
import type { FarEndLine, FarEndParty, Utterance } from '../../providers/voice/index.js';
import type { CallAgent } from './calls.ports.js';
import type { CallUsage } from './calls.tables.js';
import type { TurnInput } from './calls.rules.js';

/** The pause before each turn, as people leave between sentences. */
export const TURN_PAUSE_MS = 400;
/** Speaking pace for a turn without audio: 160 words a minute. */
const MS_PER_WORD = 375;
/** However long the limit, a conversation this many agent turns long is ended. */
const MAX_AGENT_TURNS = 60;
/** On an outbound call the agent waits this long for a greeting before it speaks first. */
export const SILENCE_BEFORE_SPEAKING_MS = 1_500;
/** The disposition of a call the other side hung up before the agent ended it. */
export const HUNG_UP = 'hung_up';

export interface ConversationInput {
  agent: CallAgent;
  line: FarEndLine;
  /** outbound: the callee picks up and greets first; inbound: the agent picks up and opens. */
  direction: 'outbound' | 'inbound';
  /** Who the call is with (the contact): their name and columns fill the agent's blanks, their number gives the zone. */
  farEnd?: FarEndParty;
  clock: Clock;
  /** The agent's LLM for this call (see AgentLlmForCalls): it puts the agent's prompt and knowledge in front. */
  llm: LlmClient;
  tts: TtsProvider;
  /** The moment the call was answered: turn offsets count from it, and so does the recording. */
  answeredAt: Date;
  maxDurationMs: number;
  /** Aborted with the reason the call ends (operator_hangup, caller_hangup) when it is ended from outside. */
  signal: AbortSignal;
  /** Stores a turn as it is spoken, with the usage so far. */
  onTurn(turn: TurnInput, usage: CallUsage): Promise<void>;
}

export interface ConversationResult {
  /** agent_hangup, transferred, caller_hangup, operator_hangup, voicemail, max_duration */
  endReason: string;
  disposition: string | null;
  durationMs: number;
  usage: CallUsage;
  clips: { agent: RecordingClip[]; callee: RecordingClip[] };
}

/** Ends the conversation from inside a turn (the time is up, or someone hung up). */
class Ended extends Error {
  constructor(readonly reason: string) {
    super(`call ended: ${reason}`);
  }
}

const estimatedMs = (text: string) => Math.max(600, text.trim().split(/\s+/).filter(Boolean).length * MS_PER_WORD);

function parseArguments(call: ToolCall): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(call.arguments || '{}');
    return parsed && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** What the agent knows of the call: the contact's name and columns, the callee's time zone, the moment it was answered. */
export function callFactsOf(input: Pick<ConversationInput, 'direction' | 'farEnd' | 'answeredAt'>): CallFacts {
  const { farEnd } = input;
  return {
    firstName: farEnd?.firstName ?? null,
    lastName: farEnd?.lastName ?? null,
    attributes: farEnd?.attributes ?? {},
    timeZone: farEnd?.phone ? (timeZonesOfNumber(farEnd.phone)[0] ?? null) : null,
    answeredAt: input.answeredAt.toISOString(),
    direction: input.direction,
  };
}

/** end_call, with the disposition codes the agent's closers name added to the ones every engine knows. */
function endCallTool(closers: string): ToolDefinition {
  const codes = parseClosers(closers).flatMap((closer) => (closer.code ? [closer.code] : []));
  if (codes.length === 0) return END_CALL_TOOL;
  const parameters = END_CALL_TOOL.parameters as { properties: Record<string, unknown> };
  return {
    ...END_CALL_TOOL,
    parameters: {
      ...END_CALL_TOOL.parameters,
      properties: {
        ...parameters.properties,
        disposition: { type: 'string', enum: [...new Set([...CALL_DISPOSITIONS, ...codes])] },
      },
    },
  };
}

export async function converse(input: ConversationInput): Promise<ConversationResult> {
  const { agent, line, clock, llm, tts, signal } = input;
  const usage: CallUsage = { llmInputTokens: 0, llmOutputTokens: 0, ttsCharacters: 0, sttMs: 0 };
  const clips: ConversationResult['clips'] = { agent: [], callee: [] };
  const elapsed = () => Math.max(0, clock.now().getTime() - input.answeredAt.getTime());
  const voice = agent.voiceId ?? tts.defaultVoice;

  /** Waits `ms` on the clock, within the call's time left; throws Ended when the time is up or the call is ended. */
  async function wait(ms: number) {
    const left = input.maxDurationMs - elapsed();
    if (left <= 0) throw new Ended('max_duration');
    try {
      await clock.sleep(Math.min(ms, left), signal);
    } catch (error) {
      if (signal.aborted) throw new Ended(String(signal.reason ?? 'operator_hangup'));
      throw error;
    }
    if (ms > left) throw new Ended('max_duration');
  }

  /** One turn: a pause, then the words for as long as they take; stored even when cut short. */
  async function speak(speaker: 'agent' | 'caller', utterance: Utterance) {
    await wait(TURN_PAUSE_MS);
    const startMs = elapsed();
    if (utterance.audio) {
      (speaker === 'agent' ? clips.agent : clips.callee).push({
        pcm: utterance.audio.pcm,
        sampleRate: utterance.audio.sampleRate,
        atMs: startMs,
      });
    }
    let ended: unknown = null;
    await wait(utterance.durationMs).catch((error: unknown) => (ended = error));
    const endMs = elapsed();
    if (speaker === 'caller') usage.sttMs! += endMs - startMs;
    await input.onTurn({ speaker, text: utterance.text, startMs, endMs }, { ...usage });
    if (ended) throw ended;
  }

  async function agentUtterance(text: string): Promise<Utterance> {
    try {
      const speech = await tts.synthesize(text, voice, { signal });
      usage.ttsCharacters! += text.length;
      return { text, audio: speech, durationMs: Math.round((speech.pcm.length * 1000) / speech.sampleRate) };
    } catch (error) {
      if (signal.aborted) throw new Ended(String(signal.reason ?? 'operator_hangup'));
      if (!(error instanceof ProviderError)) throw error;
      return { text, audio: null, durationMs: estimatedMs(text) };
    }
  }

  const call = callFactsOf(input);
  const script: AgentScript = {
    ...agent.parts,
    voicemailMessage: agent.voicemail.action === 'leave_message' ? agent.voicemail.message : '',
    whenToTransfer: agent.transfer.number
      ? agent.transfer.whenToTransfer || 'when they ask to speak to a person'
      : null,
    call,
  };
  const tools = [
    endCallTool(agent.parts.closers),
    ...(agent.transfer.number ? [transferCallTool(agent.transfer.whenToTransfer)] : []),
  ];
  // The system prompt is the LLM's to add (the proxy's path: the prompt parts, then the knowledge retrieved each turn).
  const messages: ChatMessage[] = [];

  /** The agent's next words: what an operator injected, else the LLM's turn. */
  async function agentTurn(): Promise<{ text: string; toolCalls: ToolCall[] }> {
    const injected = line.takeInjected();
    if (injected.length > 0) return { text: injected.join(' '), toolCalls: [] };
    try {
      const turn = await collectChat(llm.chat({ messages, tools, agent: script, signal }));
      usage.llmInputTokens! += turn.usage.inputTokens;
      usage.llmOutputTokens! += turn.usage.outputTokens;
      return { text: turn.message.content?.trim() ?? '', toolCalls: turn.message.toolCalls };
    } catch (error) {
      if (signal.aborted) throw new Ended(String(signal.reason ?? 'operator_hangup'));
      throw error;
    }
  }

  async function run(): Promise<{ endReason: string; disposition: string | null }> {
    if (line.answeredBy === 'machine') {
      const greeting = await line.opening();
      if (greeting) await speak('caller', greeting);
      const message = fillSpoken(script.voicemailMessage ?? '', { call });
      if (message) await speak('agent', await agentUtterance(message));
      return { endReason: 'voicemail', disposition: 'voicemail' };
    }
    const firstMessage = fillSpoken(agent.parts.firstMessage, { call }) ?? '';
    // Whoever picked up speaks first: the callee's "Hello?" on an outbound call, the agent on an inbound one. An
    // inbound agent without a first message waits for the caller instead.
    if (input.direction === 'outbound' || !firstMessage) {
      const opening = await line.opening();
      if (opening) {
        messages.push({ role: 'user', content: opening.text });
        await speak('caller', opening);
      } else if (input.direction === 'outbound') {
        await wait(SILENCE_BEFORE_SPEAKING_MS);
      }
    }
    let agentText = '';
    if (firstMessage) {
      agentText = firstMessage;
      messages.push({ role: 'assistant', content: firstMessage });
      await speak('agent', await agentUtterance(firstMessage));
    }
    for (let turns = 0; ; turns++) {
      if (turns > 0 || !firstMessage) {
        if (turns >= MAX_AGENT_TURNS) return { endReason: 'max_turns', disposition: null };
        const { text, toolCalls } = await agentTurn();
        agentText = text;
        messages.push({ role: 'assistant', content: text || null, ...(toolCalls.length ? { toolCalls } : {}) });
        if (text) await speak('agent', await agentUtterance(text));
        const endCall = toolCalls.find((call) => call.name === 'end_call');
        if (endCall) {
          const disposition = parseArguments(endCall).disposition;
          return { endReason: 'agent_hangup', disposition: typeof disposition === 'string' ? disposition : null };
        }
        if (toolCalls.some((call) => call.name === 'transfer_call'))
          return { endReason: 'transferred', disposition: 'transferred' };
      }
      const reply = await line.respond(agentText);
      if (reply === null) return { endReason: 'caller_hangup', disposition: HUNG_UP };
      messages.push({ role: 'user', content: reply.text });
      await speak('caller', reply);
    }
  }

  let outcome: { endReason: string; disposition: string | null };
  try {
    outcome = await run();
  } catch (error) {
    if (!(error instanceof Ended)) throw error;
    outcome = { endReason: error.reason, disposition: null };
  }
  return { ...outcome, durationMs: Math.min(elapsed(), input.maxDurationMs), usage, clips };
}
