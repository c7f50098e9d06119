/**
 * `sim`: the built-in simulated telephone network. The dialled number decides what happens (its last digit: see
 * SIM_OUTCOMES), a person's persona comes from the contact (its `persona` column, else the number's second-to-last
 * digit), and every wait (dialing, ringing, a greeting) passes on the injected clock. Speech is synthesized with the
 * configured TTS when it is available; otherwise its length is estimated from the words. The agent's side of an
 * answered call is ready as the simulated agent capacity allows (sim-agent-capacity.ts).
 */
import { randomUUID } from 'node:crypto';
import type { Clock } from '../../lib/clock.js';
import { ProviderError } from '../provider-error.js';
import type { SynthesizedSpeech, TtsProvider } from '../tts/speech.js';
import { createSimAgentCapacity, type SimAgentCapacityOptions } from './sim-agent-capacity.js';
import type {
  AgentReadiness,
  AnswerCallRequest,
  CallProgress,
  DialResult,
  FarEndLine,
  FarEndParty,
  PlaceCallRequest,
  Utterance,
  VoiceProvider,
} from './voice-port.js';
import { PersonaConversation, SIM_PERSONAS, voicemailGreeting, type SimPersona } from './sim-personas.js';

export { SIM_PERSONAS, type SimPersona } from './sim-personas.js';

export type SimOutcome = 'human' | 'voicemail' | 'busy' | 'no_answer' | 'failed' | 'hangs_up_early';

/** What happens to a call, by the last digit of the dialled number. */
export const SIM_OUTCOMES: Record<string, SimOutcome> = {
  '0': 'human',
  '1': 'human',
  '2': 'human',
  '3': 'human',
  '4': 'human',
  '5': 'voicemail',
  '6': 'busy',
  '7': 'no_answer',
  '8': 'failed',
  '9': 'hangs_up_early',
};

/** Network timings, in milliseconds of the clock. */
export const SIM_TIMINGS = {
  /** Dialing until the far end rings (or the network says busy / unreachable): 1.0 s plus 0.1 s per (sum of digits mod 5). */
  setupMs: 1_000,
  /** A person picks up after 2 s plus 1.5 s per (third-to-last digit mod 4): 2 to 6.5 s. */
  humanRingMs: 2_000,
  /** An answering machine picks up after 15 s. */
  machineRingMs: 15_000,
  /** Nobody answers: the network gives up after 30 s of ringing. */
  noAnswerRingMs: 30_000,
};

/** Speaking pace used when there is no audio to measure: 160 words a minute. */
const MS_PER_WORD = 375;

const digitsOf = (phone: string) => phone.replace(/\D/g, '');
const digitFromEnd = (phone: string, position: number) => Number(digitsOf(phone).at(-position) ?? '0');

export function simOutcomeFor(phone: string): SimOutcome {
  return SIM_OUTCOMES[digitsOf(phone).at(-1) ?? '0']!;
}

/** The persona of the person at `party`: the contact's `persona` column when it names one, else the number's second-to-last digit. */
export function simPersonaFor(party: FarEndParty): SimPersona {
  const column = Object.entries(party.attributes).find(([name]) => name.trim().toLowerCase() === 'persona')?.[1];
  const named = column
    ?.trim()
    .toLowerCase()
    .replace(/[\s-]+/g, '_');
  if (named && (SIM_PERSONAS as readonly string[]).includes(named)) return named as SimPersona;
  return SIM_PERSONAS[digitFromEnd(party.phone, 2) % SIM_PERSONAS.length]!;
}

const estimatedMs = (text: string) => Math.max(600, text.trim().split(/\s+/).filter(Boolean).length * MS_PER_WORD);

/** A 1 kHz tone of `ms` after `silenceMs` of silence, at `sampleRate`: the answering machine's beep. */
function beep(sampleRate: number, silenceMs = 300, ms = 450): Int16Array {
  const silence = Math.round((silenceMs * sampleRate) / 1000);
  const tone = new Int16Array(silence + Math.round((ms * sampleRate) / 1000));
  for (let i = silence; i < tone.length; i++)
    tone[i] = Math.round(8000 * Math.sin((2 * Math.PI * 1000 * (i - silence)) / sampleRate));
  return tone;
}

function concat(a: Int16Array, b: Int16Array): Int16Array {
  const joined = new Int16Array(a.length + b.length);
  joined.set(a);
  joined.set(b, a.length);
  return joined;
}

export interface SimVoiceOptions {
  clock: Clock;
  /** Gives the far end a voice; `none` (or a missing engine) leaves calls without audio. */
  tts: TtsProvider;
  /** The agent capacity of this worker; by default unlimited, and never late. */
  agents?: SimAgentCapacityOptions;
}

export function createSimVoiceProvider(options: SimVoiceOptions): VoiceProvider {
  const { clock, tts } = options;
  const agents = createSimAgentCapacity(clock, options.agents ?? { slots: 0, lateStartRate: 0, lateStartMs: 0 });
  const lines = new Map<string, SimLine>();
  let calleeVoice: Promise<string> | undefined;

  /** A voice unlike the agents' default, so the two sides of a recording are told apart. */
  function farEndVoice(): Promise<string> {
    calleeVoice ??= tts
      .voices()
      .then((voices) => ['en-us+f3', 'nova', 'coral'].find((id) => voices.some((v) => v.id === id)) ?? tts.defaultVoice)
      .catch(() => tts.defaultVoice);
    return calleeVoice;
  }

  async function speak(text: string, extra?: (speech: SynthesizedSpeech) => Int16Array): Promise<Utterance> {
    try {
      const speech = await tts.synthesize(text, await farEndVoice());
      const pcm = extra ? concat(speech.pcm, extra(speech)) : speech.pcm;
      return {
        text,
        audio: { pcm, sampleRate: speech.sampleRate },
        durationMs: Math.round((pcm.length * 1000) / speech.sampleRate),
      };
    } catch (error) {
      if (!(error instanceof ProviderError)) throw error;
      return { text, audio: null, durationMs: estimatedMs(text) + (extra ? 750 : 0) };
    }
  }

  class SimLine implements FarEndLine {
    readonly providerCallId = `sim-${randomUUID()}`;
    private readonly drop = new AbortController();
    readonly dropped = this.drop.signal;
    readonly clock = agents.timeline();
    private injected: string[] = [];
    private releaseAgent = () => {};

    constructor(
      private readonly callId: string,
      readonly answeredBy: 'human' | 'machine',
      private readonly party: FarEndParty,
      private readonly conversation: PersonaConversation,
      private readonly hangsUpEarly: boolean,
    ) {
      lines.set(this.providerCallId, this);
    }

    async agentReady(signal: AbortSignal): Promise<AgentReadiness> {
      const { waitedMs, gaveUp, release } = await agents.ready(this.callId, this.clock, signal);
      this.releaseAgent = release;
      return { waitedMs, gaveUp };
    }

    async opening(): Promise<Utterance | null> {
      if (this.answeredBy === 'machine')
        return speak(voicemailGreeting(this.party.firstName), (speech) => beep(speech.sampleRate));
      return speak(this.conversation.greeting());
    }

    async respond(agentText: string): Promise<Utterance | null> {
      if (this.dropped.aborted || this.answeredBy === 'machine') return null;
      // Hears the agent's opening words, and hangs up.
      if (this.hangsUpEarly) return null;
      const answer = this.conversation.answer(agentText);
      return answer === null ? null : speak(answer);
    }

    takeInjected(): string[] {
      const taken = this.injected;
      this.injected = [];
      return taken;
    }

    inject(text: string) {
      this.injected.push(text);
    }

    dropFromOutside(reason: 'operator_hangup') {
      if (!this.dropped.aborted) this.drop.abort(reason);
      lines.delete(this.providerCallId);
    }

    hangup() {
      lines.delete(this.providerCallId);
      this.releaseAgent();
      this.releaseAgent = () => {};
    }
  }

  return {
    name: 'sim',

    async placeCall(request: PlaceCallRequest, progress: CallProgress): Promise<DialResult> {
      const { to, signal } = request;
      const outcome = simOutcomeFor(to);
      const providerCallId = `sim-${randomUUID()}`;
      const digitSum = [...digitsOf(to)].reduce((sum, d) => sum + Number(d), 0);
      await clock.sleep(SIM_TIMINGS.setupMs + (digitSum % 5) * 100, signal);
      if (outcome === 'busy') return { status: 'busy', providerCallId, reason: 'The line is busy.' };
      if (outcome === 'failed') return { status: 'failed', providerCallId, reason: 'The number is not in service.' };
      await progress.ringing();
      if (outcome === 'no_answer') {
        await clock.sleep(SIM_TIMINGS.noAnswerRingMs, signal);
        return {
          status: 'no_answer',
          providerCallId,
          reason: `Nobody answered in ${SIM_TIMINGS.noAnswerRingMs / 1000} s.`,
        };
      }
      const machine = outcome === 'voicemail';
      await clock.sleep(
        machine ? SIM_TIMINGS.machineRingMs : SIM_TIMINGS.humanRingMs + (digitFromEnd(to, 3) % 4) * 1_500,
        signal,
      );
      const conversation = new PersonaConversation(simPersonaFor(request.farEnd), request.farEnd.firstName);
      const line = new SimLine(
        request.callId,
        machine ? 'machine' : 'human',
        request.farEnd,
        conversation,
        outcome === 'hangs_up_early',
      );
      return { status: 'answered', line };
    },

    async answerCall(request: AnswerCallRequest): Promise<FarEndLine> {
      request.signal.throwIfAborted();
      const persona = simPersonaFor(request.farEnd);
      const conversation = new PersonaConversation(persona, request.farEnd.firstName, 'inbound');
      return new SimLine(request.callId, 'human', request.farEnd, conversation, false);
    },

    hangup(providerCallId) {
      const line = lines.get(providerCallId);
      line?.dropFromOutside('operator_hangup');
      return line !== undefined;
    },

    inject(providerCallId, text) {
      const line = lines.get(providerCallId);
      line?.inject(text);
      return line !== undefined;
    },

    async close() {
      for (const line of lines.values()) line.dropFromOutside('operator_hangup');
    },
  };
}
