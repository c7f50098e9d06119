import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  numbersAsDigits,
  readCallbackTime,
  readDate,
  readEmail,
  readNumber,
  readYesNo,
} from './calls.analysis.rules.js';
import { instantOf, wallClock } from '../../lib/wall-clock.js';
import { calleeTimeZone } from './calls.analysis.js';

// Monday 2 March 2026, 10:00 in New York (EST, UTC-5; summer time starts on Sunday 8 March).
const NOW = new Date('2026-03-02T15:00:00.000Z');
const NEW_YORK = 'America/New_York';

const at = (said: string, zone = NEW_YORK, now = NOW) => readCallbackTime(said, now, zone)?.at.toISOString() ?? null;

test('a callback phrase is a moment in the callee’s zone, counted from the end of the call', () => {
  const cases: Array<[string, string | null]> = [
    ["Sorry, I'm in a meeting right now. Can you call me back tomorrow?", '2026-03-03T15:00:00.000Z'],
    ['Call me after 3.', '2026-03-02T20:00:00.000Z'],
    ['after three', '2026-03-02T20:00:00.000Z'],
    ['Try me after 9', '2026-03-03T14:00:00.000Z'],
    ['next Tuesday morning', '2026-03-03T14:00:00.000Z'],
    ['Tomorrow after 3 works.', '2026-03-03T20:00:00.000Z'],
    ['Can you call back in two hours?', '2026-03-02T17:00:00.000Z'],
    ['in 30 minutes', '2026-03-02T15:30:00.000Z'],
    ['in half an hour', '2026-03-02T15:30:00.000Z'],
    ['Call me next week.', '2026-03-09T14:00:00.000Z'],
    ['Thursday at 4:30 pm', '2026-03-05T21:30:00.000Z'],
    ['Thursday at four thirty p.m.', '2026-03-05T21:30:00.000Z'],
    ['at half past three', '2026-03-02T20:30:00.000Z'],
    ['this evening', '2026-03-02T23:00:00.000Z'],
    ['Call me tonight', '2026-03-03T00:00:00.000Z'],
    ['the day after tomorrow at noon', '2026-03-04T17:00:00.000Z'],
    ['Friday at 10 am', '2026-03-06T15:00:00.000Z'],
    ['Wednesday next week', '2026-03-11T14:00:00.000Z'],
    ['on the 15th', '2026-03-15T14:00:00.000Z'],
    ['March 20th at 2', '2026-03-20T18:00:00.000Z'],
    ['maybe at the weekend', '2026-03-07T15:00:00.000Z'],
    ['before 5 today', '2026-03-02T21:00:00.000Z'],
    ['later today', '2026-03-02T17:00:00.000Z'],
    ["No thanks, I'm not interested.", null],
    ['It costs 49 dollars a month.', null],
    ['We have 3 people on the team.', null],
    ['Call me back later.', null],
  ];
  for (const [said, expected] of cases) assert.equal(at(said), expected, said);
});

test('the same words name different instants in different zones, across a change to summer time', () => {
  // 16:00 in Berlin: tomorrow after 3 is 15:00 CET.
  assert.equal(at('tomorrow after 3', 'Europe/Berlin'), '2026-03-03T14:00:00.000Z');
  // 20:30 in Kolkata: 3:30 pm has passed today, so it is tomorrow's.
  assert.equal(at('at 3:30 pm', 'Asia/Kolkata'), '2026-03-03T10:00:00.000Z');
  // Next Monday in New York is after the switch to EDT (UTC-4).
  assert.equal(at('next Monday at 10'), '2026-03-09T14:00:00.000Z');
  assert.equal(readCallbackTime('tomorrow after 3', NOW, NEW_YORK)?.words, 'tomorrow after 3');
});

test('wall clock and instant convert both ways, a skipped hour read as the hour after', () => {
  assert.deepEqual(wallClock(NEW_YORK, NOW), {
    year: 2026,
    month: 3,
    day: 2,
    hour: 10,
    minute: 0,
    second: 0,
    weekday: 1,
  });
  assert.equal(
    instantOf(NEW_YORK, { year: 2026, month: 3, day: 2, hour: 10, minute: 0 }).toISOString(),
    NOW.toISOString(),
  );
  assert.equal(
    instantOf(NEW_YORK, { year: 2026, month: 7, day: 1, hour: 9, minute: 30 }).toISOString(),
    '2026-07-01T13:30:00.000Z',
  );
  assert.equal(
    instantOf(NEW_YORK, { year: 2026, month: 3, day: 8, hour: 2, minute: 30 }).toISOString(),
    '2026-03-08T07:30:00.000Z',
  );
});

test('spelled-out numbers become digits; a time stays two numbers', () => {
  assert.equal(numbersAsDigits('three thirty'), '3 30');
  assert.equal(numbersAsDigits('twenty-five dollars'), '25 dollars');
  assert.equal(numbersAsDigits('a hundred people'), '100 people');
  assert.equal(numbersAsDigits('two hundred and fifty'), '250');
  assert.equal(numbersAsDigits('five thousand a month'), '5000 a month');
  assert.equal(numbersAsDigits('I have a minute and a half'), 'I have a minute and a half');
});

test('an amount is read with its currency or magnitude; times of day are not amounts', () => {
  const cases: Array<[string, number | null]> = [
    ['About 5,000 dollars a month.', 5000],
    ['five thousand', 5000],
    ['maybe $2.5k', 2500],
    ['fifty k, give or take', 50_000],
    ['We could spend two hundred and fifty dollars.', 250],
    ['Call me at 3. The budget is 40 dollars.', 40],
    ["It's around 3 pm.", null],
    ['No idea.', null],
  ];
  for (const [said, expected] of cases) assert.equal(readNumber(said), expected, said);
});

test('an email address is read as said, spelled or read back', () => {
  assert.equal(readEmail("It's ada dot lovelace at example dot com"), 'ada.lovelace@example.com');
  assert.equal(readEmail('a-d-a at example.com'), 'ada@example.com');
  assert.equal(readEmail('My email is Ada@Example.com.'), 'ada@example.com');
  assert.equal(readEmail("So that's j o h n at gmail dot com, right?"), 'john@gmail.com');
  assert.equal(readEmail('I would rather not say.'), null);
});

test('a date is a calendar day in the callee’s zone', () => {
  assert.equal(readDate('next Tuesday works', NOW, NEW_YORK), '2026-03-03');
  assert.equal(readDate('How about March 5th?', NOW, NEW_YORK), '2026-03-05');
  assert.equal(readDate('the 10th', NOW, NEW_YORK), '2026-03-10');
  assert.equal(readDate('January 3', NOW, NEW_YORK), '2027-01-03');
  assert.equal(readDate('tomorrow', new Date('2026-03-03T04:30:00.000Z'), NEW_YORK), '2026-03-03');
  assert.equal(readDate('sometime', NOW, NEW_YORK), null);
});

test('yes and no', () => {
  assert.equal(readYesNo("Yes, that's right."), true);
  assert.equal(readYesNo("Okay, yes, I'd like that."), true);
  assert.equal(readYesNo("No, we don't."), false);
  assert.equal(readYesNo('Hmm.'), null);
});

test('the callee’s zone: the contact’s, else their number’s, else the account’s, else UTC', () => {
  const zone = (contactTimeZone: string | null, farEndNumber: string | null, accountTimeZone: string | null) =>
    calleeTimeZone({ contactTimeZone, farEndNumber, accountTimeZone });
  assert.equal(zone('Europe/Berlin', '+14155550100', 'Asia/Tokyo'), 'Europe/Berlin');
  assert.equal(zone(null, '+14155550100', 'Asia/Tokyo'), 'America/Los_Angeles');
  assert.equal(zone(null, '+33142685300', null), 'Europe/Paris');
  assert.equal(zone('Not/AZone', null, 'Asia/Tokyo'), 'Asia/Tokyo');
  assert.equal(zone(null, null, null), 'UTC');
});
