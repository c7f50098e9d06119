/**
 * The virtual clock: sleeps move its time at once; sleepers side by side add their sleeps to the shared time, while
 * each one's own time line moves only with its own sleeps (what a call measures of its waits).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createVirtualClock, systemClock, timelineOf } from './clock.js';

const START = new Date('2026-03-02T15:00:00.000Z');
const since = (start: Date, clock: { now(): Date }) => clock.now().getTime() - start.getTime();

test('overlapping sleepers each measure their own waits; the shared time moves with all of them', async () => {
  const clock = createVirtualClock({ start: START });
  const measured = await Promise.all(
    [400, 1_000, 2_500].map(async (ms) => {
      const own = timelineOf(clock);
      const began = own.now();
      for (let i = 0; i < 4; i++) await own.sleep(ms);
      return since(began, own);
    }),
  );
  assert.deepEqual(measured, [1_600, 4_000, 10_000]);
  assert.equal(since(START, clock), 15_600);
});

test('a time line starts at the shared time, and an aborted sleep does not move it', async () => {
  const clock = createVirtualClock({ start: START });
  clock.advance(60_000);
  const own = timelineOf(clock);
  assert.equal(since(START, own), 60_000);
  const abort = new AbortController();
  abort.abort('operator_hangup');
  await assert.rejects(own.sleep(1_000, abort.signal));
  assert.equal(since(START, own), 60_000);
  await own.sleep(250);
  assert.equal(since(START, own), 60_250);
});

test('on the system clock the time line is the clock itself', () => {
  assert.equal(timelineOf(systemClock), systemClock);
});
