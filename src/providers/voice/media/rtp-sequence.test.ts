import { test } from 'node:test';
import assert from 'node:assert/strict';
import { advanceTimestamp, nextSequence, sequenceDistance, timestampDistance } from './rtp-sequence.js';

test('sequence distance takes the short way round the 16-bit circle', () => {
  assert.equal(sequenceDistance(5, 3), 2);
  assert.equal(sequenceDistance(3, 5), -2);
  assert.equal(sequenceDistance(0, 65535), 1);
  assert.equal(sequenceDistance(65535, 0), -1);
  assert.equal(sequenceDistance(10, 65530), 16);
  assert.equal(sequenceDistance(0x8000, 0), -0x8000);
  assert.equal(sequenceDistance(0x7fff, 0), 0x7fff);
});

test('sequence numbers wrap 65535 -> 0', () => {
  assert.equal(nextSequence(65534), 65535);
  assert.equal(nextSequence(65535), 0);
  assert.equal(nextSequence(65535, 3), 2);
});

test('timestamps wrap 2^32 - 1 -> 0 and compare across the wrap', () => {
  assert.equal(advanceTimestamp(0xffffff60, 160), 0);
  assert.equal(advanceTimestamp(0xffffffff, 161), 160);
  assert.equal(timestampDistance(160, 0xffffff60), 320);
  assert.equal(timestampDistance(0xffffff60, 160), -320);
});
