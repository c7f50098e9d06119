/**
 * DTMF as RTP telephone events (RFC 4733): a key press travels as a run of 4-byte payloads that share the
 * event's start timestamp, each with the duration so far; the last has the end bit and is sent three times,
 * so one lost packet does not lose the digit's end. The decoder turns such runs back into each digit once.
 */
import { buildRtp, type RtpPacketFields } from './rtp-packet.js';
import { timestampDistance } from './rtp-sequence.js';

/** Event codes 0-15 in order. */
export const DTMF_DIGITS = '0123456789*#ABCD';
/** The dynamic payload type most trunks offer for telephone-event/8000 (SDP decides the real one). */
export const DEFAULT_DTMF_PAYLOAD_TYPE = 101;
const CLOCK_RATE = 8000;
const END_REPEATS = 3;

export interface DtmfEventPayload {
  /** 0-255; 0-15 are the DTMF digits. */
  event: number;
  end: boolean;
  /** Power level in -dBm0, 0-63. */
  volume: number;
  /** Samples since the event began, 16 bits. */
  duration: number;
}

export class DtmfFormatError extends Error {}

export function encodeDtmfPayload(payload: DtmfEventPayload): Uint8Array {
  const bytes = new Uint8Array(4);
  bytes[0] = payload.event & 0xff;
  bytes[1] = (payload.end ? 0x80 : 0) | (payload.volume & 0x3f); // bit 0x40 is reserved (R)
  bytes[2] = (payload.duration >> 8) & 0xff;
  bytes[3] = payload.duration & 0xff;
  return bytes;
}

export function decodeDtmfPayload(bytes: Uint8Array): DtmfEventPayload {
  if (bytes.length < 4) throw new DtmfFormatError(`a telephone event is 4 bytes, got ${bytes.length}`);
  return {
    event: bytes[0]!,
    end: (bytes[1]! & 0x80) !== 0,
    volume: bytes[1]! & 0x3f,
    duration: (bytes[2]! << 8) | bytes[3]!,
  };
}

export interface DtmfSendOptions {
  digit: string;
  /** How long the key is held; 100 ms by default. At most 8 s (the 16-bit duration at 8 kHz). */
  durationMs?: number;
  /** -dBm0, 10 by default. */
  volume?: number;
  /** Time between the packets, which the caller keeps when sending them; 20 ms like the audio by default. */
  intervalMs?: number;
  payloadType?: number;
  ssrc: number;
  /** The event's start: every packet of the event carries it. */
  timestamp: number;
  /** Telephone events share the audio stream's sequence numbers. */
  takeSequenceNumber: () => number;
}

/** The packets of one key press, to send one every intervalMs: updates, then the end packet three times. */
export function buildDtmfPackets(options: DtmfSendOptions): Uint8Array[] {
  const event = DTMF_DIGITS.indexOf(options.digit.toUpperCase());
  if (options.digit.length !== 1 || event < 0) throw new DtmfFormatError(`not a DTMF digit: ${options.digit}`);
  const total = Math.round(((options.durationMs ?? 100) * CLOCK_RATE) / 1000);
  const step = Math.round(((options.intervalMs ?? 20) * CLOCK_RATE) / 1000);
  if (total < 1 || total > 0xffff) throw new DtmfFormatError('a DTMF duration is from 1 ms to 8 s');
  if (step < 1) throw new DtmfFormatError('the interval between packets must be at least 1 ms');
  const volume = options.volume ?? 10;
  const payloads: DtmfEventPayload[] = [];
  for (let duration = step; duration < total; duration += step) payloads.push({ event, end: false, volume, duration });
  for (let i = 0; i < END_REPEATS; i++) payloads.push({ event, end: true, volume, duration: total });
  return payloads.map((payload, index) =>
    buildRtp({
      payloadType: options.payloadType ?? DEFAULT_DTMF_PAYLOAD_TYPE,
      marker: index === 0, // the first packet of an event
      sequenceNumber: options.takeSequenceNumber(), // each repeat is a packet of its own: a new sequence number
      timestamp: options.timestamp,
      ssrc: options.ssrc,
      payload: encodeDtmfPayload(payload),
    }),
  );
}

export interface DtmfDigit {
  digit: string;
  /** The event's RTP timestamp (its start). */
  timestamp: number;
  durationMs: number;
  volume: number;
}

export interface DtmfDecoder {
  /** A telephone-event packet in; the digits it completes out (usually none or one). */
  push(packet: Pick<RtpPacketFields, 'timestamp' | 'payload'>): DtmfDigit[];
  /** The digit still pressed when the stream ends (its end packets never came). */
  flush(): DtmfDigit[];
}

/**
 * Each event is known by its timestamp: the repeated end packets, and late updates of an event already
 * reported, carry a timestamp at or before the last one reported and are ignored. An event whose end
 * packets were all lost is reported when the next event begins, or on flush.
 */
export function createDtmfDecoder(): DtmfDecoder {
  let current: { timestamp: number; event: number; duration: number; volume: number } | null = null;
  let lastReported: number | null = null;

  const report = (): DtmfDigit[] => {
    if (!current) return [];
    const { timestamp, event, duration, volume } = current;
    current = null;
    lastReported = timestamp;
    return [{ digit: DTMF_DIGITS[event]!, timestamp, durationMs: (duration * 1000) / CLOCK_RATE, volume }];
  };

  return {
    push(packet) {
      const payload = decodeDtmfPayload(packet.payload);
      if (payload.event >= DTMF_DIGITS.length) return []; // flash and other events are not digits
      if (lastReported !== null && timestampDistance(packet.timestamp, lastReported) <= 0) return [];
      const digits: DtmfDigit[] = [];
      if (current && current.timestamp !== packet.timestamp) {
        if (timestampDistance(packet.timestamp, current.timestamp) < 0) return []; // an older event, out of order
        digits.push(...report());
      }
      if (!current)
        current = { timestamp: packet.timestamp, event: payload.event, duration: 0, volume: payload.volume };
      current.duration = Math.max(current.duration, payload.duration);
      if (payload.end) digits.push(...report());
      return digits;
    },
    flush: report,
  };
}
