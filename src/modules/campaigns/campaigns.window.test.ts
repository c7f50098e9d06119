/** Calling windows in the callee's local time. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_SCHEDULE, insideWindow, localTime, nextWindowStart, type Schedule } from './campaigns.window.js';

const at = (iso: string) => new Date(iso);
const NEW_YORK = ['America/New_York'];
const EVERY_DAY: Schedule = { days: ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'], start: '09:00', end: '20:00' };

test('local time is the weekday and minute of the day in the zone', () => {
  assert.deepEqual(localTime('America/New_York', at('2026-03-02T15:00:00Z')), { day: 'mon', minutes: 10 * 60 });
  assert.deepEqual(localTime('America/Los_Angeles', at('2026-03-02T07:59:00Z')), { day: 'sun', minutes: 23 * 60 + 59 });
  // The clocks go forward on 8 March 2026 in New York: 10:00 UTC is 06:00 local, not 05:00.
  assert.deepEqual(localTime('America/New_York', at('2026-03-08T10:00:00Z')), { day: 'sun', minutes: 6 * 60 });
});

test('inside the window: from its start, until (not at) its end, on its days, in every zone', () => {
  const cases: Array<[string, readonly string[], Schedule, boolean]> = [
    ['2026-03-02T14:00:00Z', NEW_YORK, DEFAULT_SCHEDULE, true], // 09:00 Monday
    ['2026-03-02T13:59:00Z', NEW_YORK, DEFAULT_SCHEDULE, false], // 08:59
    ['2026-03-03T00:59:00Z', NEW_YORK, DEFAULT_SCHEDULE, true], // 19:59
    ['2026-03-03T01:00:00Z', NEW_YORK, DEFAULT_SCHEDULE, false], // 20:00
    ['2026-03-01T15:00:00Z', NEW_YORK, DEFAULT_SCHEDULE, false], // Sunday
    ['2026-03-01T15:00:00Z', NEW_YORK, EVERY_DAY, true],
    // Narrowed to 08:00-21:00 whatever the schedule says.
    ['2026-03-02T12:59:00Z', NEW_YORK, { ...EVERY_DAY, start: '06:00', end: '23:00' }, false],
    ['2026-03-02T13:00:00Z', NEW_YORK, { ...EVERY_DAY, start: '06:00', end: '23:00' }, true],
    ['2026-03-03T01:59:00Z', NEW_YORK, { ...EVERY_DAY, start: '06:00', end: '23:00' }, true],
    ['2026-03-03T02:00:00Z', NEW_YORK, { ...EVERY_DAY, start: '06:00', end: '23:00' }, false],
    // 10:00 in New York, 07:00 in Los Angeles: not inside in both.
    ['2026-03-02T15:00:00Z', ['America/New_York', 'America/Los_Angeles'], DEFAULT_SCHEDULE, false],
    ['2026-03-02T17:00:00Z', ['America/New_York', 'America/Los_Angeles'], DEFAULT_SCHEDULE, true],
    ['2026-03-02T15:00:00Z', [], EVERY_DAY, false],
  ];
  for (const [when, zones, schedule, inside] of cases)
    assert.equal(insideWindow(zones, schedule, at(when)), inside, `${when} in ${zones.join(', ')}`);
});

test('the next window start: now when inside, else the first 5-minute mark inside', () => {
  const cases: Array<[string, readonly string[], Schedule, string | null]> = [
    ['2026-03-02T15:03:17Z', NEW_YORK, DEFAULT_SCHEDULE, '2026-03-02T15:03:17Z'],
    ['2026-03-02T13:57:30Z', NEW_YORK, DEFAULT_SCHEDULE, '2026-03-02T14:00:00Z'],
    // Monday 20:00: Tuesday 09:00.
    ['2026-03-03T01:00:00Z', NEW_YORK, DEFAULT_SCHEDULE, '2026-03-03T14:00:00Z'],
    // Saturday evening before the clocks go forward: Sunday is not a calling day, Monday 09:00 is EDT.
    ['2026-03-08T01:05:00Z', NEW_YORK, DEFAULT_SCHEDULE, '2026-03-09T13:00:00Z'],
    ['2026-03-02T15:00:00Z', ['America/New_York', 'America/Los_Angeles'], DEFAULT_SCHEDULE, '2026-03-02T17:00:00Z'],
    ['2026-03-02T15:00:00Z', NEW_YORK, { ...DEFAULT_SCHEDULE, days: [] }, null],
    // 09:00-10:00 in London is evening in Auckland: the two zones never share the window.
    ['2026-03-02T15:00:00Z', ['Europe/London', 'Pacific/Auckland'], { ...EVERY_DAY, end: '10:00' }, null],
    ['2026-03-02T15:00:00Z', [], EVERY_DAY, null],
  ];
  for (const [from, zones, schedule, next] of cases)
    assert.deepEqual(nextWindowStart(zones, schedule, at(from)), next && at(next), `${from} in ${zones.join(', ')}`);
});
