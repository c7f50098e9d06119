/**
 * Outgoing audio as RTP: 8 kHz PCM cut into 20 ms frames (160 samples), each encoded with G.711 and given
 * the next sequence number and a timestamp 160 further on, both wrapping as RFC 3550 says.
 */
import { randomInt } from 'node:crypto';
import { encodeG711, G711_PAYLOAD_TYPES, G711_SAMPLE_RATE, type G711Codec } from './g711.js';
import { buildRtp } from './rtp-packet.js';
import { advanceTimestamp, nextSequence } from './rtp-sequence.js';

export const FRAME_MS = 20;
export const FRAME_SAMPLES = (G711_SAMPLE_RATE * FRAME_MS) / 1000;

export interface RtpPacketizerOptions {
  codec: G711Codec;
  /** Random by default, as RFC 3550 asks (the first sequence number and timestamp too). */
  ssrc?: number;
  sequenceNumber?: number;
  timestamp?: number;
}

export interface RtpPacketizer {
  readonly ssrc: number;
  readonly payloadType: number;
  /** The timestamp the next frame will carry. */
  readonly timestamp: number;
  /** Encodes every whole frame of `pcm` (8 kHz mono); the remainder waits for the next call. */
  push(pcm: Int16Array): Uint8Array[];
  /** The remainder, padded with silence to a whole frame (nothing when there is none). */
  flush(): Uint8Array[];
  /** Sets the marker bit on the next packet: the first of a talkspurt. */
  markTalkspurt(): void;
  /** Media time that passes without packets (silence suppression): the timestamp moves, the sequence does not. */
  skip(samples: number): void;
  /** The next sequence number, for another payload on the same stream (telephone events). */
  takeSequenceNumber(): number;
}

export function createRtpPacketizer(options: RtpPacketizerOptions): RtpPacketizer {
  const payloadType = G711_PAYLOAD_TYPES[options.codec];
  const ssrc = options.ssrc ?? randomInt(0, 2 ** 32);
  let sequenceNumber = options.sequenceNumber ?? randomInt(0, 0x10000);
  let timestamp = options.timestamp ?? randomInt(0, 2 ** 32);
  let marker = true; // the first packet of a stream starts a talkspurt
  let pending = new Int16Array(0);

  const takeSequenceNumber = () => {
    const taken = sequenceNumber;
    sequenceNumber = nextSequence(sequenceNumber);
    return taken;
  };

  const packet = (frame: Int16Array) => {
    const bytes = buildRtp({
      payloadType,
      marker,
      sequenceNumber: takeSequenceNumber(),
      timestamp,
      ssrc,
      payload: encodeG711(options.codec, frame),
    });
    marker = false;
    timestamp = advanceTimestamp(timestamp, FRAME_SAMPLES);
    return bytes;
  };

  return {
    ssrc,
    payloadType,
    get timestamp() {
      return timestamp;
    },
    push(pcm) {
      const all = new Int16Array(pending.length + pcm.length);
      all.set(pending);
      all.set(pcm, pending.length);
      const packets: Uint8Array[] = [];
      let offset = 0;
      for (; offset + FRAME_SAMPLES <= all.length; offset += FRAME_SAMPLES) {
        packets.push(packet(all.subarray(offset, offset + FRAME_SAMPLES)));
      }
      pending = all.slice(offset);
      return packets;
    },
    flush() {
      if (pending.length === 0) return [];
      const frame = new Int16Array(FRAME_SAMPLES);
      frame.set(pending);
      pending = new Int16Array(0);
      return [packet(frame)];
    },
    markTalkspurt() {
      marker = true;
    },
    skip(samples) {
      timestamp = advanceTimestamp(timestamp, samples);
    },
    takeSequenceNumber,
  };
}
