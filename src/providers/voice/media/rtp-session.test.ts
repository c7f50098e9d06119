import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { gunzipSync } from 'node:zlib';
import type { DtmfDigit } from './dtmf-events.js';
import { decodeMulaw, encodeMulaw } from './g711.js';
import { createPcapWriter, openPcapGzFile, type PcapWriter } from './pcap-writer.js';
import { parseRtp, type RtpPacketFields } from './rtp-packet.js';
import { FRAME_SAMPLES } from './rtp-packetizer.js';
import { openRtpSession, type RtpSession, type RtpSessionOptions } from './rtp-session.js';

const LOOPBACK = '127.0.0.1';
// The far end is not known when the first socket opens: a placeholder until setRemote().
const NOBODY = { address: LOOPBACK, port: 9 };
// Everything stays buffered until the test pulls it: pulls are not paced here.
const KEEP_ALL = { targetFrames: 1, maxFrames: 10_000 };
const GUARD_MS = 20_000;

async function until(condition: () => boolean, what: string) {
  const deadline = Date.now() + GUARD_MS;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

function tone(samples: number, amplitude = 8000): Int16Array {
  return Int16Array.from({ length: samples }, (_, i) =>
    Math.round(amplitude * Math.sin((2 * Math.PI * 440 * i) / 8000)),
  );
}

/** Two sessions on loopback pointed at each other (or both at `via`). */
async function openPair(
  extra: Partial<RtpSessionOptions> & { captureA?: PcapWriter } = {},
  via?: { address: string; port: number },
): Promise<[RtpSession, RtpSession]> {
  const base = { localAddress: LOOPBACK, localPort: 0, payloadType: 0 as const, dtmfPayloadType: 101 };
  const a = await openRtpSession({ ...base, remote: via ?? NOBODY, capture: extra.captureA });
  const b = await openRtpSession({ ...base, jitterBuffer: KEEP_ALL, remote: via ?? a.local });
  if (!via) a.setRemote(b.local);
  return [a, b];
}

function pullAudio(session: RtpSession, frames: number): Int16Array {
  const out = new Int16Array(frames * FRAME_SAMPLES);
  for (let i = 0; i < frames; i++) {
    const frame = session.pull();
    assert.equal(frame.kind, 'audio', `frame ${i}`);
    out.set(frame.samples, i * FRAME_SAMPLES);
  }
  return out;
}

/** The RTP packets of an in-memory capture, with their UDP ports. */
function capturedRtp(file: Buffer): { sourcePort: number; destinationPort: number; rtp: RtpPacketFields }[] {
  const packets = [];
  for (let offset = 24; offset < file.length; ) {
    const length = file.readUInt32LE(offset + 8);
    const ip = file.subarray(offset + 16, offset + 16 + length);
    packets.push({
      sourcePort: ip.readUInt16BE(20),
      destinationPort: ip.readUInt16BE(22),
      rtp: parseRtp(ip.subarray(28)),
    });
    offset += 16 + length;
  }
  return packets;
}

function memoryCapture() {
  const sink = new PassThrough();
  const chunks: Buffer[] = [];
  sink.on('data', (chunk: Buffer) => chunks.push(chunk));
  const writer = createPcapWriter(sink);
  return { writer, read: async () => (await writer.close(), gunzipSync(Buffer.concat(chunks))) };
}

test('audio from one session arrives at the other as the same PCM, paced 160 samples a packet', async () => {
  const capture = memoryCapture();
  const [a, b] = await openPair({ captureA: capture.writer });
  try {
    const pcm = tone(25 * FRAME_SAMPLES + 40); // 500 ms and a bit: the last frame is padded
    const result = await a.play(pcm);
    assert.deepEqual(result, { sentMs: 520, aborted: false });
    await until(() => b.stats.packetsReceived >= 26, 'all packets at b');
    const received = pullAudio(b, 26);
    const expected = new Int16Array(26 * FRAME_SAMPLES);
    expected.set(decodeMulaw(encodeMulaw(pcm)));
    assert.deepEqual(received, expected, 'exactly what G.711 makes of the input');
    for (let i = 0; i < pcm.length; i++) assert.ok(Math.abs(received[i]! - pcm[i]!) <= 300, `sample ${i}`);
    assert.equal(b.pull().kind, 'buffering', 'nothing more');

    assert.equal(a.stats.packetsSent, 26);
    assert.equal(a.stats.bytesSent, 26 * (12 + 160));
    assert.equal(b.stats.bytesReceived, 26 * (12 + 160));
    assert.equal(b.stats.lost, 0);
    assert.equal(b.stats.duplicates, 0);
    assert.ok(Number.isFinite(b.stats.jitterMs) && b.stats.jitterMs >= 0);

    await a.close();
    const sent = capturedRtp(await capture.read());
    assert.equal(sent.length, 26);
    sent.forEach(({ sourcePort, destinationPort, rtp }, i) => {
      assert.equal(sourcePort, a.local.port);
      assert.equal(destinationPort, b.local.port);
      assert.equal(rtp.sequenceNumber, (sent[0]!.rtp.sequenceNumber + i) & 0xffff);
      assert.equal(rtp.timestamp, (sent[0]!.rtp.timestamp + i * FRAME_SAMPLES) >>> 0);
      assert.equal(rtp.marker, i === 0, 'the marker starts the talkspurt');
      assert.equal(rtp.ssrc, a.ssrc);
    });
  } finally {
    await a.close();
    await b.close();
  }
});

test('DTMF both ways arrives once per digit, and a digit during play pauses the audio', async () => {
  const capture = memoryCapture();
  const [a, b] = await openPair({ captureA: capture.writer });
  const atA: DtmfDigit[] = [];
  const atB: DtmfDigit[] = [];
  a.onDigit((digit) => atA.push(digit));
  b.onDigit((digit) => atB.push(digit));
  try {
    await Promise.all([a.sendDtmf('1'), b.sendDtmf('#', { durationMs: 60 })]);
    await a.sendDtmf('2');
    const sentBefore = a.stats.packetsSent;
    const playing = a.play(tone(10 * FRAME_SAMPLES));
    await until(() => a.stats.packetsSent > sentBefore, 'play under way');
    const during = a.sendDtmf('9');
    assert.deepEqual(await playing, { sentMs: 200, aborted: false });
    await during;
    await until(() => b.stats.packetsReceived === a.stats.packetsSent, 'every packet at b');
    await until(() => a.stats.packetsReceived === b.stats.packetsSent, 'every packet at a');
    assert.deepEqual(
      atB.map((d) => d.digit),
      ['1', '2', '9'],
    );
    assert.deepEqual(
      atA.map((d) => [d.digit, d.durationMs]),
      [['#', 60]],
    );
    assert.equal(b.stats.lost, 0);

    await a.close();
    const sent = capturedRtp(await capture.read()).filter((p) => p.sourcePort === a.local.port);
    // One stream: audio and events share the sequence numbers with no gap.
    sent.forEach(({ rtp }, i) => assert.equal(rtp.sequenceNumber, (sent[0]!.rtp.sequenceNumber + i) & 0xffff));
    const kinds = sent.map(({ rtp }) => (rtp.payloadType === 101 ? 'E' : rtp.marker ? 'A' : 'a')).join('');
    // '1' and '2' (4 updates, 3 ends each), then play: some frames, the '9', the rest as a new talkspurt.
    assert.match(kinds, /^E{14}Aa*E{7}Aa*$/);
    assert.equal(kinds.replace(/E/g, '').length, 10);
  } finally {
    await a.close();
    await b.close();
  }
});

test('aborting play stops within a frame and reports the ms sent', async () => {
  const [a, b] = await openPair();
  try {
    const controller = new AbortController();
    const playing = a.play(tone(8000 * 10), { signal: controller.signal });
    await until(() => b.stats.packetsReceived >= 5, 'five frames at b');
    controller.abort();
    const sentAtAbort = a.stats.packetsSent;
    const result = await playing;
    assert.equal(result.aborted, true);
    assert.ok(a.stats.packetsSent - sentAtAbort <= 1, 'at most one frame after the abort');
    assert.equal(result.sentMs, a.stats.packetsSent * 20);
    assert.ok(result.sentMs >= 100 && result.sentMs < 10_000);
    // The session plays again afterwards, a new talkspurt.
    assert.deepEqual(await a.play(tone(FRAME_SAMPLES)), { sentMs: 20, aborted: false });
  } finally {
    await a.close();
    await b.close();
  }
});

test('packets reordered and duplicated by a relay come out in order; strangers and garbage are dropped', async () => {
  const relay = createSocket('udp4');
  const stranger = createSocket('udp4');
  await new Promise<void>((resolve) => relay.bind(0, LOOPBACK, resolve));
  const via = { address: LOOPBACK, port: relay.address().port };
  const [a, b] = await openPair({}, via);
  try {
    // From a to b in groups of four, sent as 2 1 4 3, and the first of each group twice.
    let group: Buffer[] = [];
    relay.on('message', (msg, from) => {
      if (from.port !== a.local.port) return;
      group.push(msg);
      if (group.length < 4) return;
      const [p1, p2, p3, p4] = group as [Buffer, Buffer, Buffer, Buffer];
      for (const packet of [p2, p1, p4, p3, p1]) relay.send(packet, b.local.port, LOOPBACK);
      group = [];
    });
    const pcm = tone(12 * FRAME_SAMPLES);
    await a.play(pcm);
    await until(() => b.stats.packetsReceived >= 15, 'fifteen packets at b');
    assert.deepEqual(pullAudio(b, 12), decodeMulaw(encodeMulaw(pcm)));
    assert.equal(b.stats.duplicates, 3);
    assert.equal(b.stats.lost, 0);

    relay.send(Buffer.from([1, 2, 3]), b.local.port, LOOPBACK);
    stranger.send(Buffer.from(a.ssrc.toString()), b.local.port, LOOPBACK);
    await until(() => b.stats.packetsReceived >= 17, 'the two odd packets');
    assert.deepEqual(b.stats.dropped, {
      malformed: 1,
      unexpectedSource: 1,
      unexpectedSsrc: 0,
      unexpectedPayloadType: 0,
    });
  } finally {
    await a.close();
    await b.close();
    relay.close();
    stranger.close();
  }
});

const tshark = spawnSync('tshark', ['-v'], { stdio: 'ignore' }).status === 0;

test('tshark reads the capture of a call: RTP both ways and the DTMF events', {
  skip: !tshark && 'tshark is not installed (apt-get install tshark) to read the capture',
}, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'parley-rtp-session-'));
  const path = join(dir, 'call.pcap.gz');
  const capture = openPcapGzFile(path);
  const [a, b] = await openPair({ captureA: capture });
  try {
    await Promise.all([a.play(tone(5 * FRAME_SAMPLES)), b.play(tone(3 * FRAME_SAMPLES))]);
    await a.sendDtmf('7');
    await until(() => a.stats.packetsReceived === 3, 'b audio at a');
    await a.close();
    await capture.close();
    // The capture belongs to the caller, who closes it once the session is closed.
    const output = spawnSync(
      'tshark',
      [
        '-r',
        path,
        '-d',
        `udp.port==${a.local.port},rtp`,
        '-o',
        'rtpevent.event_payload_type_value:101',
        '-T',
        'fields',
        '-E',
        'separator=|',
        '-e',
        'udp.srcport',
        '-e',
        'rtp.p_type',
        '-e',
        'rtpevent.event_id',
      ],
      { encoding: 'utf8' },
    );
    assert.equal(output.status, 0, output.stderr);
    const rows = output.stdout.trim().split('\n');
    const from = (port: number, type: string) => rows.filter((row) => row.startsWith(`${port}|${type}|`)).length;
    assert.equal(from(a.local.port, '0'), 5);
    assert.equal(from(b.local.port, '0'), 3);
    assert.equal(rows.filter((row) => row === `${a.local.port}|101|7`).length, 7);
  } finally {
    await a.close();
    await b.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

const sipp = spawnSync('sipp', ['-v'], { stdio: 'ignore' }).error === undefined;

async function freeUdpPort(): Promise<number> {
  const socket = createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, LOOPBACK, resolve));
  const { port } = socket.address();
  await new Promise<void>((resolve) => socket.close(() => resolve()));
  return port;
}

test('sipp echoes the session back: the same audio and the digit once', {
  skip: !sipp && 'sipp is not installed (apt-get install sip-tester) to echo RTP',
}, async () => {
  const mediaPort = await freeUdpPort();
  const sipPort = await freeUdpPort();
  const args = ['-sn', 'uas', '-rtp_echo', '-i', LOOPBACK, '-p', String(sipPort), '-mp', String(mediaPort), '-nostdin'];
  const child = spawn('sipp', args, { stdio: 'ignore' });
  const probe = createSocket('udp4');
  let session: RtpSession | undefined;
  try {
    // sipp is ready once it echoes a probe.
    let echoed = false;
    probe.on('message', () => {
      echoed = true;
    });
    await new Promise<void>((resolve) => probe.bind(0, LOOPBACK, resolve));
    const deadline = Date.now() + GUARD_MS;
    while (!echoed) {
      if (Date.now() > deadline || child.exitCode !== null) throw new Error('sipp did not echo');
      probe.send(Buffer.from([0x80, 0, 0, 0]), mediaPort, LOOPBACK);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const opened = await openRtpSession({
      localAddress: LOOPBACK,
      localPort: 0,
      remote: { address: LOOPBACK, port: mediaPort },
      payloadType: 0,
      dtmfPayloadType: 101,
      jitterBuffer: KEEP_ALL,
    });
    session = opened;
    const digits: string[] = [];
    opened.onDigit((digit) => digits.push(digit.digit));
    const pcm = tone(10 * FRAME_SAMPLES);
    await opened.play(pcm);
    await opened.sendDtmf('5');
    await until(() => opened.stats.packetsReceived === opened.stats.packetsSent, 'every packet echoed');
    assert.deepEqual(pullAudio(opened, 10), decodeMulaw(encodeMulaw(pcm)));
    assert.deepEqual(digits, ['5']);
    assert.equal(opened.stats.lost, 0);
  } finally {
    await session?.close();
    probe.close();
    child.kill();
  }
});
