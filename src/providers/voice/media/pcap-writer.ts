/**
 * A packet capture of a call, written as it happens: the classic libpcap format (microsecond timestamps,
 * link type LINKTYPE_IPV4, so each record is an IPv4 packet with no link header), gzip-compressed on the
 * way out. Wireshark and tshark open the .pcap.gz as it is.
 */
import { createWriteStream } from 'node:fs';
import type { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { ipv4UdpDatagram, type UdpEndpoint } from './ipv4-udp.js';

export const PCAP_MAGIC_MICROSECONDS = 0xa1b2c3d4;
export const LINKTYPE_IPV4 = 228;
export const PCAP_SNAPLEN = 0xffff;
const FILE_HEADER_BYTES = 24;
const RECORD_HEADER_BYTES = 16;

export interface CapturedUdpPacket {
  /** When it was sent or received, in milliseconds since the epoch (fractions keep microseconds). */
  atMs: number;
  source: UdpEndpoint;
  destination: UdpEndpoint;
  payload: Uint8Array;
}

export interface PcapWriter {
  writeUdp(packet: CapturedUdpPacket): void;
  /** Pushes what was written so far through gzip to the sink, so a reader of the partial file sees it. */
  flush(): Promise<void>;
  /** Ends the gzip stream and waits until the sink has it all; rejects if writing failed. */
  close(): Promise<void>;
}

/** The 24-byte file header, little-endian (readers tell the byte order from the magic number). */
export function pcapFileHeader(linktype = LINKTYPE_IPV4): Buffer {
  const header = Buffer.alloc(FILE_HEADER_BYTES);
  header.writeUInt32LE(PCAP_MAGIC_MICROSECONDS, 0);
  header.writeUInt16LE(2, 4); // version 2.4
  header.writeUInt16LE(4, 6);
  header.writeInt32LE(0, 8); // timestamps are UTC
  header.writeUInt32LE(0, 12); // accuracy: unused
  header.writeUInt32LE(PCAP_SNAPLEN, 16);
  header.writeUInt32LE(linktype, 20);
  return header;
}

/** One record: its 16-byte header (time, captured and original length) and the packet. */
export function pcapRecord(atMs: number, packet: Uint8Array): Buffer {
  const microseconds = Math.round(atMs * 1000);
  const record = Buffer.alloc(RECORD_HEADER_BYTES + packet.length);
  record.writeUInt32LE(Math.floor(microseconds / 1_000_000), 0);
  record.writeUInt32LE(microseconds % 1_000_000, 4);
  record.writeUInt32LE(packet.length, 8);
  record.writeUInt32LE(packet.length, 12);
  record.set(packet, RECORD_HEADER_BYTES);
  return record;
}

/** A capture gzipped into `sink` (a file, an upload stream); the file header goes out at once. */
export function createPcapWriter(sink: Writable): PcapWriter {
  const gzip = createGzip();
  const done = pipeline(gzip, sink);
  done.catch(() => {}); // reported by close()
  gzip.write(pcapFileHeader());
  let identification = 0;
  let closed = false;
  return {
    writeUdp({ atMs, source, destination, payload }) {
      if (closed) throw new Error('the capture is closed');
      const datagram = ipv4UdpDatagram({ source, destination, payload, identification: identification++ });
      // gzip buffers what the sink has not taken yet; a call's packets are small and few enough for that.
      gzip.write(pcapRecord(atMs, datagram));
    },
    flush() {
      return new Promise<void>((resolve) => gzip.flush(() => resolve()));
    },
    async close() {
      if (!closed) {
        closed = true;
        gzip.end();
      }
      await done;
    },
  };
}

/** A capture written to a .pcap.gz file. */
export function openPcapGzFile(path: string): PcapWriter {
  return createPcapWriter(createWriteStream(path));
}
