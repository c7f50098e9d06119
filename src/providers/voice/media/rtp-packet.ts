/**
 * RTP packets (RFC 3550) as plain objects: bytes in, fields out, and back. The wire format is `rtp.js`
 * (versatica); this file keeps its class and DataViews out of the rest of Parley.
 */
import { RtpPacket } from 'rtp.js/packets';

export interface RtpPacketFields {
  payloadType: number;
  marker: boolean;
  /** 16 bits, wraps 65535 -> 0. */
  sequenceNumber: number;
  /** 32 bits in units of the payload's clock (8000 a second for G.711), wraps 2^32 - 1 -> 0. */
  timestamp: number;
  ssrc: number;
  csrcs: number[];
  /** Header extension elements by id (RFC 8285 one-byte or two-byte form). */
  extensions: Map<number, Uint8Array>;
  payload: Uint8Array;
  /** Padding bytes after the payload (0 when the P bit is clear). */
  padding: number;
}

export type RtpPacketInput = Pick<RtpPacketFields, 'payloadType' | 'sequenceNumber' | 'timestamp' | 'ssrc'> &
  Partial<Pick<RtpPacketFields, 'marker' | 'csrcs' | 'extensions' | 'payload'>> & {
    /** Pad the packet to a multiple of 4 bytes (sets the P bit when bytes are added). */
    padTo4Bytes?: boolean;
  };

export class RtpFormatError extends Error {}

const view = (bytes: Uint8Array) => new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
const bytesOf = (data: DataView) => new Uint8Array(data.buffer, data.byteOffset, data.byteLength);

/** The fields of one RTP packet. The payload and extension values share memory with `bytes`. */
export function parseRtp(bytes: Uint8Array): RtpPacketFields {
  let packet: RtpPacket;
  try {
    packet = new RtpPacket(view(bytes));
  } catch (error) {
    throw new RtpFormatError(`not an RTP packet: ${(error as Error).message}`);
  }
  const extensions = new Map<number, Uint8Array>();
  for (const [id, value] of packet.getExtensions()) extensions.set(id, bytesOf(value));
  return {
    payloadType: packet.getPayloadType(),
    marker: packet.getMarker(),
    sequenceNumber: packet.getSequenceNumber(),
    timestamp: packet.getTimestamp(),
    ssrc: packet.getSsrc(),
    csrcs: packet.getCsrcs(),
    extensions,
    payload: bytesOf(packet.getPayload()),
    padding: packet.getPadding(),
  };
}

// One-byte elements carry ids 1-14 and 1-16 bytes; anything else needs the two-byte form.
const fitsOneByte = (extensions: Map<number, Uint8Array>) =>
  [...extensions].every(([id, value]) => id >= 1 && id <= 14 && value.length >= 1 && value.length <= 16);

export function buildRtp(input: RtpPacketInput): Uint8Array {
  // The field is 7 bits: a larger number would silently become another payload type.
  if (!Number.isInteger(input.payloadType) || input.payloadType < 0 || input.payloadType > 127) {
    throw new RtpFormatError(`an RTP payload type is 0-127, got ${input.payloadType}`);
  }
  const packet = new RtpPacket();
  packet.setPayloadType(input.payloadType);
  packet.setMarker(input.marker ?? false);
  packet.setSequenceNumber(input.sequenceNumber & 0xffff);
  packet.setTimestamp(input.timestamp >>> 0);
  packet.setSsrc(input.ssrc >>> 0);
  if (input.csrcs?.length) packet.setCsrcs(input.csrcs);
  if (input.extensions?.size) {
    if (fitsOneByte(input.extensions)) packet.enableOneByteExtensions();
    else packet.enableTwoBytesExtensions();
    for (const [id, value] of input.extensions) packet.setExtension(id, view(value));
  }
  if (input.payload) packet.setPayload(view(input.payload));
  if (input.padTo4Bytes) packet.padTo4Bytes();
  const out = new Uint8Array(packet.getByteLength());
  packet.serialize(out.buffer, 0);
  return out;
}
