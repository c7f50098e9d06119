/**
 * The SDP of a telephone call (RFC 3264 offer/answer, RFC 4566): one audio stream of G.711 (PCMU 0, PCMA 8) with
 * RFC 4733 telephone-event for the keypad, 20 ms packets. Reading and writing the text is `sdp-transform`;
 * this file decides what to offer, what to answer and what the far end chose.
 */
import { isIP } from 'node:net';
import sdpTransform, { type MediaDescription, type SessionDescription } from 'sdp-transform';

export type G711Codec = 'PCMU' | 'PCMA';
const STATIC_PAYLOAD_TYPES: Record<number, G711Codec> = { 0: 'PCMU', 8: 'PCMA' };
const CODEC_PAYLOAD_TYPES: Record<G711Codec, number> = { PCMU: 0, PCMA: 8 };
export const DEFAULT_CODECS: readonly G711Codec[] = ['PCMU', 'PCMA'];
export const DEFAULT_DTMF_PAYLOAD_TYPE = 101;
export const PTIME_MS = 20;

export class SdpNegotiationError extends Error {}

/** Where and how to send audio to the far end. */
export interface RemoteMedia {
  address: string;
  port: number;
  payloadType: number;
  codec: G711Codec;
  /** The far end's telephone-event payload type, or null when it takes no RFC 4733 digits. */
  dtmfPayloadType: number | null;
}

export interface LocalMedia {
  /** The address the far end sends RTP to (IPv4 or IPv6). */
  address: string;
  port: number;
  /** The o= line's session id; random when not given. */
  sessionId?: number;
  /** Raise it on every new offer in the same session (a re-INVITE). */
  sessionVersion?: number;
}

export function buildSdpOffer(local: LocalMedia & { codecs?: readonly G711Codec[] }): string {
  const codecs = local.codecs ?? DEFAULT_CODECS;
  if (codecs.length === 0) throw new SdpNegotiationError('an offer needs at least one codec');
  const formats = codecs.map((codec) => ({ payload: CODEC_PAYLOAD_TYPES[codec], codec }));
  return sdpTransform.write(session(local, [audioMedia(local.port, formats, DEFAULT_DTMF_PAYLOAD_TYPE, 'sendrecv')]));
}

export type SdpAnswerResult = { ok: true; sdp: string; remote: RemoteMedia } | { ok: false; reason: string };

const ANSWER_DIRECTION = {
  sendrecv: 'sendrecv',
  sendonly: 'recvonly',
  recvonly: 'sendonly',
  inactive: 'inactive',
} as const;

/**
 * Our answer to a far end's offer: the first audio stream we can take, the first of its codecs (in its order)
 * that we speak, telephone-event if offered; every other stream refused with port 0, as RFC 3264 6 asks.
 */
export function negotiateSdpAnswer(
  offerText: string,
  local: LocalMedia & { codecs?: readonly G711Codec[] },
): SdpAnswerResult {
  const offer = parseSdp(offerText);
  if (!offer.ok) return offer;
  const supported = local.codecs ?? DEFAULT_CODECS;
  const reasons: string[] = [];
  for (const [index, offered] of offer.description.media.entries()) {
    const remote = readAudioMedia(offer.description, offered, supported);
    if ('reason' in remote) {
      reasons.push(remote.reason);
      continue;
    }
    const direction = ANSWER_DIRECTION[offered.direction ?? offer.description.direction ?? 'sendrecv'];
    // The far end's payload type numbers are kept: a dynamic one (PCMU as 96) is answered as offered.
    const format = { payload: remote.payloadType, codec: remote.codec };
    const media = offer.description.media.map((other, i) =>
      i === index
        ? audioMedia(local.port, [format], remote.dtmfPayloadType, direction)
        : { type: other.type, port: 0, protocol: other.protocol, payloads: other.payloads, rtp: [], fmtp: [] },
    );
    return { ok: true, sdp: sdpTransform.write(session(local, media)), remote };
  }
  return { ok: false, reason: reasons[0] ?? 'the offer has no audio stream' };
}

/** What the far end chose in its answer to our offer; throws SdpNegotiationError when it took nothing we speak. */
export function parseSdpAnswer(answerText: string, codecs: readonly G711Codec[] = DEFAULT_CODECS): RemoteMedia {
  const answer = parseSdp(answerText);
  if (!answer.ok) throw new SdpNegotiationError(answer.reason);
  const reasons: string[] = [];
  for (const media of answer.description.media) {
    const usable = readAudioMedia(answer.description, media, codecs);
    if (!('reason' in usable)) return usable;
    reasons.push(usable.reason);
  }
  throw new SdpNegotiationError(reasons[0] ?? 'the answer has no audio stream');
}

function parseSdp(text: string): { ok: true; description: SessionDescription } | { ok: false; reason: string } {
  if (!/^v=0\r?$/m.test(text.split('\n', 1)[0] ?? '')) return { ok: false, reason: 'not an SDP body (no v=0 first)' };
  try {
    const description = sdpTransform.parse(text);
    if (!description.media || description.media.length === 0) return { ok: false, reason: 'the SDP has no m= line' };
    return { ok: true, description };
  } catch (error) {
    return { ok: false, reason: `unreadable SDP: ${(error as Error).message}` };
  }
}

function readAudioMedia(
  description: SessionDescription,
  media: MediaDescription,
  supported: readonly G711Codec[],
): RemoteMedia | { reason: string } {
  if (media.type === undefined) return { reason: 'an unreadable m= line' };
  if (media.type !== 'audio') return { reason: `no audio stream (a ${media.type} stream)` };
  if (media.port === 0) return { reason: 'the audio stream is refused (port 0)' };
  if (!Number.isInteger(media.port) || media.port > 65535) return { reason: `bad audio port ${media.port}` };
  if (!/^RTP\/AVP$/i.test(media.protocol ?? '')) {
    return { reason: `unsupported media protocol ${media.protocol} (plain RTP/AVP only)` };
  }
  const address = media.connection?.ip ?? description.connection?.ip;
  if (!address) return { reason: 'no c= address for the audio stream' };
  if (isIP(address) === 0) return { reason: `the c= address is not an IP address: ${address.slice(0, 60)}` };
  const formats = String(media.payloads ?? '')
    .split(/\s+/)
    .filter((p) => p !== '');
  if (formats.some((format) => !/^\d{1,3}$/.test(format) || Number(format) > 127)) {
    return { reason: `bad payload type list: ${String(media.payloads).slice(0, 60)}` };
  }
  const offered = formats.map(Number);
  const codecOf = (payloadType: number): string | undefined => {
    const rtp = media.rtp.find((entry) => entry.payload === payloadType);
    if (rtp) return rtp.rate === 8000 ? rtp.codec.toUpperCase() : undefined;
    return STATIC_PAYLOAD_TYPES[payloadType];
  };
  const payloadType = offered.find((pt) => supported.includes(codecOf(pt) as G711Codec));
  if (payloadType === undefined) {
    const names = offered
      .map((pt) => media.rtp.find((entry) => entry.payload === pt)?.codec ?? STATIC_PAYLOAD_TYPES[pt] ?? String(pt))
      .filter((name) => name.toLowerCase() !== 'telephone-event')
      .join(', ');
    return { reason: `no common codec: offered ${names || 'none'}, we take ${supported.join(', ')}` };
  }
  const dtmf = media.rtp.find(
    (entry) =>
      entry.codec.toLowerCase() === 'telephone-event' && entry.rate === 8000 && offered.includes(entry.payload),
  );
  return {
    address,
    port: media.port,
    payloadType,
    codec: codecOf(payloadType) as G711Codec,
    dtmfPayloadType: dtmf ? dtmf.payload : null,
  };
}

function audioMedia(
  port: number,
  formats: Array<{ payload: number; codec: G711Codec }>,
  dtmfPayloadType: number | null,
  direction: 'sendrecv' | 'sendonly' | 'recvonly' | 'inactive',
): MediaDescription {
  const payloads = formats.map((format) => format.payload);
  return {
    type: 'audio',
    port,
    protocol: 'RTP/AVP',
    payloads: (dtmfPayloadType === null ? payloads : [...payloads, dtmfPayloadType]).join(' '),
    rtp: [
      ...formats.map(({ payload, codec }) => ({ payload, codec, rate: 8000 })),
      ...(dtmfPayloadType === null ? [] : [{ payload: dtmfPayloadType, codec: 'telephone-event', rate: 8000 }]),
    ],
    // 0-16: the digits, * # A-D and flash.
    fmtp: dtmfPayloadType === null ? [] : [{ payload: dtmfPayloadType, config: '0-16' }],
    ptime: PTIME_MS,
    direction,
  };
}

function session(local: LocalMedia, media: MediaDescription[]): SessionDescription {
  const ipVer = local.address.includes(':') ? 6 : 4;
  return {
    version: 0,
    origin: {
      username: 'parley',
      sessionId: local.sessionId ?? Math.floor(Math.random() * 2 ** 31),
      sessionVersion: local.sessionVersion ?? 1,
      netType: 'IN',
      ipVer,
      address: local.address,
    },
    name: 'Parley',
    connection: { version: ipVer, ip: local.address },
    timing: { start: 0, stop: 0 },
    media,
  };
}
