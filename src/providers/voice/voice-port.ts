/**
 * The voice-provider port: the telephone network a call goes through. It dials (or answers an inbound call), reports
 * progress, and carries the conversation both ways: the far end hears what the agent says and answers. The engine
 * knows only these types; each adapter (the built-in `sim`) implements them.
 */
import type { Clock } from '../../lib/clock.js';
import type { SynthesizedSpeech } from '../tts/speech.js';

/** The person the call is with, as far as the account knows: the contact (or the caller of an inbound call). */
export interface FarEndParty {
  phone: string;
  firstName: string | null;
  lastName: string | null;
  /** The contact's extra columns; the sim reads `persona` from them. */
  attributes: Record<string, string>;
}

export interface PlaceCallRequest {
  callId: string;
  from: string;
  to: string;
  farEnd: FarEndParty;
  /** Aborting it hangs up at once (while dialing, ringing or connected). */
  signal: AbortSignal;
}

export interface AnswerCallRequest {
  callId: string;
  /** Our number, which was called. */
  to: string;
  /** The caller's number. */
  from: string;
  farEnd: FarEndParty;
  signal: AbortSignal;
}

export interface CallProgress {
  /** The far end's phone is ringing. */
  ringing(): Promise<void>;
}

/** Something said on the line: the words, and their audio when the provider has it. */
export interface Utterance {
  text: string;
  /** Mono 16-bit speech; null when no audio is available (the duration is then an estimate). */
  audio: SynthesizedSpeech | null;
  durationMs: number;
}

/** How the far end fared from the answer until the agent could take the call. */
export interface AgentReadiness {
  /** Silence the far end heard first, in milliseconds of the line's clock. */
  waitedMs: number;
  /** The far end hung up before the agent was ready. */
  gaveUp: boolean;
}

/** A connected call's far end, as the agent hears it. */
export interface FarEndLine {
  readonly providerCallId: string;
  /** Who picked up: a person, or an answering machine (whose greeting ends with a beep). */
  readonly answeredBy: 'human' | 'machine';
  /**
   * The call's own time line from the answer on (see Clock.timeline): the conversation's waits and turn offsets pass
   * on it, so a call is not lengthened by the other calls sharing a virtual clock.
   */
  readonly clock: Clock;
  /**
   * Resolves when the agent can take the answered call (at once, unless the provider's agent capacity is all in use or
   * starts late); rejects with the signal's reason when the call is ended first.
   */
  agentReady(signal: AbortSignal): Promise<AgentReadiness>;
  /** What the far end says on picking up before the agent speaks (a "Hello?", a voicemail greeting), or null. */
  opening(): Promise<Utterance | null>;
  /** The far end hears the agent's words and answers: its next utterance, or null when it hung up. */
  respond(agentText: string): Promise<Utterance | null>;
  /** Text an operator injected since the last call, for the agent to say next (see VoiceProvider.inject). */
  takeInjected(): string[];
  /** Aborted when the line drops from outside the agent: `reason` is 'caller_hangup' or 'operator_hangup'. */
  readonly dropped: AbortSignal;
  /** The agent's side hangs up: the line, and the agent capacity it held, are released. Safe to repeat. */
  hangup(): void;
}

export type DialResult =
  | { status: 'answered'; line: FarEndLine }
  | { status: 'busy' | 'no_answer' | 'failed'; providerCallId: string; reason: string };

export interface VoiceProvider {
  readonly name: string;
  /** Dials `to` from `from`; resolves when the far end answers, or with why it did not. */
  placeCall(request: PlaceCallRequest, progress: CallProgress): Promise<DialResult>;
  /** Picks up an inbound call that is ringing. */
  answerCall(request: AnswerCallRequest): Promise<FarEndLine>;
  /** Drops a connected line (an operator hanging up); false when this process carries no such call. */
  hangup(providerCallId: string): boolean;
  /** Queues `text` for the agent to say next on a connected line; false when this process carries no such call. */
  inject(providerCallId: string, text: string): boolean;
  close(): Promise<void>;
}
