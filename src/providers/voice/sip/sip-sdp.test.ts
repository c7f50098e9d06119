import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildSdpOffer, negotiateSdpAnswer, parseSdpAnswer, SdpNegotiationError } from './sip-sdp.js';

const crlf = (lines: string[]) => `${lines.join('\r\n')}\r\n`;

test('our offer: PCMU, PCMA, telephone-event 101 with 0-16, ptime 20, sendrecv, our address and port', () => {
  const offer = buildSdpOffer({ address: '198.51.100.7', port: 40000, sessionId: 4242, sessionVersion: 1 });
  assert.equal(
    offer,
    crlf([
      'v=0',
      'o=parley 4242 1 IN IP4 198.51.100.7',
      's=Parley',
      'c=IN IP4 198.51.100.7',
      't=0 0',
      'm=audio 40000 RTP/AVP 0 8 101',
      'a=rtpmap:0 PCMU/8000',
      'a=rtpmap:8 PCMA/8000',
      'a=rtpmap:101 telephone-event/8000',
      'a=fmtp:101 0-16',
      'a=ptime:20',
      'a=sendrecv',
    ]),
  );
  assert.match(buildSdpOffer({ address: '2001:db8::7', port: 40002 }), /\r\nc=IN IP6 2001:db8::7\r\n/);
});

// As an Asterisk or a carrier SBC offers it: PCMA first, codecs we do not speak, telephone-event 96.
const CARRIER_OFFER = crlf([
  'v=0',
  'o=- 1700000000 1700000000 IN IP4 203.0.113.10',
  's=SBC',
  'c=IN IP4 203.0.113.10',
  't=0 0',
  'm=audio 31000 RTP/AVP 18 8 0 96',
  'a=rtpmap:18 G729/8000',
  'a=fmtp:18 annexb=no',
  'a=rtpmap:8 PCMA/8000',
  'a=rtpmap:0 PCMU/8000',
  'a=rtpmap:96 telephone-event/8000',
  'a=fmtp:96 0-15',
  'a=ptime:20',
  'a=sendrecv',
]);

test('an answer takes the first common codec in the offerer order and its telephone-event type', () => {
  const result = negotiateSdpAnswer(CARRIER_OFFER, { address: '198.51.100.7', port: 40000, sessionId: 7 });
  assert.ok(result.ok);
  assert.deepEqual(result.remote, {
    address: '203.0.113.10',
    port: 31000,
    payloadType: 8,
    codec: 'PCMA',
    dtmfPayloadType: 96,
  });
  assert.match(result.sdp, /\r\nm=audio 40000 RTP\/AVP 8 96\r\n/);
  assert.match(result.sdp, /\r\na=rtpmap:96 telephone-event\/8000\r\na=fmtp:96 0-16\r\n/);
  assert.match(result.sdp, /\r\nc=IN IP4 198.51.100.7\r\n/);
  // The answer reads back as the media we will receive.
  assert.deepEqual(parseSdpAnswer(result.sdp), {
    address: '198.51.100.7',
    port: 40000,
    payloadType: 8,
    codec: 'PCMA',
    dtmfPayloadType: 96,
  });
});

test('static payload types without rtpmap, no telephone-event, media-level c=, sendonly answered recvonly', () => {
  const offer = crlf([
    'v=0',
    'o=user1 53655765 2353687637 IN IP4 127.0.0.1',
    's=-',
    't=0 0',
    'm=video 0 RTP/AVP 31',
    'm=audio 6000 RTP/AVP 0',
    'c=IN IP4 127.0.0.2',
    'a=sendonly',
  ]);
  const result = negotiateSdpAnswer(offer, { address: '198.51.100.7', port: 40000 });
  assert.ok(result.ok);
  assert.deepEqual(result.remote, {
    address: '127.0.0.2',
    port: 6000,
    payloadType: 0,
    codec: 'PCMU',
    dtmfPayloadType: null,
  });
  assert.match(result.sdp, /m=video 0 RTP\/AVP 31\r\nm=audio 40000 RTP\/AVP 0\r\n/, 'streams in the offer order');
  assert.match(result.sdp, /a=recvonly/);
  assert.doesNotMatch(result.sdp, /telephone-event/);
});

test('a codec offered under a dynamic payload type is answered with that number', () => {
  const offer = CARRIER_OFFER.replace('RTP/AVP 18 8 0 96', 'RTP/AVP 97 96').replace(
    'a=rtpmap:96 telephone-event/8000',
    'a=rtpmap:97 pcmu/8000\r\na=rtpmap:96 telephone-event/8000',
  );
  const result = negotiateSdpAnswer(offer, { address: '198.51.100.7', port: 40000 });
  assert.ok(result.ok);
  assert.equal(result.remote.payloadType, 97);
  assert.equal(result.remote.codec, 'PCMU');
  assert.match(result.sdp, /\r\nm=audio 40000 RTP\/AVP 97 96\r\na=rtpmap:97 PCMU\/8000\r\n/);
});

test('no common codec, no audio, or not SDP: refused with a clear reason', () => {
  const g729 = CARRIER_OFFER.replace('RTP/AVP 18 8 0 96', 'RTP/AVP 18 96');
  assert.deepEqual(negotiateSdpAnswer(g729, { address: '198.51.100.7', port: 40000 }), {
    ok: false,
    reason: 'no common codec: offered G729, we take PCMU, PCMA',
  });
  const pcmuOnly = negotiateSdpAnswer(CARRIER_OFFER, { address: '198.51.100.7', port: 40000, codecs: ['PCMU'] });
  assert.ok(pcmuOnly.ok);
  assert.equal(pcmuOnly.remote.codec, 'PCMU');
  const srtp = CARRIER_OFFER.replace('RTP/AVP', 'RTP/SAVP');
  assert.deepEqual(negotiateSdpAnswer(srtp, { address: '198.51.100.7', port: 40000 }), {
    ok: false,
    reason: 'unsupported media protocol RTP/SAVP (plain RTP/AVP only)',
  });
  const noAddress = CARRIER_OFFER.replace('c=IN IP4 203.0.113.10\r\n', '');
  assert.deepEqual(negotiateSdpAnswer(noAddress, { address: 'x', port: 1 }), {
    ok: false,
    reason: 'no c= address for the audio stream',
  });
  assert.deepEqual(negotiateSdpAnswer('hello', { address: 'x', port: 1 }), {
    ok: false,
    reason: 'not an SDP body (no v=0 first)',
  });
  assert.deepEqual(negotiateSdpAnswer('v=0\r\ns=-\r\n', { address: 'x', port: 1 }), {
    ok: false,
    reason: 'the SDP has no m= line',
  });
});

test('an answer that refused our audio, or picked nothing we offered, is an SdpNegotiationError', () => {
  const refused = CARRIER_OFFER.replace('m=audio 31000', 'm=audio 0');
  assert.throws(
    () => parseSdpAnswer(refused),
    (error) => error instanceof SdpNegotiationError && /port 0/.test(error.message),
  );
  assert.throws(() => parseSdpAnswer(CARRIER_OFFER.replace('RTP/AVP 18 8 0 96', 'RTP/AVP 18')), /no common codec/);
});

test('mangled SDP is answered with a reason or a usable stream, never an exception', () => {
  let state = 99;
  const random = () => {
    state = (state * 1103515245 + 12345) & 0x7fffffff;
    return state;
  };
  const printable = ' 0123456789abcxyz=:/.\r\n-';
  for (let round = 0; round < 3000; round++) {
    const chars = [...CARRIER_OFFER];
    for (let edits = 1 + (random() % 4); edits > 0; edits--)
      chars[random() % chars.length] = printable[random() % printable.length]!;
    const result = negotiateSdpAnswer(chars.join(''), { address: '198.51.100.7', port: 40000 });
    if (!result.ok) continue;
    assert.ok(
      Number.isInteger(result.remote.port) && result.remote.port > 0 && result.remote.port <= 65535,
      `round ${round}`,
    );
    assert.ok(['PCMU', 'PCMA'].includes(result.remote.codec), `round ${round}`);
    assert.doesNotThrow(() => parseSdpAnswer(result.sdp), `round ${round}: our answer reads back`);
  }
  assert.deepEqual(
    negotiateSdpAnswer(CARRIER_OFFER.replace('m=audio 31000', 'm=audio 99999'), { address: 'x', port: 1 }),
    {
      ok: false,
      reason: 'bad audio port 99999',
    },
  );
  assert.deepEqual(
    negotiateSdpAnswer(CARRIER_OFFER.replace('c=IN IP4 203.0.113.10', 'c=IN IP4 sbc.example.com'), {
      address: 'x',
      port: 1,
    }),
    {
      ok: false,
      reason: 'the c= address is not an IP address: sbc.example.com',
    },
  );
});
