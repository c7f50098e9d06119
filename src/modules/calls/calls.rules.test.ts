/**
 * The call engine's rules, without an app or a database: how an end is reported, the disposition an outcome implies,
 * the agent's latency, a campaign's voicemail action, and the call status predicates.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AppError } from '../../lib/errors.js';
import { signatureHeader } from '../../lib/signatures.js';
import { verifyProviderSignature } from './calls.provider.js';
import {
  agentLatency,
  errorReport,
  gaveUpReport,
  lostCallReport,
  outcomeDisposition,
  postCallReport,
  unansweredReport,
  withVoicemailAction,
  type CallReport,
} from './calls.rules.js';
import { CALL_STATUS_FILTERS, CALL_STATUSES, isFinal, isLive } from './calls.tables.js';

const at = (iso: string) => new Date(`2026-03-02T${iso}Z`);

test('outcomeDisposition: the network outcome implies a disposition; a cut-off or cancelled call gets none', () => {
  const cases: Array<[CallReport['status'], string, string | null]> = [
    ['busy', 'busy', 'busy'],
    ['no_answer', 'no_answer', 'no_answer'],
    ['failed', 'failed: The number is not in service.', 'failed'],
    ['failed', 'canceled', null],
    ['failed', 'worker_lost', null],
    ['failed', 'agent_unavailable', null],
    ['completed', 'voicemail', 'voicemail'],
    ['completed', 'transferred', 'transferred'],
    ['completed', 'agent_hangup', null],
    ['completed', 'caller_hangup', null],
    ['completed', 'error: boom', null],
  ];
  for (const [status, endReason, expected] of cases) {
    assert.equal(outcomeDisposition({ status, endReason }), expected, `${status} ${endReason}`);
  }
});

test('isLive and isFinal split every status but queued, which is neither', () => {
  const table: Record<string, [live: boolean, final: boolean]> = {
    queued: [false, false],
    dialing: [true, false],
    ringing: [true, false],
    connected: [true, false],
    completed: [false, true],
    failed: [false, true],
    busy: [false, true],
    no_answer: [false, true],
  };
  assert.deepEqual(Object.keys(table).sort(), [...CALL_STATUSES].sort());
  for (const [status, [live, final]] of Object.entries(table)) {
    assert.equal(isLive(status), live, status);
    assert.equal(isFinal(status), final, status);
  }
  assert.equal(isLive('unknown'), false);
  assert.equal(isFinal('unknown'), false);
  // A list filters by every status a call is live or final in.
  assert.deepEqual(
    [...CALL_STATUS_FILTERS].sort(),
    CALL_STATUSES.filter((status) => isLive(status) || isFinal(status)).sort(),
  );
});

test('unansweredReport: the network status is the end reason; an unreachable number names its reason', () => {
  const endedAt = at('15:00:05');
  assert.deepEqual(unansweredReport({ status: 'busy', reason: 'The line is busy.', providerCallId: 'p1' }, endedAt), {
    status: 'busy',
    endReason: 'busy',
    endedAt,
    providerCallId: 'p1',
  });
  assert.equal(
    unansweredReport({ status: 'failed', reason: 'Not in service.', providerCallId: 'p2' }, endedAt).endReason,
    'failed: Not in service.',
  );
  assert.equal(
    unansweredReport({ status: 'no_answer', reason: 'Nobody answered.', providerCallId: 'p3' }, endedAt).endReason,
    'no_answer',
  );
});

test('gaveUpReport: a person who hung up in the silence completed a call as long as the wait', () => {
  const answeredAt = at('15:00:10');
  assert.deepEqual(gaveUpReport(answeredAt, 5_000, 'p1'), {
    status: 'completed',
    endReason: 'caller_hangup',
    answeredAt,
    durationMs: 5_000,
    endedAt: at('15:00:15'),
    agentLatencyMs: 5_000,
    providerCallId: 'p1',
  });
});

test('errorReport: a connected call completes with its time so far; one never connected failed', () => {
  const now = at('15:01:00');
  const answered = at('15:00:30');
  assert.deepEqual(errorReport(new Error('boom'), now, answered, true), {
    status: 'completed',
    endReason: 'error: boom',
    endedAt: now,
    durationMs: 30_000,
  });
  assert.deepEqual(errorReport('no line', now, null, false), {
    status: 'failed',
    endReason: 'error: no line',
    endedAt: now,
  });
  assert.equal(errorReport(new Error('x'.repeat(600)), now, null, false).endReason.length, 500);
});

test('lostCallReport: failed at the last heartbeat, never before the start, with the connected time to then', () => {
  type LostCall = Parameters<typeof lostCallReport>[0];
  const base: LostCall = {
    started_at: at('15:00:00'),
    updated_at: at('15:00:01'),
    answered_at: null,
    heartbeat_at: null,
  };
  const cases: Array<[Partial<LostCall>, Date, number | null]> = [
    [{ heartbeat_at: at('15:02:00') }, at('15:02:00'), null],
    [{ heartbeat_at: at('15:02:00'), answered_at: at('15:00:30') }, at('15:02:00'), 90_000],
    [{}, at('15:00:01'), null],
    [{ heartbeat_at: at('14:59:59') }, at('15:00:00'), null],
    [{ heartbeat_at: at('15:00:10'), answered_at: at('15:00:20') }, at('15:00:10'), 0],
  ];
  for (const [changes, endedAt, durationMs] of cases) {
    const report = lostCallReport({ ...base, ...changes });
    assert.equal(report.status, 'failed');
    assert.equal(report.endReason, 'worker_lost');
    assert.deepEqual(report.endedAt, endedAt);
    assert.equal(report.durationMs, durationMs);
  }
});

test('agentLatency: from the end of the greeting (or the answer) to the first agent words; the wait counts once', () => {
  const turn = (speaker: 'agent' | 'caller', startMs: number | null, endMs: number | null) => ({
    speaker,
    startMs,
    endMs,
  });
  const cases: Array<[string, Parameters<typeof agentLatency>[0], number, number | null]> = [
    ['the agent speaks first', [turn('agent', 400, 2_000)], 0, 400],
    ['the agent speaks first after a wait', [turn('agent', 3_400, 5_000)], 3_000, 3_400],
    ['after a greeting', [turn('caller', 400, 1_000), turn('agent', 1_400, 3_000)], 0, 400],
    ['a greeting heard after the wait', [turn('caller', 3_400, 4_000), turn('agent', 4_400, 6_000)], 3_000, 3_400],
    [
      'several caller turns first',
      [turn('caller', 0, 500), turn('caller', 900, 1_500), turn('agent', 1_900, 2_000)],
      0,
      400,
    ],
    [
      'only the first agent turn counts',
      [turn('agent', 400, 900), turn('caller', 1_300, 2_000), turn('agent', 9_000, 9_500)],
      0,
      400,
    ],
    ['the agent never speaks', [turn('caller', 400, 1_000)], 0, null],
    ['no turns at all', [], 0, null],
    [
      'a caller turn without an end keeps the earlier one',
      [turn('caller', 0, 500), turn('caller', 600, null), turn('agent', 900, 1_000)],
      0,
      400,
    ],
    ['an agent turn that starts inside the greeting', [turn('caller', 0, 1_000), turn('agent', 800, 1_200)], 0, 0],
  ];
  for (const [name, turns, waitedMs, expected] of cases) assert.equal(agentLatency(turns, waitedMs), expected, name);
});

test("withVoicemailAction: a campaign's action, kept on the call, wins over the agent's; none keeps the agent's", () => {
  const agent = { id: 'a', voicemail: { action: 'leave_message' as const, message: 'Call us back.' } };
  assert.equal(withVoicemailAction(agent, null), agent);
  assert.deepEqual(withVoicemailAction(agent, 'hang_up'), {
    id: 'a',
    voicemail: { action: 'hang_up', message: 'Call us back.' },
  });
  assert.deepEqual(withVoicemailAction(agent, 'leave_message').voicemail.action, 'leave_message');
});

test('postCallReport: defaults from the status, usage in the engine units, and times that contradict the call refused', () => {
  const now = at('15:10:00');
  const call = { started_at: at('15:00:00') };
  assert.deepEqual(postCallReport({ status: 'completed' }, call, now), {
    status: 'completed',
    endReason: 'caller_hangup',
    endedAt: now,
    answeredAt: null,
    durationMs: null,
    disposition: null,
    providerCallId: null,
    recordingStorageKey: null,
    transcript: undefined,
  });
  assert.equal(postCallReport({ status: 'busy' }, call, now).endReason, 'busy');
  const full = postCallReport(
    {
      status: 'completed',
      endReason: 'agent_hangup',
      answeredAt: '2026-03-02T15:00:05Z',
      endedAt: '2026-03-02T15:01:05Z',
      durationSeconds: 60,
      transcript: [{ speaker: 'agent', text: 'Hi' }],
      usage: { llmInputTokens: 10, sttSeconds: 3 },
    },
    call,
    now,
  );
  assert.equal(full.durationMs, 60_000);
  assert.deepEqual(full.transcript, [{ speaker: 'agent', text: 'Hi', startMs: null, endMs: null }]);
  assert.deepEqual(full.usage, { llmInputTokens: 10, llmOutputTokens: 0, ttsCharacters: 0, sttMs: 3_000 });
  const refused: Array<[Parameters<typeof postCallReport>[0], string]> = [
    [{ status: 'completed', answeredAt: '2026-03-02T14:59:00Z' }, 'body/answeredAt'],
    [{ status: 'completed', endedAt: '2026-03-02T14:59:00Z' }, 'body/endedAt'],
    [{ status: 'completed', answeredAt: '2026-03-02T15:05:00Z', endedAt: '2026-03-02T15:04:00Z' }, 'body/endedAt'],
  ];
  for (const [input, field] of refused) {
    assert.throws(
      () => postCallReport(input, call, now),
      (error: unknown) => error instanceof AppError && JSON.stringify(error).includes(field),
      field,
    );
  }
  // A call that never started takes any times.
  assert.equal(
    postCallReport({ status: 'failed', endedAt: '2026-03-02T14:00:00Z' }, { started_at: null }, now).status,
    'failed',
  );
});

test('verifyProviderSignature: a callback needs a signature of its exact body, by the secret, within 5 minutes', () => {
  const secret = 'provider-secret-for-tests';
  const body = '{"callId":"c","status":"completed"}';
  const now = 1_772_463_600;
  const refusals: Array<[string, string | null, string | undefined, string, RegExp]> = [
    ['callbacks turned off', null, signatureHeader(secret, body, now), body, /VOICE_PROVIDER_SECRET/],
    ['no header', secret, undefined, body, /Send X-Service-Signature/],
    ['an empty header', secret, '', body, /Send X-Service-Signature/],
    ['no timestamp', secret, 'v1=abc', body, /must read/],
    ['another secret', secret, signatureHeader('another-secret-of-length', body, now), body, /does not match/],
    ['another body', secret, signatureHeader(secret, body, now), `${body} `, /does not match/],
    ['over 5 minutes old', secret, signatureHeader(secret, body, now - 301), body, /5 minutes/],
    ['over 5 minutes ahead', secret, signatureHeader(secret, body, now + 301), body, /5 minutes/],
  ];
  for (const [name, key, header, raw, message] of refusals) {
    assert.throws(
      () => verifyProviderSignature(key, header, raw, now),
      (error: unknown) => error instanceof AppError && error.code === 'unauthorized' && message.test(error.message),
      name,
    );
  }
  for (const at of [now, now - 300, now + 300]) {
    assert.doesNotThrow(
      () => verifyProviderSignature(secret, signatureHeader(secret, body, at), body, now),
      String(at),
    );
  }
});
