/**
 * Streaming speech to text: open a session, send the caller's audio as it arrives, get interim and final
 * transcripts and an end-of-utterance signal back. Audio goes in as mono 16-bit PCM at 8 or 16 kHz (decode a
 * phone line's μ-law with `decodeMulaw` of voice/media/g711 first); an adapter picks its own wire encoding.
 */
import type { ProviderError } from '../provider-error.js';

export type SttSampleRate = 8000 | 16000;

export interface SttWord {
  word: string;
  startMs: number;
  endMs: number;
  confidence: number | null;
}

export type SttEvent =
  | {
      type: 'transcript';
      /** false: a guess that later results replace; true: this stretch of audio will not change again. */
      isFinal: boolean;
      text: string;
      /** Milliseconds from the start of the session's audio. */
      startMs: number;
      endMs: number;
      confidence: number | null;
      words: SttWord[];
    }
  | {
      type: 'utterance_end';
      /** The stream time the speaker stopped (the last word's end, or the last voiced frame). */
      atMs: number;
      /**
       * `provider`: the service's own endpointing; `silence`: the local fallback saw enough silence first
       * (the audio runs ahead of the answers, so its final transcript may still follow); `finish`: the stream
       * ended after the utterance's final transcript.
       */
      source: 'provider' | 'silence' | 'finish';
    }
  /** The session is over: the connection failed or the provider answered something unusable. */
  | { type: 'error'; error: ProviderError };

export interface SttOpenOptions {
  sampleRate: SttSampleRate;
  /** A BCP 47 tag; the provider's default when absent. */
  language?: string;
  /** The provider's endpointing: silence (ms) after speech before it says the utterance ended. */
  endpointingMs?: number;
  /** The local fallback: silence (ms) after voiced audio that ends an utterance when the provider has not. */
  silenceFallbackMs?: number;
  /** Called for every event, in order; the session never throws from send() for an upstream failure. */
  onEvent: (event: SttEvent) => void;
}

export interface SttSession {
  /** Mono 16-bit PCM at the session's sample rate, any length (telephony sends 20 ms frames). */
  send(pcm: Int16Array): void;
  /** Ends the audio, waits for the last final transcript and the provider's close; rejects with a ProviderError. */
  finish(): Promise<void>;
  /** Drops the connection at once; no more events are delivered, and send() and finish() fail as `aborted`. */
  abort(): void;
  /** Seconds of audio sent so far (what providers bill). */
  readonly audioSeconds: number;
}

export interface SpeechToText {
  readonly name: string;
  /** Connects; rejects with a ProviderError (a refused key is `invalid_request` with status 401). */
  open(options: SttOpenOptions): Promise<SttSession>;
}
