import { test } from 'node:test';
import assert from 'node:assert/strict';
import wavefile from 'wavefile';
import { decodeWav, durationMs, encodeWav, mixStereoRecording, resample, toMono, WavFormatError } from './wav.js';

// wavefile ships CommonJS: its class comes off the default export.
const { WaveFile } = wavefile;

function tone(frequency: number, sampleRate: number, seconds: number, amplitude = 10_000): Int16Array {
  const samples = new Int16Array(Math.round(sampleRate * seconds));
  for (let i = 0; i < samples.length; i++)
    samples[i] = Math.round(amplitude * Math.sin((2 * Math.PI * frequency * i) / sampleRate));
  return samples;
}

function rms(samples: ArrayLike<number>, from = 0, to = samples.length): number {
  let sum = 0;
  for (let i = from; i < to; i++) sum += samples[i]! ** 2;
  return Math.sqrt(sum / (to - from));
}

/** Frequency from upward zero crossings, away from the edges. */
function frequencyOf(samples: Int16Array, sampleRate: number): number {
  const from = Math.floor(samples.length * 0.1);
  const to = Math.floor(samples.length * 0.9);
  let crossings = 0;
  for (let i = from + 1; i < to; i++) if (samples[i - 1]! < 0 && samples[i]! >= 0) crossings++;
  return crossings / ((to - from) / sampleRate);
}

test('a mono 8 kHz and a two-channel 16 kHz WAV read back in an independent parser with the right format and length', () => {
  for (const [channels, sampleRate, seconds] of [
    [1, 8000, 1.5],
    [2, 16000, 0.75],
  ] as const) {
    const frames = tone(440, sampleRate, seconds);
    const samples =
      channels === 1
        ? frames
        : new Int16Array(frames.length * 2).map((_, i) => (i % 2 === 0 ? frames[i >> 1]! : -frames[i >> 1]!));
    const file = encodeWav({ samples, sampleRate, channels });

    const wav = new WaveFile(file);
    const fmt = wav.fmt as {
      audioFormat: number;
      numChannels: number;
      sampleRate: number;
      bitsPerSample: number;
      byteRate: number;
      blockAlign: number;
    };
    assert.deepEqual(
      {
        audioFormat: fmt.audioFormat,
        numChannels: fmt.numChannels,
        sampleRate: fmt.sampleRate,
        bitsPerSample: fmt.bitsPerSample,
      },
      { audioFormat: 1, numChannels: channels, sampleRate, bitsPerSample: 16 },
    );
    assert.equal(fmt.byteRate, sampleRate * channels * 2);
    assert.equal(fmt.blockAlign, channels * 2);
    const dataBytes = (wav.data as { chunkSize: number }).chunkSize;
    assert.equal(dataBytes, seconds * sampleRate * channels * 2, 'data length matches the duration');
    assert.equal(file.length, 44 + dataBytes);
    assert.equal(file.readUInt32LE(4), file.length - 8, 'RIFF size');
    const parsed = wav.getSamples(true, Int16Array) as unknown as Int16Array;
    assert.deepEqual(Array.from(parsed.slice(0, 8)), Array.from(samples.slice(0, 8)));

    const decoded = decodeWav(file);
    assert.equal(decoded.channels, channels);
    assert.equal(decoded.sampleRate, sampleRate);
    assert.deepEqual(decoded.samples, samples);
    assert.equal(durationMs(decoded), seconds * 1000);
  }
});

test('the reader skips extra chunks, takes a streaming length as "to the end", and refuses what it cannot read', () => {
  const other = new WaveFile();
  other.fromScratch(1, 22050, '16', Array.from(tone(300, 22050, 0.1)));
  other.setTag('ISFT', 'a test encoder'); // adds a LIST chunk before data
  const withList = decodeWav(other.toBuffer());
  assert.equal(withList.sampleRate, 22050);
  assert.equal(withList.samples.length, 2205);

  const streamed = encodeWav({ samples: tone(300, 24000, 0.05), sampleRate: 24000, channels: 1 });
  streamed.writeUInt32LE(0xffff_ffff, 40);
  streamed.writeUInt32LE(0xffff_ffff, 4);
  assert.equal(decodeWav(streamed).samples.length, 1200);

  assert.throws(() => decodeWav(Buffer.from('ID3 not a wav at all')), WavFormatError);
  const eightBit = new WaveFile();
  eightBit.fromScratch(1, 8000, '8', [128, 130, 126]);
  assert.throws(() => decodeWav(eightBit.toBuffer()), /only 16-bit PCM/);
  assert.throws(() => encodeWav({ samples: new Int16Array(3), sampleRate: 8000, channels: 2 }), /L\/R pairs/);
  assert.throws(() => encodeWav({ samples: new Int16Array(2), sampleRate: 0, channels: 1 }), /sample rate/);
});

test('resampling keeps the pitch and level of speech-band tones and removes what the new rate cannot carry', () => {
  const source = tone(440, 22050, 1);
  const down = resample(source, 22050, 8000);
  assert.equal(down.length, 8000);
  assert.ok(Math.abs(frequencyOf(down, 8000) - 440) < 3, `440 Hz stays 440 Hz (${frequencyOf(down, 8000)})`);
  const level = rms(down, 400, 7600) / rms(source, 1100, 20950);
  assert.ok(level > 0.97 && level < 1.03, `level kept (${level})`);

  // 6 kHz is above 8 kHz's Nyquist (4 kHz): without filtering it would fold back to 2 kHz at full level.
  const high = resample(tone(6000, 22050, 1), 22050, 8000);
  assert.ok(rms(high, 400, 7600) / 7071 < 0.02, `6 kHz filtered out (${rms(high, 400, 7600) / 7071})`);

  const up = resample(tone(1000, 8000, 0.5), 8000, 16000);
  assert.equal(up.length, 8000);
  assert.ok(Math.abs(frequencyOf(up, 16000) - 1000) < 5);

  const same = tone(100, 16000, 0.1);
  assert.deepEqual(resample(same, 16000, 16000), same);
  assert.notEqual(resample(same, 16000, 16000), same, 'a copy, not the same array');
  assert.deepEqual(resample(new Int16Array(0), 24000, 8000), new Int16Array(0));
  // Full-scale input does not wrap around (past the ends the input counts as silence, so look inside).
  const loud = resample(new Int16Array(4000).fill(32767), 24000, 8000);
  assert.ok(loud.slice(20, -20).every((sample) => sample >= 32000));
});

test('the two-channel recording puts agent clips left and callee clips right at their offsets', () => {
  const agentClip = tone(500, 22050, 0.5); // TTS rate, resampled to the recording's
  const calleeClip = tone(800, 8000, 0.25);
  const recording = mixStereoRecording({
    sampleRate: 8000,
    agent: [
      { pcm: agentClip, sampleRate: 22050, atMs: 0 },
      { pcm: agentClip, sampleRate: 22050, atMs: 1500 },
    ],
    callee: [{ pcm: calleeClip, sampleRate: 8000, atMs: 600 }],
  });
  assert.equal(recording.channels, 2);
  assert.equal(recording.sampleRate, 8000);
  assert.equal(durationMs(recording), 2000, 'ends with the last clip');

  const left = recording.samples.filter((_, i) => i % 2 === 0);
  const right = recording.samples.filter((_, i) => i % 2 === 1);
  const at = (ms: number) => Math.round((ms * 8000) / 1000);
  assert.ok(rms(left, at(50), at(450)) > 6000, 'agent speaks at 0 ms on the left');
  assert.ok(rms(right, at(50), at(450)) === 0, '...and nothing on the right');
  assert.ok(rms(right, at(620), at(830)) > 6000, 'callee at 600-850 ms on the right');
  assert.ok(rms(left, at(620), at(830)) === 0);
  assert.ok(rms(left, at(900), at(1400)) === 0, 'silence between turns');
  assert.ok(rms(left, at(1550), at(1950)) > 6000, 'second agent clip at 1500 ms');
  assert.ok(Math.abs(frequencyOf(new Int16Array(left.slice(at(1500), at(2000))), 8000) - 500) < 10);

  // The file is a valid two-channel WAV of that length.
  const wav = new WaveFile(encodeWav(recording));
  assert.equal((wav.fmt as { numChannels: number }).numChannels, 2);
  assert.equal((wav.data as { chunkSize: number }).chunkSize, 2 * 8000 * 2 * 2);

  // A fixed duration pads with silence or cuts a clip that runs past it; overlapping clips are mixed, clipped.
  const padded = mixStereoRecording({ sampleRate: 16000, agent: [], callee: [], durationMs: 250 });
  assert.equal(padded.samples.length, 4000 * 2);
  const loud = new Int16Array(100).fill(30000);
  const overlap = mixStereoRecording({
    sampleRate: 8000,
    agent: [
      { pcm: loud, sampleRate: 8000, atMs: 0 },
      { pcm: loud, sampleRate: 8000, atMs: 0 },
    ],
    callee: [],
    durationMs: 5,
  });
  assert.equal(overlap.samples.length, 40 * 2);
  assert.equal(overlap.samples[0], 32767);
  assert.throws(() => mixStereoRecording({ sampleRate: 44100 as 8000, agent: [], callee: [] }), /8000 or 16000/);
  assert.throws(
    () => mixStereoRecording({ sampleRate: 8000, agent: [{ pcm: loud, sampleRate: 8000, atMs: -1 }], callee: [] }),
    />= 0 ms/,
  );

  const mono = toMono({ samples: Int16Array.from([100, 300, -100, -300]), sampleRate: 8000, channels: 2 });
  assert.deepEqual(mono, { samples: Int16Array.from([200, -200]), sampleRate: 8000, channels: 1 });
});
