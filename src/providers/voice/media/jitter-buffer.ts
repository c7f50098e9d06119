/**
 * A small playout buffer for incoming audio: frames arrive out of order, twice or too late; pull() hands out
 * one 20 ms frame at a time in sequence order. Playout starts once the target depth is buffered (60 ms by
 * default), a missing frame is concealed, and the depth is bounded so a burst cannot add lasting delay.
 * Frames are decoded PCM of a fixed duration, ordered by RTP sequence number (which wraps at 16 bits).
 */
import { FRAME_SAMPLES } from './rtp-packetizer.js';
import { nextSequence, sequenceDistance } from './rtp-sequence.js';

export interface JitterBufferOptions {
  /** Frames buffered before playout starts (and again after running dry). 3 = 60 ms. */
  targetFrames?: number;
  /** More than this and the oldest frames are dropped back to the target. 10 = 200 ms. */
  maxFrames?: number;
  /** A missing frame: silence, or the last frame again at half level (once; silence after that). */
  conceal?: 'silence' | 'repeat';
  frameSamples?: number;
}

export type PulledFrameKind = 'audio' | 'concealed' | 'buffering';

export interface PulledFrame {
  samples: Int16Array;
  /** audio: a frame as received; concealed: one was missing; buffering: nothing to play yet. */
  kind: PulledFrameKind;
}

export interface JitterBufferStats {
  received: number;
  played: number;
  concealed: number;
  duplicates: number;
  late: number;
  /** Dropped to bring the depth back to the target. */
  overflow: number;
}

export interface JitterBuffer {
  push(sequenceNumber: number, samples: Int16Array): void;
  pull(): PulledFrame;
  /** Frames waiting now. */
  readonly depth: number;
  readonly stats: Readonly<JitterBufferStats>;
}

// A jump this far (about 20 s of frames) either way is a new stream (the sender restarted), not jitter.
const RESTART_DISTANCE = 1000;

export function createJitterBuffer(options: JitterBufferOptions = {}): JitterBuffer {
  const targetFrames = options.targetFrames ?? 3;
  const maxFrames = Math.max(options.maxFrames ?? 10, targetFrames);
  const frameSamples = options.frameSamples ?? FRAME_SAMPLES;
  const conceal = options.conceal ?? 'repeat';
  const frames = new Map<number, Int16Array>();
  const stats: JitterBufferStats = { received: 0, played: 0, concealed: 0, duplicates: 0, late: 0, overflow: 0 };
  /** The next sequence number to play; null until playout (re)starts. */
  let next: number | null = null;
  /** The last sequence number played or concealed: anything at or before it is too late. */
  let lastPlayed: number | null = null;
  let lastFrame: Int16Array | null = null;
  let repeated = false;

  const silence = () => new Int16Array(frameSamples);
  const oldestBuffered = () => {
    let oldest: number | null = null;
    for (const sequence of frames.keys()) {
      if (oldest === null || sequenceDistance(sequence, oldest) < 0) oldest = sequence;
    }
    return oldest;
  };

  const dropOldestBeyondTarget = () => {
    while (frames.size > targetFrames) {
      const oldest = oldestBuffered()!;
      frames.delete(oldest);
      stats.overflow++;
      lastPlayed = oldest;
      if (next !== null && sequenceDistance(next, oldest) <= 0) next = nextSequence(oldest);
    }
  };

  return {
    get depth() {
      return frames.size;
    },
    stats,
    push(sequenceNumber, samples) {
      stats.received++;
      if (lastPlayed !== null) {
        const distance = sequenceDistance(sequenceNumber, lastPlayed);
        if (Math.abs(distance) > RESTART_DISTANCE) {
          frames.clear();
          next = null;
          lastPlayed = null;
        } else if (distance <= 0) {
          stats.late++;
          return;
        }
      }
      if (frames.has(sequenceNumber)) {
        stats.duplicates++;
        return;
      }
      frames.set(sequenceNumber, samples);
      if (frames.size > maxFrames) dropOldestBeyondTarget();
    },
    pull() {
      if (next === null) {
        if (frames.size < targetFrames) return { samples: silence(), kind: 'buffering' };
        next = oldestBuffered()!;
      }
      const frame = frames.get(next);
      if (frame) {
        frames.delete(next);
        lastPlayed = next;
        next = nextSequence(next);
        stats.played++;
        lastFrame = frame;
        repeated = false;
        return { samples: frame, kind: 'audio' };
      }
      if (frames.size === 0) {
        // Ran dry: the sender paused or the network stalled. Buffer up again rather than conceal forever.
        next = null;
        return { samples: silence(), kind: 'buffering' };
      }
      lastPlayed = next;
      next = nextSequence(next);
      stats.concealed++;
      if (conceal === 'repeat' && lastFrame && !repeated) {
        repeated = true;
        return { samples: lastFrame.map((sample) => sample >> 1), kind: 'concealed' };
      }
      return { samples: silence(), kind: 'concealed' };
    },
  };
}
