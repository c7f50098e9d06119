import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { type FakeDeepgram, startFakeDeepgram } from '../../../test/fixtures/deepgram-server.js';
import { resample } from '../../lib/wav.js';
import { isProviderError } from '../provider-error.js';
import { providerErrorOf } from '../../../test/provider-errors.js';
import { createEspeakTts } from '../tts/index.js';
import {
  createDeepgramStt,
  type DeepgramSttOptions,
  type SttEvent,
  type SttOpenOptions,
  type SttSession,
} from './index.js';

const RATE = 8000;
const FRAME = RATE / 50; // 20 ms, as a phone line sends it

const tts = createEspeakTts();
const spoken = new Map<string, Int16Array>();

/** Real speech at 8 kHz (espeak-ng); a voiced 1.2 s buzz where the optional engine is not installed. */
async function speech(text: string): Promise<Int16Array> {
  const cached = spoken.get(text);
  if (cached) return cached;
  let pcm: Int16Array;
  try {
    const voice = await tts.synthesize(text, 'en-us');
    pcm = resample(voice.pcm, voice.sampleRate, RATE);
  } catch (error) {
    if (!isProviderError(error, 'unavailable')) throw error;
    pcm = Int16Array.from({ length: 1.2 * RATE }, (_, i) => 6000 * Math.sin((2 * Math.PI * 180 * i) / RATE));
  }
  spoken.set(text, pcm);
  return pcm;
}

const silence = (ms: number) => new Int16Array((RATE * ms) / 1000);

function join(...parts: Int16Array[]): Int16Array {
  const all = new Int16Array(parts.reduce((sum, part) => sum + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    all.set(part, offset);
    offset += part.length;
  }
  return all;
}

function sendInFrames(session: SttSession, pcm: Int16Array) {
  for (let i = 0; i < pcm.length; i += FRAME) session.send(pcm.subarray(i, i + FRAME));
}

/** Every event of a session, and a way to wait for one. */
function recorder() {
  const events: SttEvent[] = [];
  let waiters: { match: (event: SttEvent) => boolean; resolve: (event: SttEvent) => void }[] = [];
  return {
    events,
    onEvent(event: SttEvent) {
      events.push(event);
      const pending = waiters;
      waiters = [];
      for (const waiter of pending) {
        if (waiter.match(event)) waiter.resolve(event);
        else waiters.push(waiter);
      }
    },
    /** The count-th event (1-based) that matches, already seen or still to come. */
    waitFor(match: (event: SttEvent) => boolean, count = 1): Promise<SttEvent> {
      const seen = events.filter(match);
      if (seen.length >= count) return Promise.resolve(seen[count - 1]!);
      let remaining = count - seen.length;
      return new Promise((resolve) =>
        waiters.push({
          match: (event) => match(event) && --remaining === 0,
          resolve,
        }),
      );
    },
  };
}

const isFinalText = (event: SttEvent) => event.type === 'transcript' && event.isFinal && event.text !== '';
const isEnd = (event: SttEvent) => event.type === 'utterance_end';
const isError = (event: SttEvent) => event.type === 'error';
const finals = (events: SttEvent[]) => events.filter(isFinalText) as Extract<SttEvent, { type: 'transcript' }>[];
const ends = (events: SttEvent[]) => events.filter(isEnd) as Extract<SttEvent, { type: 'utterance_end' }>[];

describe('deepgram adapter against a local server speaking its protocol', () => {
  let server: FakeDeepgram;
  const HELLO = 'Hello, I would like to book an appointment';
  const TUESDAY = 'Tuesday morning works for me.';

  before(async () => {
    server = await startFakeDeepgram();
  });
  after(async () => {
    await server.close();
    await tts.close();
  });
  beforeEach(() => {
    server.script = [];
    server.dropAfterMs = null;
    server.malformedReply = null;
    server.ignoreCloseStream = false;
  });

  const stt = (options: Partial<DeepgramSttOptions> = {}) =>
    createDeepgramStt({ baseUrl: server.url, apiKey: server.apiKey, model: 'nova-2-phonecall', ...options });
  const open = (rec: ReturnType<typeof recorder>, options: Partial<SttOpenOptions> = {}, adapter = stt()) =>
    adapter.open({ sampleRate: RATE, endpointingMs: 300, onEvent: rec.onEvent, ...options });

  test('one utterance: interim results, then the scripted text as final, then the end of the utterance', async () => {
    server.script.push(HELLO);
    const rec = recorder();
    const session = await open(rec);
    const audio = join(silence(200), await speech(HELLO.replace(',', '')), silence(600));
    sendInFrames(session, audio);

    const end = await rec.waitFor(isEnd);
    assert.deepEqual(end, { type: 'utterance_end', atMs: finals(rec.events)[0]!.endMs, source: 'provider' });
    const transcripts = rec.events.filter((event) => event.type === 'transcript');
    const firstFinal = transcripts.findIndex((event) => event.isFinal);
    assert.ok(firstFinal > 0, 'interim results come first');
    assert.ok(transcripts.slice(0, firstFinal).every((event) => !event.isFinal && HELLO.startsWith(event.text)));
    const [final] = finals(rec.events);
    assert.equal(final!.text, HELLO);
    assert.equal(final!.confidence, 0.98);
    assert.ok(final!.startMs >= 200 && final!.startMs < 400, `speech starts at ${final!.startMs} ms`);
    assert.ok(final!.endMs > final!.startMs + 1000);
    assert.equal(final!.words.length, 8);
    assert.equal(final!.words[0]!.word, 'Hello,');
    assert.equal(final!.words.at(-1)!.endMs, final!.endMs);

    await session.finish();
    assert.equal(session.audioSeconds, audio.length / RATE);
    const stream = server.streams.at(-1)!;
    assert.equal(stream.audioBytes, audio.length * 2, 'linear16 by default');
    assert.deepEqual(Object.fromEntries(stream.query), {
      encoding: 'linear16',
      sample_rate: '8000',
      channels: '1',
      interim_results: 'true',
      endpointing: '300',
      model: 'nova-2-phonecall',
    });
    assert.deepEqual(stream.controls, ['{"type":"CloseStream"}']);
    assert.equal(ends(rec.events).length, 1, 'one end per utterance');
  });

  test('two utterances apart (μ-law on the wire): two finals, two ends, in order', async () => {
    server.script.push(HELLO, TUESDAY);
    const rec = recorder();
    const session = await open(rec, {}, stt({ encoding: 'mulaw' }));
    // espeak-ng ends each sentence with ~0.3 s of silence: the gaps are ~0.7 s, under the 1 s fallback.
    const audio = join(await speech(HELLO), silence(400), await speech(TUESDAY), silence(400));
    sendInFrames(session, audio);
    await rec.waitFor(isEnd, 2);

    const order = rec.events.filter((event) => isFinalText(event) || isEnd(event));
    assert.deepEqual(
      order.map((event) => (event.type === 'transcript' ? event.text : event.type)),
      [HELLO, 'utterance_end', TUESDAY, 'utterance_end'],
    );
    const [first, second] = finals(rec.events);
    assert.ok(second!.startMs > first!.endMs + 300);
    await session.finish();
    assert.equal(server.streams.at(-1)!.audioBytes, audio.length, 'one byte a sample');
    assert.equal(server.streams.at(-1)!.query.get('encoding'), 'mulaw');
    assert.equal(session.audioSeconds, audio.length / RATE);
  });

  test('finish() flushes the utterance still under way and waits for its final result', async () => {
    server.script.push(TUESDAY);
    const rec = recorder();
    const session = await open(rec, { endpointingMs: 1000 });
    sendInFrames(session, await speech(TUESDAY)); // its trailing silence is shorter than the endpointing
    await session.finish();
    assert.deepEqual(
      finals(rec.events).map((event) => event.text),
      [TUESDAY],
    );
    assert.deepEqual(
      ends(rec.events).map((event) => event.source),
      ['finish'],
    );
    assert.equal(rec.events.at(-1)!.type, 'utterance_end');
    await session.finish(); // a second finish is harmless
    assert.throws(() => session.send(silence(20)), /finished/);
  });

  test('the silence fallback ends an utterance the provider has not, and the provider does not end it twice', async () => {
    server.script.push(HELLO);
    const rec = recorder();
    const session = await open(rec, { endpointingMs: 2000, silenceFallbackMs: 500 });
    sendInFrames(session, join(await speech(HELLO), silence(800)));
    // The local fallback answers as the silence is sent, before any result.
    assert.deepEqual(
      ends(rec.events).map((event) => event.source),
      ['silence'],
    );
    await session.finish();
    assert.deepEqual(
      finals(rec.events).map((event) => event.text),
      [HELLO],
    );
    assert.equal(ends(rec.events).length, 1);
  });

  test('speech_final and a later UtteranceEnd for the same words give one end', async () => {
    server.script.push(TUESDAY);
    const rec = recorder();
    const session = await open(rec, { silenceFallbackMs: 3000 }, stt({ utteranceEndMs: 1000 }));
    sendInFrames(session, join(await speech(TUESDAY), silence(1200)));
    await session.finish();
    const stream = server.streams.at(-1)!;
    assert.equal(stream.query.get('utterance_end_ms'), '1000');
    assert.ok(
      stream.sent.some((text) => text.includes('"UtteranceEnd"')),
      'the server sent both',
    );
    assert.deepEqual(
      ends(rec.events).map((event) => event.source),
      ['provider'],
    );
  });

  test('KeepAlive goes up while no audio flows', async () => {
    const rec = recorder();
    const session = await open(rec, {}, stt({ keepAliveMs: 20 }));
    await server.nextControl('KeepAlive');
    await session.finish();
    assert.deepEqual(rec.events, []);
  });

  test('a refused key is a clear error at open, without the key in it', async () => {
    const error = await providerErrorOf(open(recorder(), {}, stt({ apiKey: 'wrong-secret-key' })));
    assert.equal(error.code, 'invalid_request');
    assert.equal(error.status, 401);
    assert.match(error.message, /refused the API key \(401\): Invalid credentials/);
    assert.doesNotMatch(error.message, /wrong-secret-key/);
  });

  test('the server dropping the connection mid-stream is an error event and a failed finish, not a hang', async () => {
    server.script.push(HELLO);
    server.dropAfterMs = 500;
    const rec = recorder();
    const session = await open(rec);
    sendInFrames(session, join(await speech(HELLO), silence(600)));
    const event = await rec.waitFor(isError);
    assert.ok(event.type === 'error');
    assert.equal(event.error.code, 'network');
    assert.match(event.error.message, /connection was lost/);
    assert.equal(await providerErrorOf(session.finish()), event.error);
    assert.throws(() => session.send(silence(20)), /connection was lost/);
    assert.equal(rec.events.filter(isError).length, 1);
  });

  test('a server that never closes the stream makes finish() fail with a timeout, not hang', async () => {
    server.ignoreCloseStream = true;
    const rec = recorder();
    const session = await open(rec, {}, stt({ timeoutMs: 50 }));
    sendInFrames(session, silence(100));
    const error = await providerErrorOf(session.finish());
    assert.equal(error.code, 'timeout');
    assert.deepEqual(rec.events, [{ type: 'error', error }]);
  });

  test('a message outside the protocol is a bad_response error', async () => {
    server.script.push(HELLO);
    server.malformedReply = '{"type":"Results","channel":{}}';
    const rec = recorder();
    const session = await open(rec);
    sendInFrames(session, await speech(HELLO));
    const event = await rec.waitFor(isError);
    assert.ok(event.type === 'error');
    assert.equal(event.error.code, 'bad_response');
    assert.match(event.error.message, /channel\.alternatives\[0\]\.transcript/);
    await providerErrorOf(session.finish());
  });

  test('abort() drops the stream at once; finish() then fails as aborted', async () => {
    const rec = recorder();
    const session = await open(rec);
    sendInFrames(session, silence(100));
    const finishing = session.finish();
    session.abort();
    assert.equal((await providerErrorOf(finishing)).code, 'aborted');
    assert.equal((await providerErrorOf(session.finish())).code, 'aborted');
    assert.throws(() => session.send(silence(20)), /aborted/);
    assert.deepEqual(rec.events, []);
  });

  test('refused before connecting: a rate that is not 8 or 16 kHz, μ-law at 16 kHz', async () => {
    const rec = recorder();
    assert.equal((await providerErrorOf(open(rec, { sampleRate: 44100 as 8000 }))).code, 'invalid_request');
    assert.equal(
      (await providerErrorOf(open(rec, { sampleRate: 16000 }, stt({ encoding: 'mulaw' })))).code,
      'invalid_request',
    );
  });
});
