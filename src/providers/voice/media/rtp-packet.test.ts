import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildRtp, parseRtp, RtpFormatError } from './rtp-packet.js';

const hex = (text: string) => Uint8Array.from(Buffer.from(text.replace(/\s+/g, ''), 'hex'));
const toHex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');

// A PCMU packet as a SIP trunk sends it: V=2, PT 0, seq 8000, ts 40960, SSRC deadbeef, 160 bytes of silence.
const PCMU_PACKET = `80001f40 0000a000 deadbeef ${'ff'.repeat(160)}`;

// Every optional part at once: P=1, X=1, CC=2; M=1, PT 8; seq 65535, ts 0xfffffff0; two CSRCs; a one-byte
// header extension (id 1, one byte 0xab, two alignment bytes); 3 payload bytes; 3 padding bytes.
const FULL_PACKET = `b288ffff fffffff0 01020304 11111111 22222222 bede0001 10ab0000 d5d5d5 000003`;

test('a captured PCMU packet parses field by field', () => {
  const fields = parseRtp(hex(PCMU_PACKET));
  assert.equal(fields.payloadType, 0);
  assert.equal(fields.marker, false);
  assert.equal(fields.sequenceNumber, 8000);
  assert.equal(fields.timestamp, 40960);
  assert.equal(fields.ssrc, 0xdeadbeef);
  assert.deepEqual(fields.csrcs, []);
  assert.equal(fields.extensions.size, 0);
  assert.equal(fields.padding, 0);
  assert.equal(fields.payload.length, 160);
  assert.ok(fields.payload.every((byte) => byte === 0xff));
});

test('building the same fields gives the captured bytes, byte for byte', () => {
  const bytes = buildRtp({
    payloadType: 0,
    sequenceNumber: 8000,
    timestamp: 40960,
    ssrc: 0xdeadbeef,
    payload: new Uint8Array(160).fill(0xff),
  });
  assert.equal(toHex(bytes), PCMU_PACKET.replace(/\s+/g, ''));
});

test('CSRCs, marker, a header extension and padding parse', () => {
  const fields = parseRtp(hex(FULL_PACKET));
  assert.equal(fields.payloadType, 8);
  assert.equal(fields.marker, true);
  assert.equal(fields.sequenceNumber, 65535);
  assert.equal(fields.timestamp, 0xfffffff0);
  assert.equal(fields.ssrc, 0x01020304);
  assert.deepEqual(fields.csrcs, [0x11111111, 0x22222222]);
  assert.deepEqual([...fields.extensions.keys()], [1]);
  assert.equal(toHex(fields.extensions.get(1)!), 'ab');
  assert.equal(toHex(fields.payload), 'd5d5d5');
  assert.equal(fields.padding, 3);
});

test('every field survives build then parse, padding to 4 bytes sets the P bit', () => {
  const input = {
    payloadType: 101,
    marker: true,
    sequenceNumber: 12345,
    timestamp: 0x89abcdef,
    ssrc: 0xfedcba98,
    csrcs: [1, 2, 3],
    extensions: new Map([
      [1, Uint8Array.of(7)],
      [3, Uint8Array.of(1, 2, 3, 4)],
    ]),
    payload: Uint8Array.of(9, 8, 7),
    padTo4Bytes: true,
  };
  const bytes = buildRtp(input);
  assert.equal(bytes.length % 4, 0);
  assert.equal(bytes[0]! & 0x20, 0x20, 'P bit');
  const fields = parseRtp(bytes);
  assert.equal(fields.payloadType, 101);
  assert.equal(fields.marker, true);
  assert.equal(fields.sequenceNumber, 12345);
  assert.equal(fields.timestamp, 0x89abcdef);
  assert.equal(fields.ssrc, 0xfedcba98);
  assert.deepEqual(fields.csrcs, [1, 2, 3]);
  assert.deepEqual(
    [...fields.extensions].map(([id, value]) => [id, [...value]]),
    [
      [1, [7]],
      [3, [1, 2, 3, 4]],
    ],
  );
  assert.deepEqual([...fields.payload], [9, 8, 7]);
  assert.ok(fields.padding > 0);
});

test('extensions that do not fit the one-byte form use the two-byte form', () => {
  const fields = parseRtp(
    buildRtp({
      payloadType: 0,
      sequenceNumber: 1,
      timestamp: 1,
      ssrc: 1,
      extensions: new Map([[20, new Uint8Array(40).fill(5)]]),
    }),
  );
  assert.equal(fields.extensions.get(20)?.length, 40);
});

test('sequence numbers and timestamps beyond their width wrap when built', () => {
  const fields = parseRtp(buildRtp({ payloadType: 0, sequenceNumber: 65536 + 5, timestamp: 2 ** 32 + 7, ssrc: 1 }));
  assert.equal(fields.sequenceNumber, 5);
  assert.equal(fields.timestamp, 7);
});

test('a payload type beyond 7 bits is refused rather than truncated', () => {
  assert.throws(() => buildRtp({ payloadType: 128, sequenceNumber: 0, timestamp: 0, ssrc: 0 }), RtpFormatError);
});

test('what is not RTP is refused with RtpFormatError', () => {
  assert.throws(() => parseRtp(hex('80001f40')), RtpFormatError); // shorter than the fixed header
  assert.throws(() => parseRtp(hex(`40001f40 0000a000 deadbeef ff`)), RtpFormatError); // version 1
  assert.throws(() => parseRtp(hex(`a0001f40 0000a000 deadbeef ff09`)), RtpFormatError); // padding past the payload
  assert.throws(() => parseRtp(hex(`82001f40 0000a000 deadbeef 00000001`)), RtpFormatError); // CSRCs missing
});
