import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  decodeAlaw,
  decodeMulaw,
  encodeAlaw,
  encodeMulaw,
  encodeG711,
  G711_PAYLOAD_TYPES,
  g711ToPcm,
  pcmToG711,
} from './g711.js';

// Reference values from the CCITT/Sun reference coder (as Python's audioop implements it).
const SAMPLES = Int16Array.from([0, 1, 100, -100, 1000, -1000, 8000, -8000, 12345, -12345, 32767, -32768]);
const MULAW = [0xff, 0xff, 0xf2, 0x72, 0xce, 0x4e, 0xa0, 0x20, 0x97, 0x17, 0x80, 0x00];
const ALAW = [0xd5, 0xd5, 0xd3, 0x53, 0xfa, 0x7a, 0x8a, 0x0a, 0xbd, 0x3d, 0xaa, 0x2a];
const CODES = Uint8Array.from([0x00, 0x7f, 0x80, 0xff, 0x55, 0xd5, 0x2a, 0xaa, 0x10, 0x9c]);
const MULAW_LEVELS = [-32124, 0, 32124, 0, -716, 716, -5372, 5372, -15996, 9852];
const ALAW_LEVELS = [-5504, -848, 5504, 848, -8, 8, -32256, 32256, -2752, 3264];

test('μ-law and A-law encode the reference samples to the reference bytes', () => {
  assert.deepEqual([...encodeMulaw(SAMPLES)], MULAW);
  assert.deepEqual([...encodeAlaw(SAMPLES)], ALAW);
});

test('μ-law and A-law decode the reference bytes to the reference levels', () => {
  assert.deepEqual([...decodeMulaw(CODES)], MULAW_LEVELS);
  assert.deepEqual([...decodeAlaw(CODES)], ALAW_LEVELS);
});

test('every code survives decode then encode (μ-law has two zeros, both decode to 0)', () => {
  const all = Uint8Array.from({ length: 256 }, (_, i) => i);
  const mulaw = encodeMulaw(decodeMulaw(all));
  for (let code = 0; code < 256; code++) {
    assert.equal(mulaw[code], code === 0x7f ? 0xff : code, `μ-law ${code}`);
  }
  assert.deepEqual(encodeAlaw(decodeAlaw(all)), all);
});

test('the quantization error stays within the step of the segment (logarithmic: relative)', () => {
  const pcm = Int16Array.from({ length: 65536 }, (_, i) => i - 32768);
  for (const [name, back] of [
    ['μ-law', decodeMulaw(encodeMulaw(pcm))],
    ['A-law', decodeAlaw(encodeAlaw(pcm))],
  ] as const) {
    for (let i = 0; i < pcm.length; i++) {
      const x = pcm[i]!;
      // The steps double each segment: 1/16 of the magnitude plus the smallest step bounds the error.
      const bound = Math.abs(x) / 16 + 16;
      if (Math.abs(back[i]! - x) > bound) assert.fail(`${name}: ${x} came back as ${back[i]}`);
    }
  }
});

test('payload types are the static RTP ones', () => {
  assert.deepEqual(G711_PAYLOAD_TYPES, { pcmu: 0, pcma: 8 });
});

test('speech at 22,050 Hz comes down to 8 kHz before encoding, and back up on request', () => {
  const rate = 22_050;
  const tone = Int16Array.from({ length: rate }, (_, i) => Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / rate)));
  const bytes = pcmToG711('pcmu', tone, rate);
  assert.equal(bytes.length, 8000);
  const at8k = g711ToPcm('pcmu', bytes);
  assert.equal(at8k.length, 8000);
  const at16k = g711ToPcm('pcmu', bytes, 16_000);
  assert.equal(at16k.length, 16_000);
  // The tone's level survives (RMS of a sine of amplitude 8000 is ~5657).
  const rms = Math.sqrt(at8k.slice(400, 7600).reduce((sum, x) => sum + x * x, 0) / 7200);
  assert.ok(Math.abs(rms - 5657) < 300, `rms ${rms}`);
  // At 8 kHz nothing is resampled: encoding is the codec alone.
  const at8kInput = at8k.slice(0, 160);
  assert.deepEqual(pcmToG711('pcma', at8kInput, 8000), encodeG711('pcma', at8kInput));
});
