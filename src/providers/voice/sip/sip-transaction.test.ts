import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseSipMessage, type SipResponse } from './sip-message.js';
import {
  BRANCH_MAGIC_COOKIE,
  inviteOutcome,
  isRfc3261Branch,
  newBranch,
  responseMatchesTransaction,
  retransmitSchedule,
  ringTimeoutOutcome,
  SIP_TIMERS,
} from './sip-transaction.js';

test('branch ids start with the magic cookie and do not repeat', () => {
  const branches = new Set(Array.from({ length: 1000 }, newBranch));
  assert.equal(branches.size, 1000);
  for (const branch of branches) {
    assert.ok(branch.startsWith(BRANCH_MAGIC_COOKIE));
    assert.ok(isRfc3261Branch(branch));
    assert.match(branch, /^z9hG4bK[A-Za-z0-9_-]+$/, 'a token, safe in a Via parameter');
  }
  assert.equal(isRfc3261Branch('z9hG4bK'), false);
  assert.equal(isRfc3261Branch('390skdjuw'), false, 'an RFC 2543 branch');
  assert.equal(isRfc3261Branch(undefined), false);
});

const response = (via: string, cseq: string): SipResponse =>
  parseSipMessage(
    [
      'SIP/2.0 200 OK',
      `Via: ${via}`,
      'From: <sip:parley@198.51.100.7>;tag=1',
      'To: <sip:+15550100@203.0.113.10>;tag=2',
      'Call-ID: c1@198.51.100.7',
      `CSeq: ${cseq}`,
      'Content-Length: 0',
      '',
      '',
    ].join('\r\n'),
  ) as SipResponse;

test('a response matches the client transaction of its top Via branch and CSeq method', () => {
  const via = 'SIP/2.0/UDP 198.51.100.7:5060;branch=z9hG4bKabc;rport=5060;received=198.51.100.7';
  assert.equal(responseMatchesTransaction(response(via, '1 INVITE'), { branch: 'z9hG4bKabc', method: 'INVITE' }), true);
  // A CANCEL shares the INVITE's branch: the method tells their answers apart.
  assert.equal(
    responseMatchesTransaction(response(via, '1 CANCEL'), { branch: 'z9hG4bKabc', method: 'INVITE' }),
    false,
  );
  assert.equal(responseMatchesTransaction(response(via, '1 CANCEL'), { branch: 'z9hG4bKabc', method: 'CANCEL' }), true);
  assert.equal(
    responseMatchesTransaction(response(via, '1 INVITE'), { branch: 'z9hG4bKother', method: 'INVITE' }),
    false,
  );
  const two = `${via}, SIP/2.0/UDP 10.0.0.1;branch=z9hG4bKproxy`;
  assert.equal(
    responseMatchesTransaction(response(two, '1 INVITE'), { branch: 'z9hG4bKabc', method: 'INVITE' }),
    true,
    'the top Via counts',
  );
  assert.equal(
    responseMatchesTransaction(response('SIP/2.0/UDP', '1 INVITE'), { branch: 'z9hG4bKabc', method: 'INVITE' }),
    false,
  );
});

test('RFC 3261 timers as data, and the UDP retransmission schedules they give', () => {
  assert.equal(SIP_TIMERS.T1, 500);
  assert.equal(SIP_TIMERS.B, 64 * SIP_TIMERS.T1);
  assert.equal(SIP_TIMERS.F, 64 * SIP_TIMERS.T1);
  // INVITE: 0.5, 1, 2, 4, 8, 16 s apart, so sent at 0 and then at these times, before Timer B at 32 s.
  assert.deepEqual(retransmitSchedule('INVITE', 'UDP'), [500, 1500, 3500, 7500, 15_500, 31_500]);
  // Others double up to T2 (4 s), then every 4 s until Timer F.
  assert.deepEqual(
    retransmitSchedule('BYE', 'UDP'),
    [500, 1500, 3500, 7500, 11_500, 15_500, 19_500, 23_500, 27_500, 31_500],
  );
  assert.deepEqual(retransmitSchedule('INVITE', 'TCP'), []);
});

test('final answers to an INVITE map to the call outcome', () => {
  assert.deepEqual(inviteOutcome(200, 'OK'), { outcome: 'answered' });
  assert.deepEqual(inviteOutcome(486, 'Busy Here'), { outcome: 'busy', code: 486, reason: 'Busy Here' });
  assert.deepEqual(inviteOutcome(600, 'Busy Everywhere'), { outcome: 'busy', code: 600, reason: 'Busy Everywhere' });
  for (const code of [408, 480, 487]) assert.equal(inviteOutcome(code, 'x').outcome, 'no_answer');
  assert.deepEqual(ringTimeoutOutcome(), { outcome: 'no_answer', code: null, reason: 'ring timeout' });
  assert.deepEqual(inviteOutcome(404, 'Not Found'), { outcome: 'failed', code: 404, reason: 'Not Found' });
  assert.deepEqual(inviteOutcome(503, 'Service Unavailable'), {
    outcome: 'failed',
    code: 503,
    reason: 'Service Unavailable',
  });
  assert.deepEqual(inviteOutcome(603, 'Decline'), { outcome: 'failed', code: 603, reason: 'Decline' });
  assert.deepEqual(inviteOutcome(302, 'Moved Temporarily'), {
    outcome: 'failed',
    code: 302,
    reason: 'Moved Temporarily',
  });
  assert.throws(() => inviteOutcome(180, 'Ringing'), RangeError);
});
