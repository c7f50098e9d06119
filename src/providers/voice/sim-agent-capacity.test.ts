/**
 * The simulated agent capacity, on a virtual clock and without an app: who gets a slot, how long a person waits in
 * silence, and when they give up.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createVirtualClock } from '../../lib/clock.js';
import { createSimAgentCapacity, fallsWithinShare, SILENCE_HANGUP_MS, silenceHeard } from './sim-agent-capacity.js';

const START = new Date('2026-03-02T15:00:00.000Z');
const noSignal = () => new AbortController().signal;

test('fallsWithinShare: the same call id always falls on the same side; the share is about the rate', () => {
  const ids = Array.from({ length: 2_000 }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`);
  assert.equal(
    ids.some((id) => fallsWithinShare(id, 0)),
    false,
  );
  assert.equal(
    ids.every((id) => fallsWithinShare(id, 1)),
    true,
  );
  const fallen = ids.filter((id) => fallsWithinShare(id, 0.25));
  assert.deepEqual(
    fallen,
    ids.filter((id) => fallsWithinShare(id, 0.25)),
  );
  assert.ok(fallen.length > 400 && fallen.length < 600, `${fallen.length} of 2000`);
});

test('silenceHeard: as far as any conversation went since the person answered, each from when it was marked', () => {
  const cases: Array<[string, Array<{ heldSince: number; now: number; markedAt?: number }>, number]> = [
    ['no conversation', [], 0],
    ['one conversation held since before', [{ heldSince: 0, now: 3_000, markedAt: 1_000 }], 2_000],
    [
      'the furthest of two',
      [
        { heldSince: 0, now: 3_000, markedAt: 1_000 },
        { heldSince: 0, now: 9_000, markedAt: 8_000 },
      ],
      2_000,
    ],
    ['a slot taken after they answered counts from then', [{ heldSince: 5_000, now: 6_500 }], 1_500],
    ['a mark before the slot was taken counts from the slot', [{ heldSince: 2_000, now: 2_500, markedAt: 1_000 }], 500],
  ];
  for (const [name, slots, expected] of cases) assert.equal(silenceHeard(slots), expected, name);
});

test('with every slot taken, the next person waits until a conversation ends, and gets its slot', async () => {
  const clock = createVirtualClock({ start: START });
  const capacity = createSimAgentCapacity(clock, { slots: 1, lateStartRate: 0, lateStartMs: 0 });
  const first = capacity.timeline();
  const held = await capacity.ready('call-1', first, noSignal());
  assert.equal(held.gaveUp, false);
  assert.equal(held.waitedMs, 0);
  const second = capacity.timeline();
  const waiting = capacity.ready('call-2', second, noSignal());
  await first.sleep(2_000);
  held.release();
  const granted = await waiting;
  assert.equal(granted.gaveUp, false);
  assert.equal(granted.waitedMs, 2_000);
  granted.release();
});

test('a person who hears the silence limit before a slot frees hangs up; the slot goes to the next', async () => {
  const clock = createVirtualClock({ start: START });
  const capacity = createSimAgentCapacity(clock, { slots: 1, lateStartRate: 0, lateStartMs: 0 });
  const first = capacity.timeline();
  const held = await capacity.ready('call-1', first, noSignal());
  const waiting = capacity.ready('call-2', capacity.timeline(), noSignal());
  await first.sleep(SILENCE_HANGUP_MS);
  const { gaveUp, waitedMs } = await waiting;
  assert.deepEqual({ gaveUp, waitedMs }, { gaveUp: true, waitedMs: SILENCE_HANGUP_MS });
  held.release();
  const next = await capacity.ready('call-3', capacity.timeline(), noSignal());
  assert.equal(next.gaveUp, false, 'the freed slot is free again');
});

test('a late start waits on the call time line; a call ended while waiting rejects with its reason', async () => {
  const clock = createVirtualClock({ start: START });
  const late = createSimAgentCapacity(clock, { slots: 0, lateStartRate: 1, lateStartMs: 3_000 });
  const timeline = late.timeline();
  const ready = await late.ready('call-1', timeline, noSignal());
  assert.equal(ready.waitedMs, 3_000);
  assert.equal(timeline.now().getTime() - START.getTime(), 3_000);

  const full = createSimAgentCapacity(clock, { slots: 1, lateStartRate: 0, lateStartMs: 0 });
  await full.ready('call-1', full.timeline(), noSignal());
  const ended = new AbortController();
  const waiting = full.ready('call-2', full.timeline(), ended.signal);
  ended.abort('operator_hangup');
  await assert.rejects(waiting, (reason: unknown) => reason === 'operator_hangup');
});
