import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createJitterBuffer, type JitterBuffer } from './jitter-buffer.js';

/** A frame whose every sample is its own marker value, so a pulled frame tells which one it was. */
const frame = (value: number) => new Int16Array(160).fill(value);

function pullMany(buffer: JitterBuffer, count: number) {
  return Array.from({ length: count }, () => {
    const { samples, kind } = buffer.pull();
    return kind === 'audio' ? samples[0]! : kind;
  });
}

test('nothing plays until the target depth is buffered, then frames come in order', () => {
  const buffer = createJitterBuffer({ targetFrames: 3 });
  buffer.push(10, frame(10));
  buffer.push(11, frame(11));
  assert.deepEqual(pullMany(buffer, 1), ['buffering']);
  buffer.push(12, frame(12));
  assert.deepEqual(pullMany(buffer, 3), [10, 11, 12]);
  assert.equal(buffer.depth, 0);
  assert.equal(buffer.pull().samples.length, 160);
});

test('frames that arrive out of order play in sequence order', () => {
  const buffer = createJitterBuffer({ targetFrames: 3 });
  for (const sequence of [3, 1, 2, 5, 4]) buffer.push(sequence, frame(sequence));
  assert.deepEqual(pullMany(buffer, 5), [1, 2, 3, 4, 5]);
});

test('reordering across the 16-bit wrap keeps 65534, 65535, 0, 1 in order', () => {
  const buffer = createJitterBuffer({ targetFrames: 4 });
  for (const sequence of [0, 65535, 1, 65534]) buffer.push(sequence, frame(sequence === 0 ? 7 : sequence % 1000));
  assert.deepEqual(pullMany(buffer, 4), [534, 535, 7, 1]);
});

test('duplicates are dropped and counted', () => {
  const buffer = createJitterBuffer({ targetFrames: 2 });
  buffer.push(1, frame(1));
  buffer.push(1, frame(99));
  buffer.push(2, frame(2));
  assert.deepEqual(pullMany(buffer, 2), [1, 2]);
  assert.equal(buffer.stats.duplicates, 1);
});

test('a frame that arrives after its turn is dropped as late', () => {
  const buffer = createJitterBuffer({ targetFrames: 2, conceal: 'silence' });
  buffer.push(1, frame(1));
  buffer.push(3, frame(3));
  assert.deepEqual(pullMany(buffer, 2), [1, 'concealed']);
  buffer.push(2, frame(2)); // too late: 2 was concealed already
  buffer.push(1, frame(1)); // and 1 was played
  assert.deepEqual(pullMany(buffer, 1), [3]);
  assert.equal(buffer.stats.late, 2);
  assert.equal(buffer.stats.concealed, 1);
});

test('a missing frame is concealed by the last one at half level once, then by silence', () => {
  const buffer = createJitterBuffer({ targetFrames: 2 });
  buffer.push(1, frame(1000));
  buffer.push(5, frame(5));
  const pulled = Array.from({ length: 5 }, () => buffer.pull());
  assert.deepEqual(
    pulled.map((p) => [p.kind, p.samples[0]]),
    [
      ['audio', 1000],
      ['concealed', 500],
      ['concealed', 0],
      ['concealed', 0],
      ['audio', 5],
    ],
  );
  assert.ok(pulled.every((p) => p.samples.length === 160));
});

test('running dry buffers again instead of concealing a pause forever', () => {
  const buffer = createJitterBuffer({ targetFrames: 2 });
  buffer.push(1, frame(1));
  buffer.push(2, frame(2));
  assert.deepEqual(pullMany(buffer, 4), [1, 2, 'buffering', 'buffering']);
  buffer.push(3, frame(3));
  assert.deepEqual(pullMany(buffer, 1), ['buffering']);
  buffer.push(4, frame(4));
  assert.deepEqual(pullMany(buffer, 2), [3, 4]);
  assert.equal(buffer.stats.concealed, 0);
});

test('the depth is bounded: past the maximum the oldest frames go, back to the target', () => {
  const buffer = createJitterBuffer({ targetFrames: 3, maxFrames: 5 });
  for (let sequence = 1; sequence <= 6; sequence++) buffer.push(sequence, frame(sequence));
  assert.equal(buffer.depth, 3);
  assert.equal(buffer.stats.overflow, 3);
  buffer.push(2, frame(2)); // dropped frames count as played: this one is late now
  assert.deepEqual(pullMany(buffer, 3), [4, 5, 6]);
  assert.equal(buffer.stats.late, 1);
});

test('a burst during playout trims the backlog and playout continues from the newest frames', () => {
  const buffer = createJitterBuffer({ targetFrames: 2, maxFrames: 4 });
  buffer.push(100, frame(100));
  buffer.push(101, frame(101));
  assert.deepEqual(pullMany(buffer, 1), [100]);
  for (let sequence = 102; sequence <= 105; sequence++) buffer.push(sequence, frame(sequence));
  assert.deepEqual(pullMany(buffer, 2), [104, 105]);
});

test('a sender that restarts its sequence far away starts a new stream', () => {
  const buffer = createJitterBuffer({ targetFrames: 1 });
  buffer.push(100, frame(100));
  assert.deepEqual(pullMany(buffer, 1), [100]);
  buffer.push(30_000, frame(3));
  assert.deepEqual(pullMany(buffer, 1), [3]);
  assert.equal(buffer.stats.late, 0);
});
