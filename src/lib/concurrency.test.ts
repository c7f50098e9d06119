import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createFairLimiter } from './concurrency.js';

/**
 * Submits named work in groups to a limiter with `limit` places, then ends the running ones named in `endings`, one at
 * a time; answers what had started by then, the order all the work started in, and the most that ran at once.
 */
async function startOrder(limit: number, submitted: Array<[group: string, name: string]>, endings: string[]) {
  const limited = createFairLimiter(limit);
  const started: string[] = [];
  const ends = new Map<string, () => void>();
  let running = 0;
  let peak = 0;
  const all = submitted.map(([group, name]) => {
    const ended = new Promise<void>((resolve) => ends.set(name, resolve));
    return limited(group, async () => {
      started.push(name);
      peak = Math.max(peak, ++running);
      await ended;
      running--;
      return name;
    });
  });
  const settle = () => new Promise((resolve) => setImmediate(resolve));
  await settle();
  for (const name of endings) {
    ends.get(name)!();
    await settle();
  }
  const startedByThen = [...started];
  for (const end of ends.values()) end();
  return { startedByThen, started, peak, results: await Promise.all(all) };
}

/** Work named `names`, all in `group`. */
const inGroup = (group: string, ...names: string[]) => names.map((name): [string, string] => [group, name]);

test('one group never holds every place: work of another group that comes later starts at once', async () => {
  const { started } = await startOrder(
    4,
    [...inGroup('slow', 's1', 's2', 's3', 's4', 's5'), ...inGroup('quick', 'q1', 'q2', 'q3')],
    ['s1', 's2', 'q1'],
  );
  // The slow group took three places and kept one free: q1 started at once. The places freed then went to each group
  // up to its share of two: q2, then s4, then q3.
  assert.deepEqual(started.slice(0, 7), ['s1', 's2', 's3', 'q1', 'q2', 's4', 'q3']);
});

test('the place kept free stays free when the other group is done, for the next work of another group', async () => {
  const { startedByThen } = await startOrder(
    4,
    [...inGroup('slow', 's1', 's2', 's3', 's4'), ...inGroup('quick', 'q1')],
    ['q1'],
  );
  assert.deepEqual(startedByThen, ['s1', 's2', 's3', 'q1']);
});

test('the waiting groups take turns, each in its own order; never more at once than the limit', async () => {
  const { started, peak, results } = await startOrder(
    3,
    [...inGroup('a', 'a1', 'a2', 'a3', 'a4'), ...inGroup('b', 'b1', 'b2'), ...inGroup('c', 'c1')],
    ['a1', 'b1', 'a2', 'c1', 'a3'],
  );
  // With three groups a share is one place: each freed place went to the next group in rotation running none.
  assert.deepEqual(started, ['a1', 'a2', 'b1', 'c1', 'b2', 'a3', 'a4']);
  assert.equal(peak, 3);
  assert.deepEqual(results, ['a1', 'a2', 'a3', 'a4', 'b1', 'b2', 'c1']);
});

test('a single group uses every place but one; a limit of one still runs its work', async () => {
  const many = await startOrder(4, inGroup('x', 'x1', 'x2', 'x3', 'x4', 'x5'), []);
  assert.equal(many.peak, 3);
  const one = await startOrder(1, inGroup('y', 'y1', 'y2'), ['y1']);
  assert.deepEqual(one.started, ['y1', 'y2']);
});

test('a failure frees its place like a success', async () => {
  const limited = createFairLimiter(1);
  await assert.rejects(
    limited('a', async () => {
      throw new Error('no');
    }),
  );
  assert.equal(await limited('b', async () => 'yes'), 'yes');
});
