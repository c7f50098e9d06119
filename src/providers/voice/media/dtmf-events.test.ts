import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  buildDtmfPackets,
  createDtmfDecoder,
  decodeDtmfPayload,
  DtmfFormatError,
  encodeDtmfPayload,
  type DtmfDigit,
} from './dtmf-events.js';
import { parseRtp, type RtpPacketFields } from './rtp-packet.js';

function sequence(start: number) {
  let next = start;
  return () => {
    const taken = next;
    next = (next + 1) & 0xffff;
    return taken;
  };
}

const press = (digit: string, timestamp: number, takeSequenceNumber = sequence(0), durationMs = 100) =>
  buildDtmfPackets({ digit, timestamp, durationMs, ssrc: 9, takeSequenceNumber }).map(parseRtp);

const decodeAll = (packets: RtpPacketFields[]) => {
  const decoder = createDtmfDecoder();
  const digits: DtmfDigit[] = packets.flatMap((packet) => decoder.push(packet));
  return [...digits, ...decoder.flush()];
};

test('the payload is event, E|R|volume, 16-bit duration', () => {
  const bytes = encodeDtmfPayload({ event: 11, end: true, volume: 10, duration: 800 });
  assert.equal(Buffer.from(bytes).toString('hex'), '0b8a0320');
  assert.deepEqual(decodeDtmfPayload(bytes), { event: 11, end: true, volume: 10, duration: 800 });
  assert.deepEqual(decodeDtmfPayload(Uint8Array.of(5, 0x4a, 0, 160)), {
    event: 5,
    end: false,
    volume: 10,
    duration: 160,
  });
  assert.throws(() => decodeDtmfPayload(Uint8Array.of(1, 2)), DtmfFormatError);
});

test('a 100 ms press: updates every 20 ms, then the end packet three times', () => {
  const packets = press('5', 48_000, sequence(65533));
  const payloads = packets.map((p) => decodeDtmfPayload(p.payload));
  assert.deepEqual(
    payloads.map((p) => [p.event, p.end, p.duration]),
    [
      [5, false, 160],
      [5, false, 320],
      [5, false, 480],
      [5, false, 640],
      [5, true, 800],
      [5, true, 800],
      [5, true, 800],
    ],
  );
  assert.deepEqual(
    packets.map((p) => p.marker),
    [true, false, false, false, false, false, false],
  );
  assert.ok(packets.every((p) => p.timestamp === 48_000 && p.payloadType === 101 && p.ssrc === 9));
  // Every packet, the repeats too, takes the next sequence number, across the 16-bit wrap.
  assert.deepEqual(
    packets.map((p) => p.sequenceNumber),
    [65533, 65534, 65535, 0, 1, 2, 3],
  );
});

test('a press of one interval or less is only its three end packets', () => {
  const packets = press('#', 0, sequence(0), 20);
  assert.deepEqual(
    packets.map((p) => [decodeDtmfPayload(p.payload).end, p.marker]),
    [
      [true, true],
      [true, false],
      [true, false],
    ],
  );
});

test('what is not a digit or too long to send is refused', () => {
  assert.throws(() => press('x', 0), DtmfFormatError);
  assert.throws(() => press('12', 0), DtmfFormatError);
  assert.throws(() => press('1', 0, sequence(0), 9000), DtmfFormatError);
  assert.equal(press('d', 0).length, 7); // letters A-D in either case
});

test('a stream of presses decodes to each digit once, with its duration', () => {
  const take = sequence(100);
  const packets = [...press('1', 1000, take), ...press('*', 5000, take, 200), ...press('A', 9000, take)];
  const digits = decodeAll(packets);
  assert.deepEqual(
    digits.map((d) => [d.digit, d.timestamp, d.durationMs, d.volume]),
    [
      ['1', 1000, 100, 10],
      ['*', 5000, 200, 10],
      ['A', 9000, 100, 10],
    ],
  );
});

test('the same digit pressed twice is two digits (new timestamp), a replayed stream adds none', () => {
  const take = sequence(0);
  const packets = [...press('7', 0, take), ...press('7', 2000, take)];
  const decoder = createDtmfDecoder();
  assert.deepEqual(
    packets.flatMap((p) => decoder.push(p)).map((d) => d.digit),
    ['7', '7'],
  );
  assert.deepEqual(
    packets.flatMap((p) => decoder.push(p)),
    [],
  );
});

test('reordered, lost and duplicated packets still give each digit once', () => {
  const take = sequence(0);
  const first = press('3', 1000, take);
  const second = press('4', 3000, take);
  // The first press loses its marker packet and two of its end packets, and arrives shuffled;
  // the second loses every end packet: it is known when the stream ends.
  const packets = [first[2]!, first[1]!, first[4]!, first[3]!, first[4]!, second[0]!, second[1]!, first[2]!];
  assert.deepEqual(
    decodeAll(packets).map((d) => [d.digit, d.durationMs]),
    [
      ['3', 100],
      ['4', 40],
    ],
  );
});

test('an event whose end was lost is reported when the next begins', () => {
  const take = sequence(0);
  const first = press('8', 1000, take).slice(0, 3); // updates only
  const second = press('9', 3000, take);
  const decoder = createDtmfDecoder();
  assert.deepEqual(
    first.flatMap((p) => decoder.push(p)),
    [],
  );
  assert.deepEqual(
    decoder.push(second[0]!).map((d) => d.digit),
    ['8'],
  );
  assert.deepEqual(
    second
      .slice(1)
      .flatMap((p) => decoder.push(p))
      .map((d) => d.digit),
    ['9'],
  );
});

test('event timestamps compare across the 32-bit wrap', () => {
  const take = sequence(0);
  const packets = [...press('1', 0xffffff00, take), ...press('2', 0x100, take)];
  assert.deepEqual(
    decodeAll(packets).map((d) => d.digit),
    ['1', '2'],
  );
  // And a late update of the first, arriving after the second began, is ignored.
  const decoder = createDtmfDecoder();
  for (const p of packets) decoder.push(p);
  assert.deepEqual(decoder.push(packets[1]!), []);
});

test('events that are not digits (flash, 16) are ignored', () => {
  const decoder = createDtmfDecoder();
  const payload = encodeDtmfPayload({ event: 16, end: true, volume: 10, duration: 800 });
  assert.deepEqual(decoder.push({ timestamp: 0, payload }), []);
  assert.deepEqual(decoder.flush(), []);
});
