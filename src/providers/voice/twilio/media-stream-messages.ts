/**
 * Media Streams: the JSON messages of the WebSocket a Twilio-compatible carrier opens for `<Connect><Stream>`.
 * From the carrier: connected, start, media (base64 μ-law, 8 kHz mono), dtmf, mark (audio we sent up to a mark has
 * played), stop. To the carrier: media (audio to play), mark (tell me when playback gets here), clear (drop the audio
 * not yet played). Counters (sequenceNumber, chunk, timestamp) are decimal strings on the wire, as documented.
 */
import { Type, type Static, type TSchema } from 'typebox';
import { Value } from 'typebox/value';
import { g711ToPcm, pcmToG711 } from '../media/g711.js';

const Numeric = Type.String({ pattern: '^[0-9]+$' });
const Base64 = Type.String({ pattern: '^[A-Za-z0-9+/]*={0,2}$' });

export const ConnectedMessage = Type.Object({
  event: Type.Literal('connected'),
  protocol: Type.String(),
  version: Type.String(),
});

export const MediaFormat = Type.Object({
  encoding: Type.Literal('audio/x-mulaw'),
  sampleRate: Type.Literal(8000),
  channels: Type.Literal(1),
});

export const StartMessage = Type.Object({
  event: Type.Literal('start'),
  sequenceNumber: Numeric,
  streamSid: Type.String({ minLength: 1 }),
  start: Type.Object({
    streamSid: Type.String({ minLength: 1 }),
    accountSid: Type.String({ minLength: 1 }),
    callSid: Type.String({ minLength: 1 }),
    tracks: Type.Array(Type.Union([Type.Literal('inbound'), Type.Literal('outbound')])),
    mediaFormat: MediaFormat,
    customParameters: Type.Record(Type.String(), Type.String()),
  }),
});

export const InboundMediaMessage = Type.Object({
  event: Type.Literal('media'),
  sequenceNumber: Numeric,
  streamSid: Type.String({ minLength: 1 }),
  media: Type.Object({
    track: Type.Union([Type.Literal('inbound'), Type.Literal('outbound')]),
    chunk: Numeric,
    /** Milliseconds since the stream started. */
    timestamp: Numeric,
    payload: Base64,
  }),
});

export const DtmfMessage = Type.Object({
  event: Type.Literal('dtmf'),
  sequenceNumber: Numeric,
  streamSid: Type.String({ minLength: 1 }),
  dtmf: Type.Object({
    track: Type.String(),
    digit: Type.String({ pattern: '^[0-9*#A-Da-d]$' }),
  }),
});

export const MarkMessage = Type.Object({
  event: Type.Literal('mark'),
  sequenceNumber: Numeric,
  streamSid: Type.String({ minLength: 1 }),
  mark: Type.Object({ name: Type.String() }),
});

export const StopMessage = Type.Object({
  event: Type.Literal('stop'),
  sequenceNumber: Numeric,
  streamSid: Type.String({ minLength: 1 }),
  stop: Type.Object({ accountSid: Type.String(), callSid: Type.String() }),
});

// What we send is held to exactly the documented fields: the carrier may refuse anything else.
const Exact = { additionalProperties: false } as const;

export const OutboundMediaMessage = Type.Object(
  {
    event: Type.Literal('media'),
    streamSid: Type.String({ minLength: 1 }),
    media: Type.Object({ payload: Base64 }, Exact),
  },
  Exact,
);

export const OutboundMarkMessage = Type.Object(
  {
    event: Type.Literal('mark'),
    streamSid: Type.String({ minLength: 1 }),
    mark: Type.Object({ name: Type.String() }, Exact),
  },
  Exact,
);

export const ClearMessage = Type.Object(
  { event: Type.Literal('clear'), streamSid: Type.String({ minLength: 1 }) },
  Exact,
);

export type ConnectedMessage = Static<typeof ConnectedMessage>;
export type StartMessage = Static<typeof StartMessage>;
export type InboundMediaMessage = Static<typeof InboundMediaMessage>;
export type DtmfMessage = Static<typeof DtmfMessage>;
export type MarkMessage = Static<typeof MarkMessage>;
export type StopMessage = Static<typeof StopMessage>;
export type OutboundMediaMessage = Static<typeof OutboundMediaMessage>;
export type OutboundMarkMessage = Static<typeof OutboundMarkMessage>;
export type ClearMessage = Static<typeof ClearMessage>;

/** What the carrier sends us. */
export type CarrierStreamMessage =
  | ConnectedMessage
  | StartMessage
  | InboundMediaMessage
  | DtmfMessage
  | MarkMessage
  | StopMessage;
/** What we send the carrier. */
export type AppStreamMessage = OutboundMediaMessage | OutboundMarkMessage | ClearMessage;

const CARRIER_SCHEMAS: Record<CarrierStreamMessage['event'], TSchema> = {
  connected: ConnectedMessage,
  start: StartMessage,
  media: InboundMediaMessage,
  dtmf: DtmfMessage,
  mark: MarkMessage,
  stop: StopMessage,
};

const APP_SCHEMAS: Record<AppStreamMessage['event'], TSchema> = {
  media: OutboundMediaMessage,
  mark: OutboundMarkMessage,
  clear: ClearMessage,
};

export type ParsedStreamMessage<M> = { ok: true; message: M } | { ok: false; error: string };

/** The cap on one message: a 20 ms frame is ~300 bytes; Twilio never sends more than a few kilobytes. */
export const MAX_STREAM_MESSAGE_BYTES = 64 * 1024;

function parseWith<M extends { event: string }>(
  schemas: Record<string, TSchema>,
  data: string | Uint8Array,
): ParsedStreamMessage<M> {
  const size = typeof data === 'string' ? Buffer.byteLength(data) : data.byteLength;
  if (size > MAX_STREAM_MESSAGE_BYTES) {
    return { ok: false, error: `Stream message of ${size} bytes is over the ${MAX_STREAM_MESSAGE_BYTES}-byte limit.` };
  }
  let value: unknown;
  try {
    value = JSON.parse(typeof data === 'string' ? data : Buffer.from(data).toString('utf8'));
  } catch {
    return { ok: false, error: 'Stream message is not JSON.' };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, error: 'Stream message is not a JSON object.' };
  }
  const event = (value as { event?: unknown }).event;
  if (typeof event !== 'string') return { ok: false, error: 'Stream message has no "event".' };
  const schema = Object.hasOwn(schemas, event) ? schemas[event] : undefined;
  if (!schema) {
    return { ok: false, error: `Stream message has an unknown event "${event.slice(0, 40)}".` };
  }
  if (!Value.Check(schema, value)) {
    const [first] = Value.Errors(schema, value);
    const where = first?.instancePath || '/';
    return {
      ok: false,
      error: `Stream message "${event}" is invalid at ${where}: ${first?.message ?? 'unexpected shape'}.`,
    };
  }
  return { ok: true, message: value as M };
}

/** A message from the carrier, checked against its documented shape; never throws. */
export function parseCarrierMessage(data: string | Uint8Array): ParsedStreamMessage<CarrierStreamMessage> {
  return parseWith<CarrierStreamMessage>(CARRIER_SCHEMAS, data);
}

/** A message to the carrier, checked the same way (the test carrier reads what we send with it). */
export function parseAppMessage(data: string | Uint8Array): ParsedStreamMessage<AppStreamMessage> {
  return parseWith<AppStreamMessage>(APP_SCHEMAS, data);
}

export function encodeStreamMessage(message: CarrierStreamMessage | AppStreamMessage): string {
  return JSON.stringify(message);
}

/** 20 ms of μ-law at 8 kHz: the frame Twilio sends and the pace we play at. */
export const MULAW_FRAME_BYTES = 160;
export const FRAME_MS = 20;
/** μ-law's encoding of silence (a zero sample). */
export const MULAW_SILENCE = 0xff;

export function outboundMedia(streamSid: string, mulaw: Uint8Array): OutboundMediaMessage {
  return { event: 'media', streamSid, media: { payload: Buffer.from(mulaw).toString('base64') } };
}

export function outboundMark(streamSid: string, name: string): OutboundMarkMessage {
  return { event: 'mark', streamSid, mark: { name } };
}

export function clearMessage(streamSid: string): ClearMessage {
  return { event: 'clear', streamSid };
}

/** The μ-law bytes a media message carries, either way. */
export function mediaPayload(message: InboundMediaMessage | OutboundMediaMessage): Uint8Array {
  return new Uint8Array(Buffer.from(message.media.payload, 'base64'));
}

export interface InboundMediaFields {
  streamSid: string;
  sequenceNumber: number;
  /** Counts media messages from 1. */
  chunk: number;
  timestampMs: number;
  track?: 'inbound' | 'outbound';
}

/** A carrier-side media message (what the far end said), as the test carrier sends it. */
export function inboundMedia(fields: InboundMediaFields, mulaw: Uint8Array): InboundMediaMessage {
  return {
    event: 'media',
    sequenceNumber: String(fields.sequenceNumber),
    streamSid: fields.streamSid,
    media: {
      track: fields.track ?? 'inbound',
      chunk: String(fields.chunk),
      timestamp: String(fields.timestampMs),
      payload: Buffer.from(mulaw).toString('base64'),
    },
  };
}

/** μ-law audio cut into 20 ms frames, the last padded with silence. */
export function mulawFrames(mulaw: Uint8Array): Uint8Array[] {
  const frames: Uint8Array[] = [];
  for (let offset = 0; offset < mulaw.length; offset += MULAW_FRAME_BYTES) {
    const frame = new Uint8Array(MULAW_FRAME_BYTES).fill(MULAW_SILENCE);
    frame.set(mulaw.subarray(offset, offset + MULAW_FRAME_BYTES));
    frames.push(frame);
  }
  return frames;
}

/** Speech at any rate as 20 ms μ-law frames, ready for outboundMedia. */
export function pcmToMulawFrames(pcm: Int16Array, sampleRate: number): Uint8Array[] {
  return mulawFrames(pcmToG711('pcmu', pcm, sampleRate));
}

/** What a media message carries, as 16-bit PCM at the rate asked for (8 kHz by default). */
export function mediaPcm(message: InboundMediaMessage | OutboundMediaMessage, sampleRate?: number): Int16Array {
  return g711ToPcm('pcmu', mediaPayload(message), sampleRate);
}
