import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createWakeRotation } from './wake-rotation.js';

function rotation(workers: number) {
  const woken: number[] = [];
  return { woken, rotation: createWakeRotation(workers, (i) => woken.push(i)) };
}

test('each wake-up wakes one idle worker, in turn', () => {
  const { woken, rotation: r } = rotation(4);
  r.wake();
  r.wake();
  r.wake(3);
  assert.deepEqual(woken, [0, 1, 2, 3, 0]);
});

test('a busy worker is skipped while another is idle', () => {
  const { woken, rotation: r } = rotation(4);
  r.started(0);
  r.started(2);
  r.wake(3);
  assert.deepEqual(woken, [1, 3, 1]);
  r.finished(2);
  r.wake();
  assert.deepEqual(woken, [1, 3, 1, 2]);
});

test('when every worker is busy, busy ones are woken in turn (each fetches again once done)', () => {
  const { woken, rotation: r } = rotation(3);
  for (const i of [0, 1, 2]) r.started(i);
  r.wake(2);
  r.wake();
  assert.deepEqual(woken, [0, 1, 2]);
});

test('a worker that found work wakes another, never itself; a lone worker wakes nobody', () => {
  const { woken, rotation: r } = rotation(3);
  r.started(0);
  r.wake(1, 0);
  r.started(1);
  r.wake(1, 1);
  assert.deepEqual(woken, [1, 2]);

  const lone = rotation(1);
  lone.rotation.started(0);
  lone.rotation.wake(1, 0);
  assert.deepEqual(lone.woken, []);
});

test('a wake-up for more jobs than workers wakes each worker once', () => {
  const { woken, rotation: r } = rotation(3);
  r.wake(10);
  assert.deepEqual(woken, [0, 1, 2]);
});
