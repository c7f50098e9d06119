import { test } from 'node:test';
import assert from 'node:assert/strict';
import { encodeMulaw } from '../media/g711.js';
import {
  clearMessage,
  encodeStreamMessage,
  inboundMedia,
  MAX_STREAM_MESSAGE_BYTES,
  mediaPayload,
  mediaPcm,
  MULAW_FRAME_BYTES,
  mulawFrames,
  outboundMark,
  outboundMedia,
  parseAppMessage,
  parseCarrierMessage,
  pcmToMulawFrames,
} from './media-stream-messages.js';

// The messages as the carrier's documentation shows them.
const DOCUMENTED = {
  connected: '{"event":"connected","protocol":"Call","version":"1.0.0"}',
  start: JSON.stringify({
    event: 'start',
    sequenceNumber: '1',
    start: {
      accountSid: 'ACxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx',
      streamSid: 'MZ18ad3ab5a668481ce02b83e7395059f0',
      callSid: 'CAxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx',
      tracks: ['inbound'],
      mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
      customParameters: { FirstName: 'Jane', LastName: 'Doe' },
    },
    streamSid: 'MZ18ad3ab5a668481ce02b83e7395059f0',
  }),
  media: JSON.stringify({
    event: 'media',
    sequenceNumber: '3',
    media: {
      track: 'inbound',
      chunk: '1',
      timestamp: '5',
      payload: 'no+JhoaJjpzSHxAKBgYJDhtEopGKh4aIjZm7JhILBwYIDRg1qZSLh4aHjJOsLBUMCAYHCxUqrpaMiIaHi5Gl',
    },
    streamSid: 'MZ18ad3ab5a668481ce02b83e7395059f0',
  }),
  dtmf: JSON.stringify({
    event: 'dtmf',
    streamSid: 'MZ18ad3ab5a668481ce02b83e7395059f0',
    sequenceNumber: '5',
    dtmf: { track: 'inbound_track', digit: '1' },
  }),
  mark: JSON.stringify({
    event: 'mark',
    sequenceNumber: '4',
    streamSid: 'MZ18ad3ab5a668481ce02b83e7395059f0',
    mark: { name: 'my label' },
  }),
  stop: JSON.stringify({
    event: 'stop',
    sequenceNumber: '5',
    stop: { accountSid: 'ACxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx', callSid: 'CAxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx' },
    streamSid: 'MZ18ad3ab5a668481ce02b83e7395059f0',
  }),
};

test('every documented carrier message parses to its event, and encodes back to the same JSON', () => {
  for (const [event, text] of Object.entries(DOCUMENTED)) {
    const parsed = parseCarrierMessage(text);
    assert.ok(parsed.ok, `${event}: ${parsed.ok ? '' : parsed.error}`);
    assert.equal(parsed.message.event, event);
    assert.deepEqual(JSON.parse(encodeStreamMessage(parsed.message)), JSON.parse(text));
  }
  const start = parseCarrierMessage(Buffer.from(DOCUMENTED.start));
  assert.ok(start.ok && start.message.event === 'start');
  assert.deepEqual(start.message.start.customParameters, { FirstName: 'Jane', LastName: 'Doe' });
});

test('fields the documentation does not list are tolerated (carriers add some)', () => {
  const parsed = parseCarrierMessage(JSON.stringify({ ...JSON.parse(DOCUMENTED.connected), extra: 1 }));
  assert.ok(parsed.ok);
});

test('invalid messages are clear errors, never exceptions', () => {
  const cases: [string, RegExp][] = [
    ['not json', /not JSON/],
    ['[1,2]', /not a JSON object/],
    ['null', /not a JSON object/],
    ['{"streamSid":"MZ1"}', /no "event"/],
    ['{"event":"hangup"}', /unknown event "hangup"/],
    ['{"event":"__proto__"}', /unknown event/],
    ['{"event":"toString"}', /unknown event/],
    [DOCUMENTED.start.replace('audio/x-mulaw', 'audio/l16'), /"start" is invalid at \/start\/mediaFormat\/encoding/],
    [DOCUMENTED.start.replace('8000', '16000'), /"start" is invalid at \/start\/mediaFormat\/sampleRate/],
    [DOCUMENTED.media.replace('"chunk":"1"', '"chunk":1'), /"media" is invalid at \/media\/chunk/],
    [DOCUMENTED.media.replace('no+J', 'no!J'), /"media" is invalid at \/media\/payload/],
    [DOCUMENTED.media.replace('"track":"inbound"', '"track":"sideways"'), /"media" is invalid at \/media\/track/],
    [DOCUMENTED.dtmf.replace('"digit":"1"', '"digit":"12"'), /"dtmf" is invalid at \/dtmf\/digit/],
    [
      '{"event":"stop","sequenceNumber":"5","streamSid":"MZ1"}',
      /"stop" is invalid at \/: must have required properties stop/,
    ],
    [
      `{"event":"connected","protocol":"${'x'.repeat(MAX_STREAM_MESSAGE_BYTES)}","version":"1"}`,
      /over the 65536-byte limit/,
    ],
  ];
  for (const [text, error] of cases) {
    const parsed = parseCarrierMessage(text);
    assert.equal(parsed.ok, false, text.slice(0, 80));
    assert.match(parsed.ok ? '' : parsed.error, error);
  }
  // Our own messages are not carrier messages, and the other way round.
  assert.equal(parseCarrierMessage(encodeStreamMessage(clearMessage('MZ1'))).ok, false);
  assert.equal(parseAppMessage(DOCUMENTED.media).ok, false);
  assert.equal(parseAppMessage(DOCUMENTED.stop).ok, false);
});

test('outbound media, mark and clear have the documented shape and parse back', () => {
  const frame = new Uint8Array(MULAW_FRAME_BYTES).map((_, i) => i);
  const media = outboundMedia('MZ1', frame);
  assert.deepEqual(JSON.parse(encodeStreamMessage(media)), {
    event: 'media',
    streamSid: 'MZ1',
    media: { payload: Buffer.from(frame).toString('base64') },
  });
  assert.deepEqual(JSON.parse(encodeStreamMessage(outboundMark('MZ1', 'turn-3'))), {
    event: 'mark',
    streamSid: 'MZ1',
    mark: { name: 'turn-3' },
  });
  assert.deepEqual(JSON.parse(encodeStreamMessage(clearMessage('MZ1'))), { event: 'clear', streamSid: 'MZ1' });

  const parsed = parseAppMessage(encodeStreamMessage(media));
  assert.ok(parsed.ok && parsed.message.event === 'media');
  assert.deepEqual(mediaPayload(parsed.message), frame);
  assert.ok(parseAppMessage(encodeStreamMessage(clearMessage('MZ1'))).ok);
});

test('20 ms of μ-law becomes a carrier media message and back, byte for byte', () => {
  const frame = new Uint8Array(MULAW_FRAME_BYTES).map((_, i) => (i * 37) & 0xff);
  const message = inboundMedia({ streamSid: 'MZ1', sequenceNumber: 7, chunk: 6, timestampMs: 100 }, frame);
  assert.deepEqual({ ...message.media, payload: '' }, { track: 'inbound', chunk: '6', timestamp: '100', payload: '' });
  assert.equal(message.sequenceNumber, '7');
  const parsed = parseCarrierMessage(encodeStreamMessage(message));
  assert.ok(parsed.ok && parsed.message.event === 'media');
  assert.deepEqual(mediaPayload(parsed.message), frame);
});

test('audio is cut into 20 ms frames, the last padded with μ-law silence; PCM goes through G.711', () => {
  const frames = mulawFrames(new Uint8Array(400).fill(0x10));
  assert.deepEqual(
    frames.map((frame) => frame.length),
    [160, 160, 160],
  );
  assert.equal(frames[2]![79], 0x10);
  assert.equal(frames[2]![80], 0xff);
  assert.deepEqual(mulawFrames(new Uint8Array(0)), []);

  // 40 ms of a tone at 16 kHz: two frames at 8 kHz, and the samples come back within μ-law's error.
  const pcm = Int16Array.from({ length: 640 }, (_, i) => Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 16000)));
  const pcmFrames = pcmToMulawFrames(pcm, 16000);
  assert.equal(pcmFrames.length, 2);
  const at8k = Int16Array.from({ length: 160 }, (_, i) => Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 8000)));
  const decoded = mediaPcm(outboundMedia('MZ1', encodeMulaw(at8k)));
  assert.equal(decoded.length, 160);
  for (let i = 0; i < 160; i++) assert.ok(Math.abs(decoded[i]! - at8k[i]!) <= 300, `sample ${i}`);
  assert.equal(mediaPcm(outboundMedia('MZ1', encodeMulaw(at8k)), 16000).length, 320);
});
