/** A number's reputation: the score, and which ended calls count toward it. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { endedCallOf, scoreReputation, type CallEndFacts } from './numbers.reputation.js';

test('the score follows the README formula', () => {
  const cases: Array<[[number, number, number], number, string]> = [
    // [[calls, answered, short], score, label]
    [[0, 0, 0], 100, 'clean'],
    [[10, 10, 0], 100, 'clean'],
    // A few unanswered calls say little: the penalties grow to full weight at 20 calls.
    [[4, 0, 0], 90, 'clean'],
    [[20, 0, 0], 50, 'at_risk'],
    [[20, 12, 0], 100, 'clean'],
    [[20, 20, 20], 65, 'at_risk'],
    [[30, 6, 4], 43, 'at_risk'],
    [[90, 0, 0], 38, 'spam_likely'],
    [[500, 0, 0], 20, 'spam_likely'],
    [[500, 100, 100], 2, 'spam_likely'],
  ];
  for (const [[calls, answered, short], score, label] of cases)
    assert.deepEqual(scoreReputation({ calls, answered, short }), { score, label }, `${calls}/${answered}/${short}`);
});

test('an ended outbound call counts for its caller number: answered, and short when over within 10 s', () => {
  const endedAt = new Date('2026-03-02T15:00:00Z');
  const end = (data: Partial<CallEndFacts>) =>
    endedCallOf({
      subject: { id: 'call-1' },
      occurredAt: endedAt,
      data: { direction: 'outbound', durationSeconds: 42, fromNumber: '+14155550100', answeredAt: null, ...data },
    });
  const counted = (answered: boolean, short: boolean) => ({
    callId: 'call-1',
    fromNumber: '+14155550100',
    endedAt,
    answered,
    short,
  });
  const answeredAt = '2026-03-02T14:59:00.000Z';
  const cases: Array<[string, ReturnType<typeof end>, unknown]> = [
    ['not answered', end({ durationSeconds: null }), counted(false, false)],
    ['answered', end({ answeredAt }), counted(true, false)],
    ['answered, over at 10 s', end({ answeredAt, durationSeconds: 10 }), counted(true, false)],
    ['answered, over within 10 s', end({ answeredAt, durationSeconds: 9 }), counted(true, true)],
    ['answered, no duration', end({ answeredAt, durationSeconds: null }), counted(true, false)],
    ['an inbound call', end({ direction: 'inbound' }), null],
    ['placed from no number', end({ fromNumber: null }), null],
    ['an event without the caller number', end({ fromNumber: undefined }), null],
  ];
  for (const [name, given, expected] of cases) assert.deepEqual(given, expected, name);
});
