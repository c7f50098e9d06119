import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeMulaw, encodeMulaw } from './g711.js';
import { createRtpPacketizer, FRAME_SAMPLES } from './rtp-packetizer.js';
import { parseRtp } from './rtp-packet.js';

const ramp = (length: number) => Int16Array.from({ length }, (_, i) => (i * 37) % 20000);

test('PCM becomes 20 ms frames of 160 samples; the remainder waits for more', () => {
  const packetizer = createRtpPacketizer({ codec: 'pcmu', ssrc: 42, sequenceNumber: 100, timestamp: 1000 });
  const pcm = ramp(400);
  const first = packetizer.push(pcm.subarray(0, 250)).map(parseRtp);
  assert.equal(first.length, 1);
  const second = packetizer.push(pcm.subarray(250)).map(parseRtp);
  assert.equal(second.length, 1);
  const last = packetizer.flush().map(parseRtp);
  assert.equal(last.length, 1);
  assert.deepEqual(packetizer.flush(), []);
  const packets = [...first, ...second, ...last];
  assert.deepEqual(
    packets.map((p) => [p.sequenceNumber, p.timestamp, p.ssrc, p.payloadType, p.payload.length]),
    [
      [100, 1000, 42, 0, 160],
      [101, 1160, 42, 0, 160],
      [102, 1320, 42, 0, 160],
    ],
  );
  // The payload is the G.711 of the samples, in order; the flushed frame ends in silence.
  assert.deepEqual(packets[1]!.payload, encodeMulaw(pcm.subarray(160, 320)));
  assert.deepEqual([...decodeMulaw(packets[2]!.payload).subarray(80)], new Array(80).fill(0));
});

test('the marker bit is on the first packet and on the first after markTalkspurt', () => {
  const packetizer = createRtpPacketizer({ codec: 'pcma', ssrc: 1, sequenceNumber: 0, timestamp: 0 });
  const markers = () => packetizer.push(ramp(FRAME_SAMPLES * 2)).map((p) => parseRtp(p).marker);
  assert.deepEqual(markers(), [true, false]);
  assert.deepEqual(markers(), [false, false]);
  packetizer.skip(FRAME_SAMPLES * 10);
  packetizer.markTalkspurt();
  assert.deepEqual(markers(), [true, false]);
});

test('sequence numbers wrap at 16 bits and timestamps at 32 bits', () => {
  const packetizer = createRtpPacketizer({ codec: 'pcmu', ssrc: 7, sequenceNumber: 65534, timestamp: 0xffffff00 });
  const packets = packetizer.push(ramp(FRAME_SAMPLES * 4)).map(parseRtp);
  assert.deepEqual(
    packets.map((p) => p.sequenceNumber),
    [65534, 65535, 0, 1],
  );
  assert.deepEqual(
    packets.map((p) => p.timestamp),
    [0xffffff00, 0xffffffa0, 0x40, 0xe0],
  );
});

test('skipped time moves the timestamp, not the sequence; taken numbers are not reused', () => {
  const packetizer = createRtpPacketizer({ codec: 'pcmu', ssrc: 7, sequenceNumber: 10, timestamp: 0 });
  packetizer.push(ramp(FRAME_SAMPLES));
  packetizer.skip(800);
  assert.equal(packetizer.timestamp, 960);
  assert.equal(packetizer.takeSequenceNumber(), 11);
  const next = parseRtp(packetizer.push(ramp(FRAME_SAMPLES))[0]!);
  assert.equal(next.sequenceNumber, 12);
  assert.equal(next.timestamp, 960);
});

test('without options the SSRC, sequence and timestamp start at random', () => {
  const a = createRtpPacketizer({ codec: 'pcmu' });
  const b = createRtpPacketizer({ codec: 'pcmu' });
  const first = (p: typeof a) => parseRtp(p.push(ramp(FRAME_SAMPLES))[0]!);
  const [pa, pb] = [first(a), first(b)];
  assert.ok(pa.ssrc !== pb.ssrc || pa.sequenceNumber !== pb.sequenceNumber || pa.timestamp !== pb.timestamp);
});
