/**
 * A live call controlled from outside: hung up or given words to say by an operator (through the calls service, as
 * the admin tools do), and ended by the maximum duration. A call is reached while live by holding its conversation
 * at its first wait (see CallPauses), not by racing the clock.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { startJobWorkers } from '../../background.js';
import {
  callEvents,
  callingAccount,
  placeCall,
  startCallsApp,
  waitForCall,
  type CallingAccount,
  type CallsKit,
} from '../../../test/calls-kit.js';

let kit: CallsKit;
let account: CallingAccount;

before(async () => {
  kit = await startCallsApp({ env: { CALLS_MAX_DURATION_SECONDS: '25', TTS_PROVIDER: 'none' } });
  account = await callingAccount(kit.t, [
    { phone: '+14155550100' },
    { phone: '+14155550110' },
    { phone: '+14155550101' },
  ]);
});
after(() => kit.close());

/** Places a call and holds its conversation at its first wait: the call is connected until the test lets it go. */
async function placeHeldCall(phone: string) {
  kit.pauses.hold('conversation');
  const callId = await placeCall(kit.t, account, phone);
  await kit.pauses.paused();
  const live = await waitForCall(kit.t, account.user, callId, (call) => call.status !== 'queued');
  assert.equal(live.status, 'connected', 'held while live');
  return callId;
}

test('an operator hangs up a connected call: it ends at once, as operator_hangup, with what was said so far', async () => {
  try {
    const callId = await placeHeldCall('+14155550110');
    // The callee's greeting, then the agent's first message: each its pause, then its words; the conversation is
    // held again before the reply.
    for (let wait = 0; wait < 4; wait++) await kit.pauses.step();
    const requested = await kit.t.services.calls.hangup(callId);
    assert.deepEqual(requested, { callId, status: 'connected', requested: true });
    const call = await waitForCall(kit.t, account.user, callId);
    assert.equal(call.status, 'completed');
    assert.equal(call.endReason, 'operator_hangup');
    assert.ok(call.durationSeconds < 25);
    assert.deepEqual(
      call.transcript.map((turn: { speaker: string }) => turn.speaker),
      ['caller', 'agent'],
      'what was said so far stays',
    );
    assert.equal((await callEvents(kit.t, account.user, callId)).at(-1)!.type, 'call.completed');
  } finally {
    kit.pauses.release();
  }
});

test('an operator hangs up a queued call: it is cancelled before it dials', async () => {
  // No worker runs calls for a moment, so the call stays queued.
  await kit.workers.stop(10_000);
  try {
    const waiting = await placeCall(kit.t, account, '+14155550100');
    const cancelled = await kit.t.services.calls.hangup(waiting);
    assert.deepEqual(cancelled, { callId: waiting, status: 'failed', requested: true });
    const call = await waitForCall(kit.t, account.user, waiting);
    assert.equal(call.endReason, 'canceled');
    assert.equal(call.startedAt, null, 'it never dialed');
    assert.deepEqual(
      (await callEvents(kit.t, account.user, waiting)).map((e) => e.type),
      ['call.queued', 'call.failed'],
    );
  } finally {
    kit.workers = await startJobWorkers({
      db: kit.t.infra.database.db,
      services: kit.t.services,
      log: pino({ level: 'silent' }),
      pollingIntervalSeconds: 0.5,
    });
  }
});

test('injected words are said by the agent on its next turn', async () => {
  let callId: string;
  try {
    callId = await placeHeldCall('+14155550110');
    await kit.t.services.calls.inject(callId, 'This call may be recorded for quality.');
  } finally {
    kit.pauses.release();
  }
  const call = await waitForCall(kit.t, account.user, callId);
  const injected = call.transcript.find(
    (turn: { text: string }) => turn.text === 'This call may be recorded for quality.',
  );
  assert.equal(injected?.speaker, 'agent');
});

test('a call that reaches the maximum duration is ended there', async () => {
  // This conversation takes over 30 seconds; the limit here is 25.
  const callId = await placeCall(kit.t, account, '+14155550101');
  const call = await waitForCall(kit.t, account.user, callId);
  assert.equal(call.endReason, 'max_duration');
  assert.equal(call.status, 'completed');
  assert.equal(call.durationSeconds, 25);
  const last = call.transcript.at(-1);
  assert.ok(last.endMs <= 25_000);
});
