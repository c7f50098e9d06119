/** The speech synthesis interface (see index.ts). */
import { ProviderError } from '../provider-error.js';

export interface Voice {
  id: string;
  name: string;
  /** A BCP 47 tag such as "en-us"; "mul" for voices that speak many languages. */
  language: string;
  gender: 'female' | 'male' | 'neutral' | 'unknown';
  provider: string;
}

/** Mono 16-bit samples at the engine's own rate; resample with lib/wav for a recording or a phone line. */
export interface SynthesizedSpeech {
  pcm: Int16Array;
  sampleRate: number;
}

export interface TtsProvider {
  readonly name: string;
  /** The voice to use when an agent has none. */
  readonly defaultVoice: string;
  voices(): Promise<Voice[]>;
  /** Throws ProviderError; `unavailable` means there is no engine here, and the caller goes on without audio. */
  synthesize(text: string, voice: string, options?: { signal?: AbortSignal }): Promise<SynthesizedSpeech>;
  close(): Promise<void>;
}

/** The longest text one call to synthesize takes (OpenAI's own limit for /audio/speech). */
export const MAX_SPEECH_CHARS = 4096;

export function checkSpeechText(text: unknown, provider: string): asserts text is string {
  if (typeof text !== 'string' || text.trim() === '')
    throw new ProviderError(provider, 'invalid_request', 'there is no text to speak');
  if (text.length > MAX_SPEECH_CHARS) {
    throw new ProviderError(
      provider,
      'invalid_request',
      `the text is longer than ${MAX_SPEECH_CHARS} characters; split it into sentences`,
    );
  }
}
