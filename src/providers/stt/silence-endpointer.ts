/**
 * The local end-of-utterance fallback: voiced frames by energy, an utterance ended by enough silence after
 * them, and one signal per utterance whether the provider or the silence said it first. Times are stream
 * time (audio sent), never the wall clock, so the same audio always ends in the same places.
 */

/** Frames are 10 ms: short enough to place an end precisely, long enough to measure energy. */
const FRAME_MS = 10;
/** RMS of a 10 ms frame above which it counts as voiced (~ -38 dBFS); telephone line noise sits far below. */
export const VOICED_RMS = 400;

export function rms(pcm: Int16Array, start = 0, end = pcm.length): number {
  if (end <= start) return 0;
  let sum = 0;
  for (let i = start; i < end; i++) sum += pcm[i]! * pcm[i]!;
  return Math.sqrt(sum / (end - start));
}

export function isVoiced(pcm: Int16Array, start = 0, end = pcm.length, threshold = VOICED_RMS): boolean {
  return rms(pcm, start, end) >= threshold;
}

export interface SilenceEndpointerOptions {
  sampleRate: number;
  /** Silence after voiced audio that ends an utterance. */
  silenceMs: number;
  /** Voiced audio shorter than this (a click, a cough) does not start an utterance. */
  minSpeechMs?: number;
  /** How far apart two end signals may be and still be about the same utterance. */
  toleranceMs?: number;
}

export interface SilenceEndpointer {
  /** Feeds audio; answers the stream times (ms) of the utterances the silence ended in it. */
  push(pcm: Int16Array): number[];
  /** The provider says an utterance ended at atMs; true when that is news, false when already signalled. */
  providerEnded(atMs: number): boolean;
  /** Stream time so far, in ms. */
  readonly positionMs: number;
}

export function createSilenceEndpointer(options: SilenceEndpointerOptions): SilenceEndpointer {
  const frameSamples = Math.round((options.sampleRate * FRAME_MS) / 1000);
  const minSpeechMs = options.minSpeechMs ?? 50;
  const toleranceMs = options.toleranceMs ?? 250;
  let pending = new Int16Array(0);
  let frames = 0;
  /** The utterance under way: its first voiced frame, its last one, and how much of it was voiced. */
  let current: { startMs: number; lastVoicedMs: number; voicedMs: number } | null = null;
  let lastEndMs: number | null = null;

  function frame(voiced: boolean, atMs: number, ends: number[]) {
    const frameEnd = atMs + FRAME_MS;
    if (voiced) {
      if (current) {
        current.lastVoicedMs = frameEnd;
        current.voicedMs += FRAME_MS;
      } else current = { startMs: atMs, lastVoicedMs: frameEnd, voicedMs: FRAME_MS };
      return;
    }
    if (!current || frameEnd - current.lastVoicedMs < options.silenceMs) return;
    if (current.voicedMs >= minSpeechMs) {
      ends.push(current.lastVoicedMs);
      lastEndMs = current.lastVoicedMs;
    }
    current = null;
  }

  return {
    push(pcm) {
      const ends: number[] = [];
      let samples = pcm;
      if (pending.length) {
        samples = new Int16Array(pending.length + pcm.length);
        samples.set(pending);
        samples.set(pcm, pending.length);
      }
      let offset = 0;
      for (; offset + frameSamples <= samples.length; offset += frameSamples) {
        frame(isVoiced(samples, offset, offset + frameSamples), frames * FRAME_MS, ends);
        frames++;
      }
      pending = samples.slice(offset);
      return ends;
    },
    providerEnded(atMs) {
      if (lastEndMs !== null && atMs <= lastEndMs + toleranceMs) return false;
      // The audio runs ahead of the provider's answers: an utterance that started after this end is a new one.
      if (current && current.startMs <= atMs + toleranceMs) current = null;
      lastEndMs = atMs;
      return true;
    },
    get positionMs() {
      return frames * FRAME_MS;
    },
  };
}
