import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createFairLimiter } from './concurrency.js';

/** Work that ends when the test says so. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

test('at most the limit run at once; the waiting groups take turns, each in its own order', async () => {
  const limited = createFairLimiter(2);
  const started: string[] = [];
  let running = 0;
  let peak = 0;
  const gates = new Map<string, ReturnType<typeof gate>>();
  const submit = (group: string, name: string) => {
    const g = gate();
    gates.set(name, g);
    return limited(group, async () => {
      started.push(name);
      peak = Math.max(peak, ++running);
      await g.opened;
      running--;
      return name;
    });
  };
  // A group with a backlog is submitted first; two other groups come after it.
  const all = [
    ...['a1', 'a2', 'a3', 'a4', 'a5'].map((name) => submit('a', name)),
    submit('b', 'b1'),
    submit('b', 'b2'),
    submit('c', 'c1'),
  ];
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(started, ['a1', 'a2']);
  for (const name of ['a1', 'a2', 'a3', 'b1', 'c1', 'a4', 'b2', 'a5']) {
    gates.get(name)!.open();
    await new Promise((resolve) => setImmediate(resolve));
  }
  assert.equal(peak, 2);
  // a1 and a2 ran first; then each freed place went to the next group in turn: a, b, c, a, b, then a's last.
  assert.deepEqual(started, ['a1', 'a2', 'a3', 'b1', 'c1', 'a4', 'b2', 'a5']);
  assert.deepEqual(await Promise.all(all), ['a1', 'a2', 'a3', 'a4', 'a5', 'b1', 'b2', 'c1']);
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
