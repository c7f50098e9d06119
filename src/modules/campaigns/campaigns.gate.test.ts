/** The pre-dial gate, branch by branch: which contact may be dialled now, and when a denied one is tried again. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gate, zonesOf, type GateFacts, type GateRules } from './campaigns.gate.js';
import { DEFAULT_SCHEDULE } from './campaigns.window.js';

// A Monday, 10:00 in New York, 07:00 in Los Angeles.
const NOW = new Date('2026-03-02T15:00:00Z');
const at = (iso: string) => new Date(iso);
const later = (ms: number) => new Date(NOW.getTime() + ms);
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

const NEW_YORK = '+12125550100';
const LOS_ANGELES = '+14155550100';
/** Area code 605: Mountain and Central time. */
const SOUTH_DAKOTA = '+16055550100';
/** A +1 number whose zone is not known. */
const NO_ZONE = '+15555550100';

const RULES: GateRules = {
  schedule: DEFAULT_SCHEDULE,
  maxAttemptsPerContact: 3,
  config: { dailyAttemptLimit: 3, abandonedRedialHours: 72 },
};

function facts(changes: Partial<GateFacts> = {}, contact: Partial<NonNullable<GateFacts['contact']>> = {}): GateFacts {
  return {
    contact: { id: 'contact-1', phone: NEW_YORK, timezone: null, dnc: false, ...contact },
    dncListed: false,
    inCall: false,
    dialsLast24h: 0,
    recentlyAbandoned: false,
    attemptNumber: 1,
    ...changes,
  };
}

const allow = { allow: true };
const deny = (reason: string, retryAt: Date | null) => ({ allow: false, reason, retryAt });

const CASES: Array<[string, GateFacts, unknown, { rules?: GateRules; now?: Date }?]> = [
  ['a contact inside its window, with nothing against it, is dialled', facts(), allow],
  ['a contact deleted since it was queued is finished', facts({ contact: null }), deny('contact_deleted', null)],
  ['a contact flagged do-not-call is finished', facts({}, { dnc: true }), deny('dnc_listed', null)],
  ["a number on the account's do-not-call list is finished", facts({ dncListed: true }), deny('dnc_listed', null)],
  [
    'do-not-call comes before every other reason',
    facts({ dncListed: true, inCall: true, attemptNumber: 9 }, { phone: LOS_ANGELES }),
    deny('dnc_listed', null),
  ],
  ['the last attempt allowed is dialled', facts({ attemptNumber: 3 }), allow],
  ['an attempt past the limit finishes the contact', facts({ attemptNumber: 4 }), deny('max_attempts', null)],
  [
    'the attempt limit comes before the window',
    facts({ attemptNumber: 4 }, { phone: LOS_ANGELES }),
    deny('max_attempts', null),
  ],
  [
    'a number of no known zone, without a time zone of its own, is never called',
    facts({}, { phone: NO_ZONE }),
    deny('timezone_unknown', null),
  ],
  [
    'a contact with its own time zone is called by it',
    facts({}, { phone: NO_ZONE, timezone: 'America/New_York' }),
    allow,
  ],
  [
    "before 09:00 in the contact's zone: retried when the window opens there",
    facts({}, { phone: LOS_ANGELES }),
    deny('outside_window', at('2026-03-02T17:00:00Z')),
  ],
  [
    "the contact's own time zone wins over its number's",
    facts({}, { phone: NEW_YORK, timezone: 'America/Los_Angeles' }),
    deny('outside_window', at('2026-03-02T17:00:00Z')),
  ],
  [
    'a number spanning two zones is called only when the window is open in both',
    facts({}, { phone: SOUTH_DAKOTA }),
    deny('outside_window', at('2026-03-02T16:00:00Z')),
  ],
  [
    'not on a day of the schedule: retried on the next one',
    facts(),
    deny('outside_window', at('2026-03-02T14:00:00Z')),
    { now: at('2026-03-01T15:00:00Z') },
  ],
  [
    'the schedule is narrowed to 08:00 local',
    facts(),
    deny('outside_window', at('2026-03-02T13:00:00Z')),
    { now: at('2026-03-02T12:30:00Z'), rules: { ...RULES, schedule: { days: ['mon'], start: '06:00', end: '23:00' } } },
  ],
  [
    'the schedule is narrowed to 21:00 local',
    facts(),
    deny('outside_window', at('2026-03-03T13:00:00Z')),
    {
      now: at('2026-03-03T02:00:00Z'),
      rules: { ...RULES, schedule: { days: ['mon', 'tue'], start: '06:00', end: '23:00' } },
    },
  ],
  [
    'a schedule with no window in the next 8 days: retried a day later',
    facts(),
    deny('outside_window', later(24 * HOUR)),
    { rules: { ...RULES, schedule: { days: [], start: '09:00', end: '20:00' } } },
  ],
  [
    'the window comes before a call under way',
    facts({ inCall: true }, { phone: LOS_ANGELES }),
    deny('outside_window', at('2026-03-02T17:00:00Z')),
  ],
  [
    'a contact already in a call is retried in 5 minutes',
    facts({ inCall: true }),
    deny('contact_in_call', later(5 * MINUTE)),
  ],
  [
    'a call under way comes before a recent abandonment',
    facts({ inCall: true, recentlyAbandoned: true }),
    deny('contact_in_call', later(5 * MINUTE)),
  ],
  [
    'a contact whose call was abandoned waits out the no-redial period',
    facts({ recentlyAbandoned: true }),
    deny('recently_abandoned', later(72 * HOUR)),
  ],
  [
    'a recent abandonment comes before the daily limit',
    facts({ recentlyAbandoned: true, dialsLast24h: 5 }),
    deny('recently_abandoned', later(72 * HOUR)),
  ],
  ['dials of the last 24 hours under the daily limit', facts({ dialsLast24h: 2 }), allow],
  [
    'the daily limit reached: retried in 6 hours',
    facts({ dialsLast24h: 3 }),
    deny('daily_attempt_limit', later(6 * HOUR)),
  ],
];

for (const [name, given, expected, options] of CASES) {
  test(name, () => {
    assert.deepEqual(gate(given, options?.rules ?? RULES, options?.now ?? NOW), expected);
  });
}

test("a contact's zones: its own time zone, else every zone of its number", () => {
  assert.deepEqual(zonesOf({ phone: NEW_YORK, timezone: 'Europe/London' }), ['Europe/London']);
  assert.deepEqual(zonesOf({ phone: NEW_YORK, timezone: null }), ['America/New_York']);
  assert.deepEqual(zonesOf({ phone: SOUTH_DAKOTA, timezone: null }), ['America/Denver', 'America/North_Dakota/Center']);
  assert.deepEqual(zonesOf({ phone: NO_ZONE, timezone: null }), []);
});
