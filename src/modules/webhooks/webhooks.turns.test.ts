/**
 * The turns of delivery attempts in a worker process: accounts first, then their endpoints; a place always left for
 * another account and for an account's other endpoints; half the places at most for endpoints not known to answer
 * quickly, a quarter for those that time out; attempts given up before their turn never run.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createDeliveryTurns, penaltyPlacesOf, slowPlacesOf, type Turn } from './webhooks.turns.js';

/** Attempts that run until the test ends them; `started` lists them in the order they started. */
function harness(limit: number) {
  const turns = createDeliveryTurns({
    limit,
    slowPlaces: slowPlacesOf(limit),
    penaltyPlaces: penaltyPlacesOf(limit),
  });
  const started: string[] = [];
  const finishers = new Map<string, () => void>();
  const results: Array<Promise<string | undefined>> = [];
  const tick = () => new Promise((resolve) => setImmediate(resolve));
  /** Asks for a turn; answers once the turn, if given at once, has started. */
  const attempt = async (name: string, turn: Turn, giveUp?: AbortSignal) => {
    results.push(
      turns.run(
        turn,
        () =>
          new Promise<string>((resolve) => {
            started.push(name);
            finishers.set(name, () => resolve(name));
          }),
        giveUp,
      ),
    );
    await tick();
  };
  const finish = async (name: string) => {
    finishers.get(name)!();
    finishers.delete(name);
    // The freed place is handed on once the attempt's promise settles.
    await tick();
  };
  /** Endpoints whose last attempt here was answered within a second. */
  const quick = (...endpoints: string[]) => {
    for (const endpoint of endpoints) turns.attemptEnded(endpoint, 'quick');
  };
  return { turns, started, attempt, finish, quick, results };
}

const turn = (account: string, endpoint: string, penalized = false): Turn => ({ account, endpoint, penalized });

test('the places: half for endpoints not known to answer quickly, a quarter of them for those that time out', () => {
  assert.deepEqual([slowPlacesOf(8), penaltyPlacesOf(8)], [4, 2]);
  assert.deepEqual([slowPlacesOf(1), penaltyPlacesOf(1)], [1, 1]);
  assert.deepEqual([slowPlacesOf(3), penaltyPlacesOf(3)], [2, 1]);
});

test("an account with many endpoints that never answered holds a few places: another account's attempts start at once", async () => {
  const h = harness(8);
  // As a batch brings them: each endpoint's first, then each one's second...
  for (let i = 0; i < 3; i++) for (let e = 0; e < 50; e++) await h.attempt(`x${e}.${i}`, turn('X', `x${e}`));
  assert.deepEqual(h.started, ['x0.0', 'x1.0', 'x2.0'], 'three of the four places for endpoints not known to answer');
  // Another account's new endpoint takes the fourth; its endpoint known to answer quickly, the other places.
  await h.attempt('y-new', turn('Y', 'y-new'));
  h.quick('y');
  for (let i = 0; i < 5; i++) await h.attempt(`y${i}`, turn('Y', 'y'));
  assert.deepEqual(h.started.slice(3), ['y-new', 'y0', 'y1', 'y2', 'y3']);
  assert.deepEqual(h.turns.usage().byAccount, new Map(Object.entries({ X: 3, Y: 5 })));
  // A freed place goes to the waiting account running the fewest: X's next endpoint, not Y's next attempt.
  await h.finish('x0.0');
  assert.equal(h.started.at(-1), 'x3.0');
  await h.finish('y0');
  assert.equal(h.started.at(-1), 'y4');
});

test('endpoints known to answer quickly: one place is kept for the other accounts, and a freed place goes to the account running the fewest', async () => {
  const h = harness(8);
  h.quick(...Array.from({ length: 50 }, (_, e) => `x${e}`), 'y');
  for (let i = 0; i < 3; i++) for (let e = 0; e < 50; e++) await h.attempt(`x${e}.${i}`, turn('X', `x${e}`));
  assert.equal(h.started.length, 7, 'one place is kept for the others');
  await h.attempt('y', turn('Y', 'y'));
  assert.equal(h.started.at(-1), 'y');
  // X's endpoints take turns: a freed place goes to the one running the fewest, not to the next of X's line.
  await h.finish('x0.0');
  assert.equal(h.started.at(-1), 'x7.0');
  // Y's place, once free, stays kept for another account.
  await h.finish('y');
  assert.equal(h.started.at(-1), 'x7.0');
  assert.equal(h.turns.usage().running, 7);
});

test('among accounts running as many, the one served least recently goes first', async () => {
  const h = harness(4);
  h.quick('a0', 'a1', 'a2', 'a3', 'a4', 'b', 'c1', 'c2');
  for (let i = 0; i < 5; i++) await h.attempt(`a${i}`, turn('A', `a${i}`));
  assert.deepEqual(h.started, ['a0', 'a1', 'a2'], 'one place is kept for the other accounts');
  await h.attempt('b0', turn('B', 'b'));
  await h.attempt('b1', turn('B', 'b'));
  await h.attempt('c0', turn('C', 'c1'));
  await h.attempt('c1', turn('C', 'c2'));
  assert.deepEqual(h.started, ['a0', 'a1', 'a2', 'b0']);
  // A runs 2, B 1, C none: C goes next.
  await h.finish('a0');
  assert.equal(h.started.at(-1), 'c0');
  // All run one: the account served least recently goes first (A, whose last start came before B's and C's).
  await h.finish('a1');
  assert.equal(h.started.at(-1), 'a3');
  await h.finish('a2');
  assert.equal(h.started.at(-1), 'b1');
  await h.finish('b0');
  assert.equal(h.started.at(-1), 'c1');
});

test("an endpoint with a backlog leaves a place to its account's other endpoints, which take the account's turns first", async () => {
  const h = harness(4);
  h.quick('p', 'q', 'r');
  for (let i = 0; i < 4; i++) await h.attempt(`p${i}`, turn('A', 'p'));
  assert.deepEqual(h.started, ['p0', 'p1'], "an endpoint holds at most two of the account's three places here");
  await h.attempt('q0', turn('A', 'q'));
  await h.attempt('q1', turn('A', 'q'));
  assert.deepEqual(h.started, ['p0', 'p1', 'q0'], 'the other endpoint starts at once');
  // Within the account, a freed place goes to the endpoint running the fewest.
  await h.finish('q0');
  assert.equal(h.started.at(-1), 'q1');
  await h.finish('p0');
  assert.equal(h.started.at(-1), 'p2');
  await h.attempt('r0', turn('A', 'r'));
  await h.finish('p1');
  assert.equal(h.started.at(-1), 'r0', 'the endpoint running none goes before the backlog');
});

test("an endpoint not known to answer quickly leaves one of its account's places for such endpoints to another", async () => {
  const h = harness(8);
  for (let i = 0; i < 5; i++) await h.attempt(`s${i}`, turn('A', 's'));
  assert.deepEqual(h.started, ['s0', 's1'], 'two of the three its account may hold');
  // Another endpoint of the account, whose last answer came late, still starts.
  h.turns.attemptEnded('late', 'slow');
  await h.attempt('late0', turn('A', 'late'));
  await h.attempt('late1', turn('A', 'late'));
  assert.deepEqual(h.started.slice(2), ['late0']);
  assert.deepEqual(h.turns.usage().byAccount, new Map(Object.entries({ A: 3 })));
});

test('endpoints whose attempts time out share the two places of the penalty lane', async () => {
  const h = harness(8);
  for (let e = 0; e < 20; e++) await h.attempt(`slow${e}`, turn('X', `slow${e}`, true));
  assert.equal(h.started.length, 2, 'the penalty lane holds two places');
  // The account's endpoints that answer quickly still get places, and so does another account.
  h.quick('x-quick');
  await h.attempt('x-quick', turn('X', 'x-quick'));
  await h.attempt('y', turn('Y', 'y'));
  await h.attempt('y2', turn('Y', 'y2'));
  assert.deepEqual(h.started.slice(2), ['x-quick', 'y', 'y2']);
  assert.deepEqual([h.turns.usage().slowRunning, h.turns.usage().penaltyRunning], [4, 2]);
  await h.finish('y');
  assert.equal(h.started.length, 5, 'a freed place does not go to the penalty lane while it is full');
  await h.finish('slow0');
  assert.equal(h.started.at(-1), 'slow2');
});

test('an endpoint whose attempt times out here goes to the penalty lane at once, its waiting attempts too, until one ends otherwise', async () => {
  const h = harness(8);
  // They answered quickly before: claimed as usual.
  h.quick(...Array.from({ length: 10 }, (_, e) => `x${e}`));
  for (let i = 0; i < 2; i++) for (let e = 0; e < 10; e++) await h.attempt(`x${e}.${i}`, turn('X', `x${e}`));
  assert.equal(h.started.length, 7);
  for (let e = 0; e < 10; e++) h.turns.attemptEnded(`x${e}`, 'timed out');
  // Their places, as they free, go to the penalty lane's two at most.
  await h.finish('x0.0');
  await h.finish('x1.0');
  await h.finish('x2.0');
  assert.equal(h.started.length, 9, 'two places of the penalty lane');
  assert.deepEqual([h.turns.usage().running, h.turns.usage().penaltyRunning], [6, 2]);
  // A quick answer takes the endpoint out: its waiting attempts start on ordinary places, up to the account's seven.
  h.turns.attemptEnded('x9', 'quick');
  await h.finish('x3.0');
  assert.deepEqual(h.started.slice(9), ['x9.0', 'x9.1']);
  assert.deepEqual([h.turns.usage().running, h.turns.usage().penaltyRunning], [7, 2]);
});

test('an attempt given up before its turn never runs and leaves the line', async () => {
  const h = harness(2);
  h.quick('a', 'b');
  const giveUp = new AbortController();
  await h.attempt('a0', turn('A', 'a'));
  await h.attempt('b0', turn('B', 'b'), giveUp.signal);
  await h.attempt('b1', turn('B', 'b'), giveUp.signal);
  assert.deepEqual(h.started, ['a0', 'b0']);
  assert.deepEqual(h.turns.waitingEndpoints(), ['b']);
  giveUp.abort();
  assert.deepEqual(h.turns.waitingEndpoints(), []);
  await h.finish('a0');
  await h.finish('b0');
  assert.deepEqual(h.started, ['a0', 'b0']);
  assert.deepEqual(await Promise.all(h.results), ['a0', 'b0', undefined]);
  assert.equal(h.turns.usage().running, 0);
});

test('a failed attempt frees its place', async () => {
  const turns = createDeliveryTurns({ limit: 1, slowPlaces: 1, penaltyPlaces: 1 });
  await assert.rejects(turns.run(turn('A', 'a'), () => Promise.reject(new Error('boom'))));
  assert.equal(await turns.run(turn('A', 'a'), async () => 'next'), 'next');
});
