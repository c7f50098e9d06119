/** What an ended campaign call counts as, and when its contact is called again. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { classify, retryAt, type EndedCallFacts, type RetrySettings } from './campaigns.outcomes.js';
import { DEFAULT_SCHEDULE } from './campaigns.window.js';

const ANSWERED = new Date('2026-03-02T15:00:10Z');

test('an ended call is counted by how it ended', () => {
  const call = (changes: Partial<EndedCallFacts>): EndedCallFacts => ({
    status: 'completed',
    endReason: 'completed',
    answeredAt: ANSWERED,
    agentLatencyMs: 400,
    ...changes,
  });
  const counted = (kind: string, connected: boolean, liveAnswered: boolean, abandoned: boolean) => ({
    kind,
    connected,
    liveAnswered,
    abandoned,
  });
  const cases: Array<[string, EndedCallFacts, unknown]> = [
    ['a person answered and the agent spoke in time', call({}), counted('answered', true, true, false)],
    ['the agent spoke 2 s after the greeting', call({ agentLatencyMs: 2_000 }), counted('answered', true, true, false)],
    ['the agent spoke later than 2 s', call({ agentLatencyMs: 2_001 }), counted('abandoned', true, true, true)],
    ['the agent never spoke', call({ agentLatencyMs: null }), counted('answered', true, true, false)],
    [
      'an answering machine, however late the agent',
      call({ endReason: 'voicemail', agentLatencyMs: 9_000 }),
      counted('voicemail', true, false, false),
    ],
    ['busy', call({ status: 'busy', endReason: null, answeredAt: null }), counted('busy', false, false, false)],
    [
      'nobody answered',
      call({ status: 'no_answer', endReason: null, answeredAt: null }),
      counted('no_answer', false, false, false),
    ],
    [
      'failed before an answer',
      call({ status: 'failed', endReason: 'error', answeredAt: null }),
      counted('failed', false, false, false),
    ],
    [
      'failed after a person answered: a live answer',
      call({ status: 'failed', endReason: 'error' }),
      counted('answered', true, true, false),
    ],
  ];
  for (const [name, given, expected] of cases) assert.deepEqual(classify(given), expected, name);
});

test('a contact is retried after the rule of its outcome, inside its window, while attempts last', () => {
  const campaign: RetrySettings = {
    retry_rules: {
      busy: { attempts: 2, spacingMinutes: 30 },
      no_answer: { attempts: 1, spacingMinutes: 60 },
      voicemail: { attempts: 0, spacingMinutes: 60 },
      failed: { attempts: 5, spacingMinutes: 10 },
    },
    max_attempts_per_contact: 3,
    schedule: DEFAULT_SCHEDULE,
  };
  const NEW_YORK = ['America/New_York'];
  const now = new Date('2026-03-02T15:00:00Z'); // Monday 10:00 in New York
  const evening = new Date('2026-03-03T00:50:00Z'); // Monday 19:50
  const cases: Array<[string, Parameters<typeof retryAt>, string | null]> = [
    ['answered: finished', ['answered', 1, campaign, NEW_YORK, now], null],
    ['abandoned: finished', ['abandoned', 1, campaign, NEW_YORK, now], null],
    ['busy, first attempt: after 30 minutes', ['busy', 1, campaign, NEW_YORK, now], '2026-03-02T15:30:00Z'],
    ['busy, second attempt: one retry left', ['busy', 2, campaign, NEW_YORK, now], '2026-03-02T15:30:00Z'],
    ['busy, third attempt: its retries are used', ['busy', 3, campaign, NEW_YORK, now], null],
    ['no answer, first attempt', ['no_answer', 1, campaign, NEW_YORK, now], '2026-03-02T16:00:00Z'],
    ['no answer, second attempt: its one retry is used', ['no_answer', 2, campaign, NEW_YORK, now], null],
    ['voicemail without retries', ['voicemail', 1, campaign, NEW_YORK, now], null],
    ["failed: retries left, but the campaign's attempts are used", ['failed', 3, campaign, NEW_YORK, now], null],
    ['the contact is gone', ['busy', 1, campaign, null, now], null],
    ['spacing past the window: when it opens next', ['busy', 1, campaign, NEW_YORK, evening], '2026-03-03T14:00:00Z'],
    ['a contact of no known zone: after the spacing', ['busy', 1, campaign, [], now], '2026-03-02T15:30:00Z'],
  ];
  for (const [name, args, expected] of cases) assert.deepEqual(retryAt(...args), expected && new Date(expected), name);
});
