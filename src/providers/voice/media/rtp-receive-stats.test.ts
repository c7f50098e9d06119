import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRtpReceiveStats } from './rtp-receive-stats.js';

const packet = (sequenceNumber: number, timestamp = sequenceNumber * 160, ssrc = 7) => ({
  sequenceNumber: sequenceNumber & 0xffff,
  timestamp: timestamp >>> 0,
  ssrc,
});

test('losses come from sequence gaps across the 16-bit wrap; duplicates are refused and counted', () => {
  const counter = createRtpReceiveStats();
  for (const sequence of [65533, 65534, 0, 2, 1, 1, 5]) counter.accept(packet(sequence), true, 0);
  // 65533..5 is 9 packets; 65535, 3 and 4 never came.
  assert.equal(counter.stats.lost, 3);
  assert.equal(counter.stats.duplicates, 1);
  assert.equal(counter.accept(packet(5), true, 0), false);
});

test('a second SSRC is dropped, not mixed in', () => {
  const counter = createRtpReceiveStats();
  assert.equal(counter.accept(packet(10), true, 0), true);
  assert.equal(counter.accept(packet(11, 1760, 8), true, 20), false);
  assert.equal(counter.stats.dropped.unexpectedSsrc, 1);
  counter.restart(); // a new far end: its SSRC and sequence are learnt afresh, the losses so far kept
  assert.equal(counter.accept(packet(500, 0, 8), true, 40), true);
  assert.equal(counter.accept(packet(502, 320, 8), true, 80), true);
  assert.equal(counter.stats.lost, 1);
});

test('interarrival jitter follows RFC 3550: zero for perfect pacing, J += (|D| - J) / 16 otherwise', () => {
  const steady = createRtpReceiveStats();
  for (let i = 0; i < 50; i++) steady.accept(packet(i), true, i * 20);
  assert.equal(steady.stats.jitterMs, 0);

  const uneven = createRtpReceiveStats();
  uneven.accept(packet(0), true, 0);
  uneven.accept(packet(1), true, 30); // 10 ms late: D = 80 timestamp units
  assert.equal(uneven.stats.jitterMs, 10 / 16);
  uneven.accept(packet(2), true, 40); // back on time: D = -80
  assert.equal(uneven.stats.jitterMs, (10 / 16) * (15 / 16) + 10 / 16);
});
