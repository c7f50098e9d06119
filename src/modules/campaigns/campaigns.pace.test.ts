/** The abandon-rate rules: the rate, the compliance pause and the pace governor. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { abandonRate, complianceBreach, governedConcurrency, governedPace, windows } from './campaigns.pace.js';

const figure = (abandoned: number, liveAnswered: number) => ({ abandoned, liveAnswered });

test('the abandon rate is abandoned calls over live answers, and 0 without live answers', () => {
  assert.equal(abandonRate(figure(0, 0)), 0);
  assert.equal(abandonRate(figure(3, 100)), 0.03);
  assert.equal(abandonRate(figure(3, 3)), 1);
});

test('the windows of the abandon rate end now: 30 days, since midnight UTC, the last hour', () => {
  assert.deepEqual(windows(new Date('2026-03-02T15:30:00Z')), {
    last30Days: new Date('2026-01-31T15:30:00Z'),
    today: new Date('2026-03-02T00:00:00Z'),
    lastHour: new Date('2026-03-02T14:30:00Z'),
  });
});

test('the governed concurrency is the pace, whole, between 1 and the maximum', () => {
  const cases: Array<[number, number, number]> = [
    // [max_concurrency, pace_limit, concurrency]
    [10, 2, 2],
    [10, 2.9, 2],
    [10, 0, 1],
    [4, 8, 4],
  ];
  for (const [max, pace, expected] of cases)
    assert.equal(governedConcurrency({ max_concurrency: max, pace_limit: pace }), expected, `${pace} of ${max}`);
});

test('the governor: an abandoned call halves the pace, a high rate drops it to one, a budget raises it by one', () => {
  const cases: Array<[string, { max: number; pace: number }, boolean, [number, number], number, number]> = [
    // [name, settings, abandoned, last 30 days [abandoned, live answered], under way, pace]
    ['an abandoned call halves the pace', { max: 10, pace: 8 }, true, [1, 500], 8, 4],
    ['halving stops at one', { max: 10, pace: 1 }, true, [1, 500], 1, 1],
    ['an odd level halves down', { max: 10, pace: 3 }, true, [1, 500], 3, 1],
    ['at a 30-day rate of 3%, one call at a time', { max: 10, pace: 6 }, false, [3, 100], 6, 1],
    ['at the maximum it stays there', { max: 10, pace: 10 }, false, [0, 1000], 10, 10],
    ['without live answers there is no budget', { max: 10, pace: 2 }, false, [0, 0], 2, 2],
    ['98 live answers without an abandoned call: 2 -> 3', { max: 8, pace: 2 }, false, [0, 98], 2, 3],
    ['97: three under way all abandoned would reach 3%', { max: 8, pace: 2 }, false, [0, 97], 2, 2],
    ['more under way than the raise counts as the worst case', { max: 8, pace: 2 }, false, [0, 98], 5, 2],
    ['one more abandoned call would pass 2%', { max: 8, pace: 2 }, false, [1, 60], 2, 2],
    ['with the budget to spare, one abandonment in the past', { max: 8, pace: 2 }, false, [1, 150], 2, 3],
  ];
  for (const [name, { max, pace }, abandoned, [a, live], underWay, expected] of cases) {
    const settings = { max_concurrency: max, pace_limit: pace };
    assert.equal(governedPace(settings, abandoned, figure(a, live), underWay), expected, name);
  }
});

test('a 30-day rate above 3.5% pauses the campaign, once the window has enough live answers', () => {
  const breach = (abandoned: number, liveAnswered: number, abandonRate: number) => ({
    abandonRate,
    threshold: 0.035,
    window: '30d',
    abandoned,
    liveAnswered,
  });
  const cases: Array<[[number, number], number, unknown]> = [
    // [[abandoned, live answered], minimum live answers, breach]
    [[0, 0], 20, null],
    [[5, 19], 20, null],
    [[5, 20], 20, breach(5, 20, 0.25)],
    [[3, 3], 3, breach(3, 3, 1)],
    [[7, 200], 20, null], // exactly 3.5%
    [[8, 200], 20, breach(8, 200, 0.04)],
    [[1, 3], 1, breach(1, 3, 0.333333)],
  ];
  for (const [[abandoned, live], minimum, expected] of cases)
    assert.deepEqual(complianceBreach(figure(abandoned, live), minimum), expected, `${abandoned} of ${live}`);
});
