import { test } from 'node:test';
import assert from 'node:assert/strict';
import { answeredByFrom, callProgressFromStatusCallback } from './call-status.js';

const progress = (params: Record<string, string>) => callProgressFromStatusCallback(params);
const outcome = (params: Record<string, string>) => {
  const update = progress(params);
  return update.phase === 'ended' ? update.status : update.phase === 'live' ? update.status : 'invalid';
};

test('live statuses: queued and initiated are dialing, ringing, in-progress is connected', () => {
  assert.deepEqual(progress({ CallStatus: 'queued' }), { phase: 'live', status: 'dialing' });
  assert.deepEqual(progress({ CallStatus: 'initiated' }), { phase: 'live', status: 'dialing' });
  assert.deepEqual(progress({ CallStatus: 'ringing' }), { phase: 'live', status: 'ringing' });
  assert.deepEqual(progress({ CallStatus: 'in-progress' }), {
    phase: 'live',
    status: 'connected',
    answeredBy: 'human',
  });
  assert.deepEqual(progress({ CallStatus: 'in-progress', AnsweredBy: 'machine_end_beep' }), {
    phase: 'live',
    status: 'connected',
    answeredBy: 'machine',
  });
});

test('final statuses map to the call outcomes, with the duration and SIP code', () => {
  assert.deepEqual(progress({ CallStatus: 'completed', CallDuration: '42' }), {
    phase: 'ended',
    status: 'completed',
    reason: 'The call ended.',
    durationSeconds: 42,
    sipResponseCode: null,
  });
  assert.deepEqual(progress({ CallStatus: 'busy', SipResponseCode: '486', CallDuration: '0' }), {
    phase: 'ended',
    status: 'busy',
    reason: 'The line is busy (SIP 486).',
    durationSeconds: 0,
    sipResponseCode: 486,
  });
  assert.equal(outcome({ CallStatus: 'no-answer' }), 'no_answer');
  assert.equal(outcome({ CallStatus: 'failed', SipResponseCode: '404' }), 'failed');
  assert.equal(outcome({ CallStatus: 'failed' }), 'failed');
  // A canceled call is one we hung up before the answer: failed, with the reason the engine uses.
  const canceled = progress({ CallStatus: 'canceled' });
  assert.ok(canceled.phase === 'ended' && canceled.status === 'failed' && canceled.reason === 'canceled');
});

test('a failed call whose SIP answer means busy or unanswered says so', () => {
  for (const code of ['486', '600', '603'])
    assert.equal(outcome({ CallStatus: 'failed', SipResponseCode: code }), 'busy');
  for (const code of ['408', '480', '487'])
    assert.equal(outcome({ CallStatus: 'failed', SipResponseCode: code }), 'no_answer');
  assert.equal(outcome({ CallStatus: 'failed', SipResponseCode: '503' }), 'failed');
});

test('a missing, unknown or malformed status is reported, not guessed; bad numbers are ignored', () => {
  assert.deepEqual(progress({}), { phase: 'invalid', message: 'Unknown CallStatus "".' });
  assert.deepEqual(progress({ CallStatus: 'answered' }), {
    phase: 'invalid',
    message: 'Unknown CallStatus "answered".',
  });
  const update = progress({ CallStatus: 'completed', CallDuration: '-1', SipResponseCode: '2x0' });
  assert.ok(update.phase === 'ended' && update.durationSeconds === 0 && update.sipResponseCode === null);
});

test('answering-machine detection: machines and fax are machines, human and unknown are people', () => {
  for (const value of ['machine_start', 'machine_end_beep', 'machine_end_silence', 'machine_end_other', 'fax']) {
    assert.equal(answeredByFrom(value), 'machine');
  }
  for (const value of ['human', 'unknown', undefined]) assert.equal(answeredByFrom(value), 'human');
});
