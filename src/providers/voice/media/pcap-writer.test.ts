import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { constants, gunzipSync } from 'node:zlib';
import { buildDtmfPackets } from './dtmf-events.js';
import { createRtpPacketizer } from './rtp-packetizer.js';
import { createPcapWriter, LINKTYPE_IPV4, openPcapGzFile, pcapFileHeader } from './pcap-writer.js';

interface PcapRecord {
  atMicroseconds: number;
  packet: Buffer;
  originalLength: number;
}

/** A reader of what the writer writes: little-endian, microsecond pcap. */
function readPcap(file: Buffer): { linktype: number; snaplen: number; records: PcapRecord[] } {
  assert.equal(file.readUInt32LE(0), 0xa1b2c3d4, 'magic');
  const records: PcapRecord[] = [];
  let offset = 24;
  while (offset < file.length) {
    const length = file.readUInt32LE(offset + 8);
    records.push({
      atMicroseconds: file.readUInt32LE(offset) * 1_000_000 + file.readUInt32LE(offset + 4),
      originalLength: file.readUInt32LE(offset + 12),
      packet: file.subarray(offset + 16, offset + 16 + length),
    });
    offset += 16 + length;
  }
  assert.equal(offset, file.length, 'the last record ends the file');
  return { linktype: file.readUInt32LE(20), snaplen: file.readUInt32LE(16), records };
}

async function capture(write: (writer: ReturnType<typeof createPcapWriter>) => void): Promise<Buffer> {
  const sink = new PassThrough();
  const chunks: Buffer[] = [];
  sink.on('data', (chunk: Buffer) => chunks.push(chunk));
  const writer = createPcapWriter(sink);
  write(writer);
  await writer.close();
  return Buffer.concat(chunks);
}

const trunk = { address: '203.0.113.10', port: 5060 };
const parley = { address: '198.51.100.7', port: 5060 };
const trunkMedia = { address: '203.0.113.10', port: 31000 };
const parleyMedia = { address: '198.51.100.7', port: 40000 };
const T0 = Date.UTC(2026, 10, 25, 8, 0, 0);

const INVITE = [
  'INVITE sip:+15550100@203.0.113.10 SIP/2.0',
  'Via: SIP/2.0/UDP 198.51.100.7:5060;branch=z9hG4bK776asdhds',
  'Max-Forwards: 70',
  'To: <sip:+15550100@203.0.113.10>',
  'From: <sip:parley@198.51.100.7>;tag=1928301774',
  'Call-ID: a84b4c76e66710@198.51.100.7',
  'CSeq: 314159 INVITE',
  'Contact: <sip:parley@198.51.100.7:5060>',
  'Content-Length: 0',
  '',
  '',
].join('\r\n');
const OK = [
  'SIP/2.0 200 OK',
  'Via: SIP/2.0/UDP 198.51.100.7:5060;branch=z9hG4bK776asdhds',
  'To: <sip:+15550100@203.0.113.10>;tag=a6c85cf',
  'From: <sip:parley@198.51.100.7>;tag=1928301774',
  'Call-ID: a84b4c76e66710@198.51.100.7',
  'CSeq: 314159 INVITE',
  'Content-Length: 0',
  '',
  '',
].join('\r\n');

/** A short call: INVITE, 200 OK, five RTP packets of a tone and one DTMF press. */
function writeCall(writer: ReturnType<typeof createPcapWriter>) {
  writer.writeUdp({ atMs: T0, source: parley, destination: trunk, payload: Buffer.from(INVITE) });
  writer.writeUdp({ atMs: T0 + 120.5, source: trunk, destination: parley, payload: Buffer.from(OK) });
  const packetizer = createRtpPacketizer({ codec: 'pcmu', ssrc: 0x1234, sequenceNumber: 65533, timestamp: 0 });
  const tone = Int16Array.from({ length: 800 }, (_, i) => Math.round(6000 * Math.sin((2 * Math.PI * 440 * i) / 8000)));
  const packets = packetizer.push(tone);
  const dtmf = buildDtmfPackets({
    digit: '5',
    ssrc: packetizer.ssrc,
    timestamp: packetizer.timestamp,
    takeSequenceNumber: packetizer.takeSequenceNumber,
  });
  [...packets, ...dtmf].forEach((payload, i) => {
    writer.writeUdp({ atMs: T0 + 200 + i * 20, source: parleyMedia, destination: trunkMedia, payload });
  });
}

test('the file header is the classic little-endian microsecond pcap header, link type IPv4', () => {
  assert.equal(
    pcapFileHeader().toString('hex'),
    'd4c3b2a1' + '02000400' + '00000000' + '00000000' + 'ffff0000' + 'e4000000',
  );
  assert.equal(LINKTYPE_IPV4, 228);
});

test('each packet is one record with its time to the microsecond and its IPv4/UDP datagram', async () => {
  const file = gunzipSync(await capture(writeCall));
  const { linktype, snaplen, records } = readPcap(file);
  assert.equal(linktype, 228);
  assert.equal(snaplen, 65535);
  assert.equal(records.length, 2 + 5 + 7);
  assert.equal(records[0]!.atMicroseconds, T0 * 1000);
  assert.equal(records[1]!.atMicroseconds, T0 * 1000 + 120_500);
  for (const record of records) {
    assert.equal(record.originalLength, record.packet.length);
    assert.equal(record.packet.readUInt16BE(2), record.packet.length, 'IPv4 total length');
    assert.equal(record.packet.readUInt16BE(24), record.packet.length - 20, 'UDP length');
  }
  assert.equal(records[0]!.packet.subarray(28).toString(), INVITE);
  // IPv4 identification counts up per packet.
  assert.deepEqual(
    records.slice(0, 3).map((r) => r.packet.readUInt16BE(4)),
    [0, 1, 2],
  );
});

test('the capture streams: after flush the sink holds every packet so far, before close', async () => {
  const sink = new PassThrough();
  const chunks: Buffer[] = [];
  sink.on('data', (chunk: Buffer) => chunks.push(chunk));
  const writer = createPcapWriter(sink);
  writer.writeUdp({ atMs: T0, source: parley, destination: trunk, payload: Buffer.from(INVITE) });
  await writer.flush();
  // The flushed bytes reach the sink through the pipe: wait for them, not for a time.
  const partial = () => gunzipSync(Buffer.concat(chunks), { finishFlush: constants.Z_SYNC_FLUSH });
  while (partial().length < 24 + 16 + 28 + INVITE.length) await new Promise((resolve) => setImmediate(resolve));
  assert.equal(readPcap(partial()).records.length, 1);
  await writer.close();
  assert.throws(() => writer.writeUdp({ atMs: T0, source: parley, destination: trunk, payload: Buffer.alloc(1) }));
  assert.equal(readPcap(gunzipSync(Buffer.concat(chunks))).records.length, 1);
});

const tshark = spawnSync('tshark', ['-v'], { stdio: 'ignore' }).status === 0;

test('tshark reads the .pcap.gz: SIP on 5060, RTP and the DTMF event on the media port, checksums good', {
  skip: !tshark && 'tshark is not installed (apt-get install tshark) to read the capture',
}, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'parley-pcap-'));
  try {
    const path = join(dir, 'call.pcap.gz');
    const writer = openPcapGzFile(path);
    writeCall(writer);
    await writer.close();
    assert.equal(readFileSync(path).subarray(0, 2).toString('hex'), '1f8b', 'gzip');
    const fields = [
      'ip.checksum.status',
      'udp.checksum.status',
      'sip.Method',
      'sip.Status-Code',
      'rtp.seq',
      'rtp.timestamp',
      'rtp.p_type',
      'rtp.marker',
      'rtpevent.event_id',
      'rtpevent.end_of_event',
    ];
    const output = execFileSync(
      'tshark',
      [
        '-r',
        path,
        '-d',
        'udp.port==40000,rtp',
        '-o',
        'ip.check_checksum:TRUE',
        '-o',
        'udp.check_checksum:TRUE',
        '-o',
        'rtpevent.event_payload_type_value:101',
        '-T',
        'fields',
        '-E',
        'separator=|',
        ...fields.flatMap((field) => ['-e', field]),
      ],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] },
    );
    const rows = output
      .trim()
      .split('\n')
      .map((line) => Object.fromEntries(line.split('|').map((value, i) => [fields[i], value])));
    assert.equal(rows.length, 14);
    assert.ok(
      rows.every((row) => row['ip.checksum.status'] === '1' && row['udp.checksum.status'] === '1'),
      output,
    );
    assert.equal(rows[0]!['sip.Method'], 'INVITE');
    assert.equal(rows[1]!['sip.Status-Code'], '200');
    const rtp = rows.slice(2);
    assert.deepEqual(
      rtp.map((row) => row['rtp.seq']),
      ['65533', '65534', '65535', '0', '1', '2', '3', '4', '5', '6', '7', '8'],
    );
    assert.deepEqual(
      rtp.slice(0, 5).map((row) => [row['rtp.p_type'], row['rtp.timestamp']]),
      [
        ['0', '0'],
        ['0', '160'],
        ['0', '320'],
        ['0', '480'],
        ['0', '640'],
      ],
    );
    const events = rtp.slice(5);
    assert.ok(
      events.every((row) => row['rtp.p_type'] === '101' && row['rtpevent.event_id'] === '5'),
      output,
    );
    assert.deepEqual(
      events.map((row) => row['rtpevent.end_of_event']),
      ['0', '0', '0', '0', '1', '1', '1'],
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
