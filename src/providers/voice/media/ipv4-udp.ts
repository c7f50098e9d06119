/**
 * An IPv4 + UDP datagram around a payload, with real lengths and checksums, for packet captures: what
 * Parley sent and received on a UDP socket, written as the network would have carried it, so Wireshark
 * and tshark dissect it without complaint.
 */
import { isIPv4 } from 'node:net';

export interface UdpEndpoint {
  /** Dotted IPv4 address. */
  address: string;
  port: number;
}

const IPV4_HEADER_BYTES = 20;
const UDP_HEADER_BYTES = 8;
const UDP_PROTOCOL = 17;
export const MAX_UDP_PAYLOAD_BYTES = 0xffff - IPV4_HEADER_BYTES - UDP_HEADER_BYTES;

export class DatagramError extends Error {}

function ipv4Bytes(address: string): number[] {
  if (!isIPv4(address)) throw new DatagramError(`not an IPv4 address: ${address}`);
  return address.split('.').map(Number);
}

function checkPort(port: number) {
  if (!Number.isInteger(port) || port < 0 || port > 0xffff) throw new DatagramError(`not a UDP port: ${port}`);
}

/** The ones' complement sum of 16-bit big-endian words (an odd last byte is padded with zero). */
function onesComplementSum(bytes: Uint8Array, start = 0): number {
  let sum = start;
  for (let i = 0; i + 1 < bytes.length; i += 2) sum += (bytes[i]! << 8) | bytes[i + 1]!;
  if (bytes.length % 2 === 1) sum += bytes[bytes.length - 1]! << 8;
  while (sum > 0xffff) sum = (sum & 0xffff) + (sum >>> 16);
  return sum;
}

/** The Internet checksum (RFC 1071). */
export function internetChecksum(bytes: Uint8Array, start = 0): number {
  return ~onesComplementSum(bytes, start) & 0xffff;
}

export interface UdpDatagram {
  source: UdpEndpoint;
  destination: UdpEndpoint;
  payload: Uint8Array;
  /** The IPv4 identification field; captures count it up per packet. */
  identification?: number;
}

export function ipv4UdpDatagram({ source, destination, payload, identification = 0 }: UdpDatagram): Uint8Array {
  const src = ipv4Bytes(source.address);
  const dst = ipv4Bytes(destination.address);
  checkPort(source.port);
  checkPort(destination.port);
  if (payload.length > MAX_UDP_PAYLOAD_BYTES) {
    throw new DatagramError(`a UDP payload is at most ${MAX_UDP_PAYLOAD_BYTES} bytes, got ${payload.length}`);
  }
  const udpLength = UDP_HEADER_BYTES + payload.length;
  const packet = new Uint8Array(IPV4_HEADER_BYTES + udpLength);
  const view = new DataView(packet.buffer);
  view.setUint8(0, 0x45); // version 4, header of 5 words
  view.setUint16(2, packet.length);
  view.setUint16(4, identification & 0xffff);
  view.setUint16(6, 0x4000); // don't fragment
  view.setUint8(8, 64); // TTL
  view.setUint8(9, UDP_PROTOCOL);
  packet.set(src, 12);
  packet.set(dst, 16);
  view.setUint16(10, internetChecksum(packet.subarray(0, IPV4_HEADER_BYTES)));

  const udp = packet.subarray(IPV4_HEADER_BYTES);
  view.setUint16(IPV4_HEADER_BYTES, source.port);
  view.setUint16(IPV4_HEADER_BYTES + 2, destination.port);
  view.setUint16(IPV4_HEADER_BYTES + 4, udpLength);
  udp.set(payload, UDP_HEADER_BYTES);
  // The UDP checksum covers a pseudo-header of the addresses, protocol and length, then the datagram.
  const pseudoHeader = Uint8Array.of(...src, ...dst, 0, UDP_PROTOCOL, udpLength >> 8, udpLength & 0xff);
  const checksum = internetChecksum(udp, onesComplementSum(pseudoHeader));
  view.setUint16(IPV4_HEADER_BYTES + 6, checksum === 0 ? 0xffff : checksum); // 0 would mean "no checksum"
  return packet;
}
