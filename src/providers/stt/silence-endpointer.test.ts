import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createSilenceEndpointer, isVoiced, rms, VOICED_RMS } from './silence-endpointer.js';

const RATE = 8000;
const tone = (ms: number, amplitude = 4000) =>
  Int16Array.from({ length: (RATE * ms) / 1000 }, (_, i) => amplitude * Math.sin((2 * Math.PI * 200 * i) / RATE));
const quiet = (ms: number) => new Int16Array((RATE * ms) / 1000);

describe('voiced frames', () => {
  test('speech-level audio is voiced; silence and line noise are not', () => {
    assert.equal(rms(quiet(10)), 0);
    assert.ok(isVoiced(tone(10)));
    assert.ok(!isVoiced(quiet(10)));
    assert.ok(!isVoiced(tone(10, VOICED_RMS))); // a sine's RMS is its amplitude / √2
    assert.ok(!isVoiced(new Int16Array(0)));
  });
});

describe('silence endpointer', () => {
  test('ends an utterance once the silence after it is long enough, at its last voiced frame', () => {
    const endpointer = createSilenceEndpointer({ sampleRate: RATE, silenceMs: 500 });
    assert.deepEqual(endpointer.push(quiet(200)), []);
    assert.deepEqual(endpointer.push(tone(300)), []);
    assert.deepEqual(endpointer.push(quiet(490)), [], 'not yet');
    assert.deepEqual(endpointer.push(quiet(10)), [500]);
    assert.deepEqual(endpointer.push(quiet(2000)), [], 'once');
    assert.equal(endpointer.positionMs, 3000);
  });

  test('audio split at any size gives the same ends as whole frames', () => {
    const audio = new Int16Array([...quiet(100), ...tone(400), ...quiet(700), ...tone(200), ...quiet(600)]);
    const whole = createSilenceEndpointer({ sampleRate: RATE, silenceMs: 500 }).push(audio);
    assert.deepEqual(whole, [500, 1400]);
    const pieces = createSilenceEndpointer({ sampleRate: RATE, silenceMs: 500 });
    const ends: number[] = [];
    for (let i = 0; i < audio.length; i += 37) ends.push(...pieces.push(audio.subarray(i, i + 37)));
    assert.deepEqual(ends, whole);
  });

  test('a click shorter than the shortest speech starts no utterance; pauses inside speech do not end it', () => {
    const endpointer = createSilenceEndpointer({ sampleRate: RATE, silenceMs: 300 });
    assert.deepEqual(endpointer.push(new Int16Array([...tone(20), ...quiet(1000)])), []);
    assert.deepEqual(
      endpointer.push(new Int16Array([...tone(200), ...quiet(250), ...tone(200), ...quiet(300)])),
      [1670],
    );
  });

  test('one signal per utterance, whoever says it first', () => {
    const endpointer = createSilenceEndpointer({ sampleRate: RATE, silenceMs: 500 });
    // The provider first: the silence then says nothing for that utterance.
    endpointer.push(tone(400));
    assert.equal(endpointer.providerEnded(380), true);
    assert.deepEqual(endpointer.push(quiet(600)), []);
    // The silence first (the audio runs ahead of the answers): the provider's end for it is a repeat.
    assert.deepEqual(endpointer.push(new Int16Array([...tone(300), ...quiet(600)])), [1300]);
    assert.equal(endpointer.providerEnded(1250), false);
    assert.equal(endpointer.providerEnded(1300), false, 'UtteranceEnd after speech_final');
    // A late provider end for an earlier utterance leaves the one under way to the silence.
    endpointer.push(tone(300));
    assert.equal(endpointer.providerEnded(1600), true);
    assert.deepEqual(endpointer.push(quiet(500)), [2200]);
  });
});
