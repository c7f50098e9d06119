import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  getHeader,
  getHeaders,
  parseCSeq,
  parseSipMessage,
  parseVia,
  serializeSipMessage,
  SipFormatError,
  tagOf,
  takeStreamMessage,
  type SipRequest,
} from './sip-message.js';
import { parseNameAddr } from './sip-uri.js';

const crlf = (lines: string[]) => lines.join('\r\n');

const SDP = crlf([
  'v=0',
  'o=user1 53655765 2353687637 IN IP4 127.0.0.1',
  's=-',
  'c=IN IP4 127.0.0.1',
  't=0 0',
  'm=audio 6000 RTP/AVP 0',
  'a=rtpmap:0 PCMU/8000',
  '',
]);

// As sipp's built-in uac scenario sends it (its Content-Length is padded with spaces, like this one).
const SIPP_INVITE = crlf([
  'INVITE sip:service@127.0.0.1:5060 SIP/2.0',
  'Via: SIP/2.0/UDP 127.0.0.1:5061;branch=z9hG4bK-12345-1-0',
  'From: sipp <sip:sipp@127.0.0.1:5061>;tag=12345SIPpTag001',
  'To: service <sip:service@127.0.0.1:5060>',
  'Call-ID: 1-12345@127.0.0.1',
  'CSeq: 1 INVITE',
  'Contact: sip:sipp@127.0.0.1:5061',
  'Max-Forwards: 70',
  'Subject: Performance Test',
  'Content-Type: application/sdp',
  `Content-Length:   ${Buffer.byteLength(SDP)}`,
  '',
  SDP,
]);

// An Asterisk 401 challenge to an INVITE through a NAT (received and rport filled in).
const ASTERISK_401 = crlf([
  'SIP/2.0 401 Unauthorized',
  'Via: SIP/2.0/UDP 192.168.1.100:5060;rport=5062;received=203.0.113.5;branch=z9hG4bKPj3f2c1a0e',
  'Call-ID: 3848276298220188511@192.168.1.100',
  'From: <sip:1001@pbx.example.com>;tag=a73kszlfl',
  'To: <sip:15550100@pbx.example.com>;tag=z9hG4bKPj3f2c1a0e',
  'CSeq: 1 INVITE',
  'WWW-Authenticate: Digest realm="asterisk",nonce="1700000000/4c9c2b1f0f7e0e1a8a1d2b3c4d5e6f70",opaque="2a7b3c4d5e6f7081",algorithm=MD5,qop="auth"',
  'Server: Asterisk PBX 20.5.0',
  'Content-Length:  0',
  '',
  '',
]);

test('an INVITE as sipp sends it: start line, headers, name-addrs and the body Content-Length counts', () => {
  const message = parseSipMessage(SIPP_INVITE) as SipRequest;
  assert.equal(message.kind, 'request');
  assert.equal(message.method, 'INVITE');
  assert.equal(message.uri, 'sip:service@127.0.0.1:5060');
  assert.equal(getHeader(message, 'call-id'), '1-12345@127.0.0.1');
  assert.equal(getHeader(message, 'i'), '1-12345@127.0.0.1', 'a compact name finds the long header');
  assert.deepEqual(parseCSeq(getHeader(message, 'CSeq')!), { seq: 1, method: 'INVITE' });
  assert.equal(tagOf(getHeader(message, 'From')!), '12345SIPpTag001');
  assert.equal(tagOf(getHeader(message, 'To')!), undefined);
  assert.equal(parseNameAddr(getHeader(message, 'Contact')!).uri.port, 5061);
  assert.equal(message.body.toString(), SDP);
});

test('an Asterisk 401: status, Via received and rport, the challenge kept whole', () => {
  const message = parseSipMessage(ASTERISK_401);
  assert.equal(message.kind, 'response');
  assert.ok(message.kind === 'response');
  assert.equal(message.status, 401);
  assert.equal(message.reason, 'Unauthorized');
  const via = parseVia(getHeader(message, 'Via')!);
  assert.deepEqual(
    {
      transport: via.transport,
      host: via.host,
      port: via.port,
      branch: via.branch,
      received: via.received,
      rport: via.rport,
    },
    {
      transport: 'UDP',
      host: '192.168.1.100',
      port: 5060,
      branch: 'z9hG4bKPj3f2c1a0e',
      received: '203.0.113.5',
      rport: 5062,
    },
  );
  // Its commas are parameters, not several values.
  assert.equal(getHeaders(message, 'WWW-Authenticate').length, 1);
  assert.match(getHeader(message, 'WWW-Authenticate')!, /^Digest realm="asterisk",nonce=.*qop="auth"$/);
  assert.equal(message.body.length, 0);
});

test('RFC 4475 "wsinv": compact forms, folded lines, odd whitespace and case, multi-value headers', () => {
  const body = crlf([
    'v=0',
    'o=mhandley 29739 7272939 IN IP4 192.0.2.3',
    's=-',
    'c=IN IP4 192.0.2.4',
    't=0 0',
    'm=audio 49217 RTP/AVP 0 12',
    'm=video 3227 RTP/AVP 31',
    'a=rtpmap:31 LPC',
    '',
  ]);
  const text = crlf([
    'INVITE sip:vivekg@chair-dnrc.example.com;unknownparam SIP/2.0',
    'TO :',
    ' sip:vivekg@chair-dnrc.example.com ;   tag    = 1918181833n',
    String.raw`from   : "J Rosenberg \\\""       <sip:jdrosen@example.com>`,
    '  ;',
    '  tag = 98asjd8',
    'MaX-fOrWaRdS: 0068',
    'Call-ID: wsinv.ndaksdj@192.0.2.1',
    `Content-Length   : ${Buffer.byteLength(body)}`,
    'cseq: 0009',
    '  INVITE',
    'Via  : SIP  /   2.0',
    ' /UDP',
    '    192.0.2.2;branch=390skdjuw',
    's :',
    'NewFangledHeader:   newfangled value',
    ' continued newfangled value',
    'UnknownHeaderWithUnusualValue: ;;,,;;,;',
    'Content-Type: application/sdp',
    'Route:',
    ' <sip:services.example.com;lr;unknownwith=value;unknown-no-value>',
    'v:  SIP  / 2.0  / TCP     spindle.example.com   ;',
    '  branch  =   z9hG4bK9ikj8  ,',
    ' SIP  /    2.0   / UDP  192.168.255.111   ; branch=',
    ' z9hG4bK30239',
    String.raw`m:"Quoted string \"\"" <sip:jdrosen@example.com> ; newparam =`,
    '      newvalue ;',
    '  secondparam ; q = 0.33',
    '',
    body,
  ]);
  const message = parseSipMessage(text);
  assert.equal(tagOf(getHeader(message, 'To')!), '1918181833n');
  const from = parseNameAddr(getHeader(message, 'From')!);
  assert.equal(from.displayName, 'J Rosenberg \\"');
  assert.equal(from.params.tag, '98asjd8');
  assert.equal(getHeader(message, 'Max-Forwards'), '0068');
  assert.deepEqual(parseCSeq(getHeader(message, 'CSeq')!), { seq: 9, method: 'INVITE' });
  assert.equal(getHeader(message, 'Subject'), '');
  assert.equal(getHeader(message, 'NewFangledHeader'), 'newfangled value continued newfangled value');
  const vias = getHeaders(message, 'Via').map(parseVia);
  assert.deepEqual(
    vias.map((via) => [via.transport, via.host, via.branch]),
    [
      ['UDP', '192.0.2.2', '390skdjuw'],
      ['TCP', 'spindle.example.com', 'z9hG4bK9ikj8'],
      ['UDP', '192.168.255.111', 'z9hG4bK30239'],
    ],
  );
  const contact = parseNameAddr(getHeader(message, 'Contact')!);
  assert.equal(contact.displayName, 'Quoted string ""');
  assert.deepEqual(contact.params, { newparam: 'newvalue', secondparam: null, q: '0.33' });
  assert.equal(message.body.toString(), body);
});

test('a round trip keeps every header and the body; Content-Length is written from the body', () => {
  const first = parseSipMessage(SIPP_INVITE);
  const bytes = serializeSipMessage(first);
  assert.match(bytes.toString(), new RegExp(`\r\nContent-Length: ${Buffer.byteLength(SDP)}\r\n\r\nv=0`));
  const second = parseSipMessage(bytes);
  assert.deepEqual(second, first);
  const response = parseSipMessage(ASTERISK_401);
  assert.deepEqual(parseSipMessage(serializeSipMessage(response)), response);
});

test('Content-Length is honoured: extra bytes after the body are not part of it, a short body is an error', () => {
  const withTrailer = parseSipMessage(`${SIPP_INVITE}garbage after the body`);
  assert.equal(withTrailer.body.toString(), SDP);
  const short = SIPP_INVITE.slice(0, -10);
  assert.throws(() => parseSipMessage(short), /Content-Length says \d+ bytes, the message has \d+/);
  // On UDP a message without Content-Length takes the rest of the datagram; a stream transport must have it.
  const noLength = SIPP_INVITE.replace(/Content-Length:[^\r]*\r\n/, '');
  assert.equal(parseSipMessage(noLength).body.toString(), SDP);
  assert.throws(() => parseSipMessage(noLength, { requireContentLength: true }), /Content-Length is required/);
});

test('bare LF line ends and keep-alive CRLFs before a message are tolerated', () => {
  const message = parseSipMessage(`\r\n\r\n${ASTERISK_401.replaceAll('\r\n', '\n')}`);
  assert.equal(message.kind, 'response');
  assert.equal(getHeader(message, 'Call-ID'), '3848276298220188511@192.168.1.100');
});

test('a TCP stream is cut into messages by Content-Length, waiting for the rest when a message is partial', () => {
  const stream = Buffer.concat([Buffer.from('\r\n\r\n'), Buffer.from(SIPP_INVITE), Buffer.from(ASTERISK_401)]);
  const first = takeStreamMessage(stream.subarray(0, 100));
  assert.equal(first, null, 'headers not complete yet');
  const partialBody = takeStreamMessage(stream.subarray(0, Buffer.byteLength(SIPP_INVITE) - 5));
  assert.equal(partialBody, null, 'body not complete yet');
  const one = takeStreamMessage(stream);
  assert.ok(one);
  assert.equal(one.message.kind, 'request');
  const two = takeStreamMessage(one.rest);
  assert.ok(two);
  assert.equal(two.message.kind, 'response');
  assert.equal(two.rest.length, 0);
});

test('malformed messages are clear SipFormatErrors', () => {
  const cases: Array<[string, RegExp]> = [
    ['', /no blank line/],
    ['INVITE sip:a@b SIP/2.0\r\nVia: SIP/2.0/UDP h;branch=z9hG4bK1\r\n', /no blank line/],
    [SIPP_INVITE.replace('SIP/2.0\r\n', 'SIP/3.0\r\n'), /not a SIP start line/],
    [SIPP_INVITE.replace('INVITE sip:', 'INV ITE sip:'), /not a SIP start line/],
    [ASTERISK_401.replace('SIP/2.0 401', 'SIP/2.0 999'), /not a SIP start line/],
    [SIPP_INVITE.replace('CSeq: 1 INVITE\r\n', ''), /missing CSeq header/],
    [SIPP_INVITE.replace('CSeq: 1 INVITE', 'CSeq: 1 BYE'), /does not match the request method/],
    [SIPP_INVITE.replace('CSeq: 1 INVITE', 'CSeq: one INVITE'), /bad CSeq/],
    [SIPP_INVITE.replace('Call-ID: 1-12345@127.0.0.1\r\n', ''), /missing Call-ID header/],
    [SIPP_INVITE.replace(/Content-Length:[^\r]*/, 'Content-Length: -4'), /bad Content-Length/],
    [SIPP_INVITE.replace(/Content-Length:[^\r]*/, 'Content-Length: 99999999999'), /bad Content-Length/],
    [SIPP_INVITE.replace('Subject: Performance Test', 'Subject Performance Test'), /not a header line/],
    [SIPP_INVITE.replace('Subject: Performance Test', 'Sub ject: x'), /bad header name/],
    [SIPP_INVITE.replace('Max-Forwards: 70', 'Max-Forwards: 70\r\nContent-Length: 3'), /conflicting Content-Length/],
    [`INVITE sip:a@b SIP/2.0\r\n continued\r\n\r\n`, /continuation line before any header/],
  ];
  for (const [text, reason] of cases)
    assert.throws(() => parseSipMessage(text), reason, JSON.stringify(text.slice(0, 60)));
  assert.throws(() => parseSipMessage(Buffer.alloc(70_000, 0x41)), /at most 65535/);
  assert.throws(() => parseVia('SIP/2.0/UDP'), SipFormatError);
  assert.throws(() => parseVia('SIP/2.0/UDP host;rport=abc'), /bad rport/);
  assert.throws(() => takeStreamMessage(Buffer.from(SIPP_INVITE.replace(/Content-Length:[^\r]*\r\n/, ''))), /required/);
});

test('mangled messages either parse or fail with a SipFormatError, never another error', () => {
  const source = Buffer.from(SIPP_INVITE);
  let state = 12345;
  const random = () => {
    state = (state * 1103515245 + 12345) & 0x7fffffff;
    return state;
  };
  for (let round = 0; round < 3000; round++) {
    const bytes = Buffer.from(source);
    for (let edits = 1 + (random() % 4); edits > 0; edits--) bytes[random() % bytes.length] = random() % 256;
    const cut = round % 3 === 0 ? bytes.subarray(0, random() % bytes.length) : bytes;
    try {
      const message = parseSipMessage(cut);
      // The header readers a user agent applies next must hold too.
      getHeaders(message, 'Via').map(parseVia);
      for (const name of ['From', 'To', 'Contact']) getHeaders(message, name).map(parseNameAddr);
      parseCSeq(getHeader(message, 'CSeq')!);
    } catch (error) {
      assert.ok(error instanceof SipFormatError, `round ${round}: ${(error as Error).stack}`);
    }
  }
});

test('serializing refuses a header value that would inject a line', () => {
  const message = parseSipMessage(SIPP_INVITE);
  message.headers.push({ name: 'Subject', value: 'x\r\nVia: evil' });
  assert.throws(() => serializeSipMessage(message), /cannot be written as one line/);
});
