/**
 * The rules of delivery and the webhook bodies, without an app or a database: where an attempt leaves its delivery,
 * how an endpoint's failure streak grows and disables it, and the body each event type gets (checked against the
 * schema the API document publishes for it).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import type { DomainEvent, DomainEventData } from '../../events/domain-events.js';
import { payloadOf } from './webhooks.payloads.js';
import {
  AUTO_DISABLE_AFTER,
  answeredQuickly,
  attemptSucceeded,
  deliveryStep,
  disabledReasonOf,
  failureStreak,
  keepsSending,
  lastTimedOut,
} from './webhooks.rules.js';
import { EVENT_PAYLOADS } from './webhooks.schemas.js';
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from './webhooks.tables.js';

const at = (seconds: number) => new Date(Date.UTC(2030, 0, 1, 12, 0, seconds));

test('an attempt succeeds on a 2xx answer without an error, and fails on anything else', () => {
  for (const [statusCode, error, succeeded] of [
    [200, null, true],
    [204, null, true],
    [299, null, true],
    [199, null, false],
    [302, 'redirect to https://elsewhere not followed', false],
    [410, 'HTTP 410', false],
    [500, 'HTTP 500', false],
    [null, 'timed out after 10 s', false],
    [null, 'connection refused', false],
    [200, 'cut off', false],
  ] as const) {
    assert.equal(attemptSucceeded({ statusCode, error }), succeeded, `${statusCode} ${error}`);
  }
});

test('a failed attempt retries after 5, 30 and 120 s, then the delivery is abandoned; a success delivers it', () => {
  const failed = { statusCode: 500, error: 'HTTP 500' };
  const finishedAt = at(0);
  for (const [roundAttempts, expected] of [
    [1, { state: 'pending', waitSeconds: 5 }],
    [2, { state: 'pending', waitSeconds: 30 }],
    [3, { state: 'pending', waitSeconds: 120 }],
    [4, { state: 'abandoned' }],
    [9, { state: 'abandoned' }],
  ] as const) {
    const step = deliveryStep(failed, roundAttempts, finishedAt);
    assert.equal(step.state, expected.state, `attempt ${roundAttempts}`);
    if ('waitSeconds' in expected) {
      assert.deepEqual(step, {
        state: 'pending',
        waitSeconds: expected.waitSeconds,
        nextAttemptAt: new Date(finishedAt.getTime() + expected.waitSeconds * 1000),
      });
    } else {
      assert.equal(step.nextAttemptAt, null);
    }
  }
  for (const roundAttempts of [1, 4, 9]) {
    assert.deepEqual(deliveryStep({ statusCode: 200, error: null }, roundAttempts, finishedAt), {
      state: 'succeeded',
      nextAttemptAt: null,
    });
  }
});

test('the failure streak: a success ends it, the tenth failure in a row disables an enabled endpoint', () => {
  const ok = (second: number) => ({ statusCode: 200, error: null, finishedAt: at(second) });
  const failed = (second: number) => ({ statusCode: 503, error: 'HTTP 503', finishedAt: at(second) });
  const failures = (count: number, from = 0) => Array.from({ length: count }, (_, i) => failed(from + i));
  for (const { name, start, enabled, attempts, streak, disabledAt } of [
    { name: 'no attempts', start: 4, enabled: true, attempts: [], streak: 4, disabledAt: null },
    { name: 'a success resets', start: 7, enabled: true, attempts: [failed(0), ok(1)], streak: 0, disabledAt: null },
    { name: 'nine in a row', start: 0, enabled: true, attempts: failures(9), streak: 9, disabledAt: null },
    { name: 'the tenth disables', start: 9, enabled: true, attempts: [failed(3)], streak: 10, disabledAt: 3 },
    { name: 'counted on past the tenth', start: 0, enabled: true, attempts: failures(12), streak: 12, disabledAt: 9 },
    {
      name: 'a success in between',
      start: 5,
      enabled: true,
      attempts: [...failures(4), ok(4)],
      streak: 0,
      disabledAt: null,
    },
    { name: 'already disabled', start: 10, enabled: false, attempts: failures(3), streak: 13, disabledAt: null },
    // Taken in the order they ended, not the order given: the success ended last.
    {
      name: 'in the order they ended',
      start: 8,
      enabled: true,
      attempts: [ok(9), failed(1), failed(2)],
      streak: 0,
      disabledAt: 2,
    },
  ]) {
    const counted = failureStreak(start, enabled, attempts);
    assert.equal(counted.streak, streak, name);
    assert.equal(
      counted.disabledBy?.finishedAt.getTime() ?? null,
      disabledAt === null ? null : at(disabledAt).getTime(),
      name,
    );
  }
});

test('the reason an endpoint was disabled names the last failure and when', () => {
  assert.equal(
    disabledReasonOf({ statusCode: 503, error: null, finishedAt: at(7) }),
    `Disabled after ${AUTO_DISABLE_AFTER} consecutive failed deliveries; the last: HTTP 503 at 2030-01-01T12:00:07.000Z`,
  );
  assert.equal(
    disabledReasonOf({ statusCode: null, error: 'connection refused', finishedAt: at(0) }),
    `Disabled after ${AUTO_DISABLE_AFTER} consecutive failed deliveries; the last: connection refused at 2030-01-01T12:00:00.000Z`,
  );
});

test('a batch stops sending to an endpoint after ten failures in a row; a second makes an endpoint slow', () => {
  assert.deepEqual([0, 1, 9, 10, 11].map(keepsSending), [true, true, true, false, false]);
  assert.deepEqual([null, 0, 999, 1000, 10_000].map(answeredQuickly), [true, true, true, false, false]);
});

const CALL = '00000000-0000-4000-8000-0000000ca111';
const AGENT = '00000000-0000-4000-8000-00000000a9e7';
const CAMPAIGN = '00000000-0000-4000-8000-00000000c0de';
const ended: DomainEventData<'call.completed'> = {
  callId: CALL,
  agentId: AGENT,
  contactId: null,
  direction: 'outbound',
  status: 'completed',
  endReason: 'caller_hangup',
  durationSeconds: 42,
  disposition: 'interested',
  totalCostUsd: '0.0421',
  hasRecording: true,
  recordingUrl: `https://parley.example/api/v1/calls/${CALL}/recording.wav?expires=1&signature=ab`,
  campaignId: CAMPAIGN,
  fromNumber: '+15555550100',
  answeredAt: '2026-11-24T10:00:00.000Z',
};
const DATA: { [T in WebhookEventType]: DomainEventData<T> } = {
  'call.queued': { callId: CALL, agentId: AGENT, contactId: null, direction: 'outbound', status: 'queued' },
  'call.connected': {
    callId: CALL,
    agentId: AGENT,
    contactId: null,
    direction: 'inbound',
    status: 'connected',
    answeredBy: 'machine',
  },
  'call.completed': ended,
  'call.failed': { ...ended, status: 'busy', durationSeconds: null, hasRecording: false, recordingUrl: null },
  'campaign.started': { campaignId: CAMPAIGN, name: 'Spring', agentId: AGENT },
  'campaign.compliance_paused': {
    campaignId: CAMPAIGN,
    abandonRate: 0.04,
    threshold: 0.035,
    window: '30d',
    abandoned: 4,
    liveAnswered: 100,
  },
};
const BODIES: { [T in WebhookEventType]: Record<string, unknown> } = {
  'call.queued': { callId: CALL, agentId: AGENT, contactId: null, status: 'queued', direction: 'outbound' },
  'call.connected': {
    callId: CALL,
    agentId: AGENT,
    contactId: null,
    status: 'connected',
    direction: 'inbound',
    answeredBy: 'machine',
  },
  'call.completed': {
    callId: CALL,
    agentId: AGENT,
    contactId: null,
    status: 'completed',
    durationSeconds: 42,
    disposition: 'interested',
    recordingUrl: ended.recordingUrl,
  },
  'call.failed': {
    callId: CALL,
    agentId: AGENT,
    contactId: null,
    status: 'busy',
    durationSeconds: null,
    disposition: 'interested',
    endReason: 'caller_hangup',
  },
  'campaign.started': { campaignId: CAMPAIGN, name: 'Spring', agentId: AGENT },
  'campaign.compliance_paused': { campaignId: CAMPAIGN, abandonRate: 0.04, threshold: 0.035, windowDays: 30 },
};

test('an endpoint is in the penalty lane while the last of its attempts to end timed out', () => {
  const ended = (second: number, timedOut: boolean, statusCode: number | null = null) => ({
    finishedAt: at(second),
    timedOut,
    statusCode,
    error: timedOut ? 'timed out after 10 s' : statusCode === null ? 'connection refused' : null,
  });
  assert.equal(lastTimedOut([]), undefined);
  const last = ended(3, true);
  // Taken in the order they ended, not the order given.
  assert.equal(lastTimedOut([ended(1, false, 200), last, ended(2, false, 500)]), last);
  assert.equal(lastTimedOut([ended(4, false, 503), ended(3, true)]), undefined, 'an answer, even a failure, ends it');
  assert.equal(lastTimedOut([ended(3, true), ended(4, false)]), undefined, 'so does an error that came at once');
});

test('each event type gets its documented body: the fields receivers rely on, matching the published schema', () => {
  const ajv = new Ajv({ strict: false, allErrors: true });
  (addFormats as unknown as (ajv: Ajv) => void)(ajv);
  for (const type of WEBHOOK_EVENT_TYPES) {
    const event = {
      id: '00000000-0000-4000-8000-0000000e7e47',
      type,
      accountId: '00000000-0000-4000-8000-00000000acc7',
      subject: { type: type.startsWith('call.') ? 'call' : 'campaign', id: CALL },
      actor: null,
      data: DATA[type],
      occurredAt: at(0),
    } as DomainEvent<WebhookEventType>;
    const body = payloadOf(event);
    assert.deepEqual(body, BODIES[type], type);
    const validate = ajv.compile(EVENT_PAYLOADS[type]);
    assert.ok(validate(body), `${type}: ${ajv.errorsText(validate.errors)}`);
  }
});
