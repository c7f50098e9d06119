import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildAckFor2xx, buildAckForFailure, buildCancel, buildRequest, buildResponse } from './sip-builders.js';
import {
  getHeader,
  getHeaders,
  parseSipMessage,
  parseVia,
  serializeSipMessage,
  tagOf,
  type SipRequest,
  type SipResponse,
} from './sip-message.js';
import { parseSipUri } from './sip-uri.js';

const roundTrip = <T extends SipRequest | SipResponse>(message: T): T =>
  parseSipMessage(serializeSipMessage(message)) as T;

const invite = buildRequest({
  method: 'INVITE',
  uri: parseSipUri('sip:+15550100@203.0.113.10'),
  from: { uri: parseSipUri('sip:parley@198.51.100.7'), displayName: 'Parley', tag: 'ftag1' },
  to: { uri: parseSipUri('sip:+15550100@203.0.113.10') },
  callId: 'call-1@198.51.100.7',
  cseq: 1,
  via: { transport: 'UDP', host: '198.51.100.7', port: 5060, branch: 'z9hG4bKinvite1' },
  contact: parseSipUri('sip:parley@198.51.100.7:5060'),
  body: { contentType: 'application/sdp', content: 'v=0\r\n' },
});

test('an INVITE built from fields is a valid message: Via with branch and rport, tags, CSeq, Contact, body', () => {
  const bytes = serializeSipMessage(invite).toString();
  assert.equal(
    bytes,
    [
      'INVITE sip:+15550100@203.0.113.10 SIP/2.0',
      'Via: SIP/2.0/UDP 198.51.100.7:5060;branch=z9hG4bKinvite1;rport',
      'Max-Forwards: 70',
      'From: "Parley" <sip:parley@198.51.100.7>;tag=ftag1',
      'To: <sip:+15550100@203.0.113.10>',
      'Call-ID: call-1@198.51.100.7',
      'CSeq: 1 INVITE',
      'Contact: <sip:parley@198.51.100.7:5060>',
      'User-Agent: Parley',
      'Content-Type: application/sdp',
      'Content-Length: 5',
      '',
      'v=0',
      '',
    ].join('\r\n'),
  );
  assert.deepEqual(roundTrip(invite), {
    ...invite,
    headers: [...invite.headers, { name: 'Content-Length', value: '5' }],
  });
});

test('a response copies every Via, From, To (adding our tag once), Call-ID and CSeq', () => {
  const proxied: SipRequest = {
    ...invite,
    headers: [{ name: 'Via', value: 'SIP/2.0/UDP proxy.example.com;branch=z9hG4bKp' }, ...invite.headers],
  };
  const ringing = roundTrip(buildResponse(proxied, 180, 'Ringing', { toTag: 'totag9' }));
  assert.equal(ringing.status, 180);
  assert.deepEqual(
    getHeaders(ringing, 'Via').map((via) => parseVia(via).branch),
    ['z9hG4bKp', 'z9hG4bKinvite1'],
  );
  assert.equal(tagOf(getHeader(ringing, 'From')!), 'ftag1');
  assert.equal(tagOf(getHeader(ringing, 'To')!), 'totag9');
  assert.equal(getHeader(ringing, 'Call-ID'), 'call-1@198.51.100.7');
  assert.equal(getHeader(ringing, 'CSeq'), '1 INVITE');
  // A request that already has a To tag (in-dialog) keeps it.
  const bye: SipRequest = {
    ...invite,
    method: 'BYE',
    headers: invite.headers.map((h) =>
      h.name === 'To' ? { ...h, value: `${h.value};tag=old` } : h.name === 'CSeq' ? { ...h, value: '2 BYE' } : h,
    ),
  };
  assert.equal(tagOf(getHeader(buildResponse(bye, 200, 'OK', { toTag: 'new' }), 'To')!), 'old');
});

test('ACK for a failure reuses the INVITE branch; ACK for a 2xx is a new transaction to the Contact; CANCEL mirrors the INVITE', () => {
  const busy = buildResponse(invite, 486, 'Busy Here', { toTag: 'totag9' });
  const ack = roundTrip(buildAckForFailure(invite, busy));
  assert.equal(ack.method, 'ACK');
  assert.equal(ack.uri, invite.uri);
  assert.equal(parseVia(getHeader(ack, 'Via')!).branch, 'z9hG4bKinvite1');
  assert.equal(getHeader(ack, 'CSeq'), '1 ACK');
  assert.equal(tagOf(getHeader(ack, 'To')!), 'totag9');

  const ok = buildResponse(invite, 200, 'OK', {
    toTag: 'totag9',
    contact: parseSipUri('sip:callee@203.0.113.11:5080;transport=udp'),
  });
  const ack2xx = roundTrip(
    buildAckFor2xx(invite, ok, { transport: 'UDP', host: '198.51.100.7', port: 5060, branch: 'z9hG4bKack2' }),
  );
  assert.equal(ack2xx.uri, 'sip:callee@203.0.113.11:5080;transport=udp');
  assert.equal(parseVia(getHeader(ack2xx, 'Via')!).branch, 'z9hG4bKack2');
  assert.equal(getHeader(ack2xx, 'CSeq'), '1 ACK');

  const cancel = roundTrip(buildCancel(invite));
  assert.equal(cancel.method, 'CANCEL');
  assert.equal(cancel.uri, invite.uri);
  assert.equal(getHeader(cancel, 'Via'), getHeader(invite, 'Via'));
  assert.equal(getHeader(cancel, 'CSeq'), '1 CANCEL');
  assert.equal(tagOf(getHeader(cancel, 'To')!), undefined);
  assert.equal(cancel.body.length, 0);
});

test('OPTIONS and an in-dialog BYE with a route set', () => {
  const options = roundTrip(
    buildRequest({
      method: 'OPTIONS',
      uri: parseSipUri('sip:203.0.113.10'),
      from: { uri: parseSipUri('sip:parley@198.51.100.7'), tag: 'o1' },
      to: { uri: parseSipUri('sip:203.0.113.10') },
      callId: 'ping-1',
      cseq: 1,
      via: { transport: 'TCP', host: '198.51.100.7', branch: 'z9hG4bKping' },
    }),
  );
  assert.equal(options.method, 'OPTIONS');
  assert.equal(parseVia(getHeader(options, 'Via')!).transport, 'TCP');
  const bye = roundTrip(
    buildRequest({
      method: 'BYE',
      uri: parseSipUri('sip:callee@203.0.113.11:5080'),
      from: { uri: parseSipUri('sip:parley@198.51.100.7'), tag: 'ftag1' },
      to: { uri: parseSipUri('sip:+15550100@203.0.113.10'), tag: 'totag9' },
      callId: 'call-1@198.51.100.7',
      cseq: 2,
      via: { transport: 'UDP', host: '198.51.100.7', port: 5060, branch: 'z9hG4bKbye' },
      route: ['<sip:sbc.example.com;lr>'],
    }),
  );
  assert.deepEqual(getHeaders(bye, 'Route'), ['<sip:sbc.example.com;lr>']);
  assert.equal(getHeader(bye, 'CSeq'), '2 BYE');
});
