import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ConfigError, loadConfig } from '../../config.js';
import { decodeWav, encodeWav, resample } from '../../lib/wav.js';
import { providerErrorOf } from '../../../test/provider-errors.js';
import { createEspeakTts, createOpenAiTts, createTtsProvider, type TtsProvider } from './index.js';

function rms(samples: Int16Array): number {
  let sum = 0;
  for (const sample of samples) sum += sample * sample;
  return Math.sqrt(sum / samples.length);
}

const seconds = (speech: { pcm: Int16Array; sampleRate: number }) => speech.pcm.length / speech.sampleRate;

describe('espeak-ng (offline)', () => {
  let tts: TtsProvider;
  before(() => {
    tts = createEspeakTts();
  });
  after(() => tts.close());

  test('speaks a sentence: mono 16-bit at 22.05 kHz, audible, the same every time', async () => {
    const text = 'Hello, this is Sam from Acme Dental. Do you have a minute?';
    const speech = await tts.synthesize(text, 'en-us');
    assert.equal(speech.sampleRate, 22050);
    assert.ok(seconds(speech) > 2 && seconds(speech) < 6, `${seconds(speech)} s of speech`);
    assert.ok(rms(speech.pcm) > 500, `audible (rms ${rms(speech.pcm)})`);
    assert.deepEqual(await tts.synthesize(text, 'en-us'), speech, 'deterministic');

    const female = await tts.synthesize(text, 'en-us+f3');
    assert.notDeepEqual(female.pcm, speech.pcm);

    // Ready for a phone line and a recording.
    const phone = resample(speech.pcm, speech.sampleRate, 8000);
    const wav = decodeWav(encodeWav({ samples: phone, sampleRate: 8000, channels: 1 }));
    assert.ok(Math.abs(wav.samples.length / 8000 - seconds(speech)) < 0.001);
  });

  test('text is text: a line that looks like command-line options is spoken, not obeyed', async () => {
    const speech = await tts.synthesize('-v xx -w /etc/passwd --help', 'en-us');
    assert.ok(seconds(speech) > 1, 'the words were spoken');
    assert.ok(rms(speech.pcm) > 500);
  });

  test('voices: a default and a female voice per language, none that need MBROLA', async () => {
    const voices = await tts.voices();
    assert.ok(voices.length > 100, `${voices.length} voices`);
    assert.deepEqual(
      voices.find((voice) => voice.id === 'en-us'),
      { id: 'en-us', name: 'English (America)', language: 'en-us', gender: 'male', provider: 'espeak-ng' },
    );
    assert.deepEqual(
      voices.find((voice) => voice.id === 'en-us+f3'),
      { id: 'en-us+f3', name: 'English (America), female', language: 'en-us', gender: 'female', provider: 'espeak-ng' },
    );
    assert.ok(voices.some((voice) => voice.language === 'de'));
    assert.ok(!voices.some((voice) => /mbrola/i.test(voice.name)));
    assert.equal(new Set(voices.map((voice) => voice.id)).size, voices.length);
    assert.equal(await tts.voices(), voices, 'listed once, then remembered');
    // Every listed language speaks.
    const german = await tts.synthesize('Guten Tag, hier spricht Sam.', 'de');
    assert.ok(seconds(german) > 1);
  });

  test('bad input is refused: an unknown voice, a voice that is not an id, no text, too much text', async () => {
    const unknown = await providerErrorOf(tts.synthesize('Hello', 'xx-nope'));
    assert.equal(unknown.code, 'invalid_request');
    assert.match(unknown.message, /voice does not exist/);
    for (const voice of ['-w', 'en us', '', 'en-us;rm', '../en']) {
      assert.equal((await providerErrorOf(tts.synthesize('Hello', voice))).code, 'invalid_request', voice);
    }
    assert.equal((await providerErrorOf(tts.synthesize('   ', 'en-us'))).code, 'invalid_request');
    assert.equal((await providerErrorOf(tts.synthesize('a'.repeat(4097), 'en-us'))).code, 'invalid_request');
    const aborted = new AbortController();
    aborted.abort();
    assert.equal((await providerErrorOf(tts.synthesize('Hello', 'en-us', { signal: aborted.signal }))).code, 'aborted');
    // The engine still works after all that.
    assert.ok(seconds(await tts.synthesize('Still here.', 'en-us')) > 0.3);
  });

  test('without the optional package: "unavailable", no voices, and it stays that way without retrying', async () => {
    const missing = createEspeakTts({ moduleName: 'espeak-ng-that-is-not-installed' });
    try {
      const error = await providerErrorOf(missing.synthesize('Hello', 'en-us'));
      assert.equal(error.code, 'unavailable');
      assert.match(error.message, /optional package "espeak-ng-that-is-not-installed" could not be loaded/);
      assert.deepEqual(await missing.voices(), []);
      assert.equal(await providerErrorOf(missing.synthesize('Hello again', 'en-us')), error, 'remembered');
    } finally {
      await missing.close();
    }
  });
});

describe('openai speech (against a local server speaking the protocol)', () => {
  const API_KEY = 'sk-tts-0b8e6f2c4a9d1e7f3b5c';
  let handler: (req: IncomingMessage, res: ServerResponse) => void = () => {};
  const requests: { path: string; authorization?: string; body: any }[] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    requests.push({
      path: req.url!,
      authorization: req.headers.authorization,
      body: JSON.parse(Buffer.concat(chunks).toString()),
    });
    handler(req, res);
  });
  let baseUrl = '';
  before(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  after(() => {
    server.closeAllConnections();
    server.close();
  });

  const sine = (rate: number, samples: number) =>
    Int16Array.from({ length: samples }, (_, i) => Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / rate)));

  test('response_format wav: the request follows the protocol; the WAV is decoded at its own rate', async () => {
    const audio = sine(24000, 12000);
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'audio/wav' });
      const file = encodeWav({ samples: audio, sampleRate: 24000, channels: 1 });
      file.writeUInt32LE(0xffff_ffff, 40); // OpenAI streams WAV with an open-ended data size
      res.end(file);
    };
    const tts = createOpenAiTts({ baseUrl, apiKey: API_KEY, model: 'gpt-4o-mini-tts', timeoutMs: 5000 });
    const speech = await tts.synthesize('Hello there.', 'coral');
    assert.deepEqual(requests.at(-1), {
      path: '/v1/audio/speech',
      authorization: `Bearer ${API_KEY}`,
      body: { model: 'gpt-4o-mini-tts', voice: 'coral', input: 'Hello there.', response_format: 'wav' },
    });
    assert.equal(speech.sampleRate, 24000);
    assert.deepEqual(speech.pcm, audio);
    assert.equal(tts.name, 'openai:gpt-4o-mini-tts');
    assert.equal(tts.defaultVoice, 'alloy');
    const voices = await tts.voices();
    assert.ok(voices.some((voice) => voice.id === 'alloy' && voice.provider === 'openai' && voice.language === 'mul'));
  });

  test('response_format pcm: raw 24 kHz little-endian samples, even when they arrive in odd-sized pieces', async () => {
    const audio = sine(24000, 2400);
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'audio/pcm' });
      const bytes = Buffer.from(audio.buffer);
      res.write(bytes.subarray(0, 1001));
      res.end(bytes.subarray(1001));
    };
    const tts = createOpenAiTts({ baseUrl, apiKey: API_KEY, model: 'tts-1', timeoutMs: 5000, responseFormat: 'pcm' });
    const speech = await tts.synthesize('Hi.', 'alloy');
    assert.equal(requests.at(-1)!.body.response_format, 'pcm');
    assert.deepEqual(speech, { pcm: audio, sampleRate: 24000 });
  });

  test('errors: an error status without the key, audio that is not audio, a stalled server', async () => {
    handler = (_req, res) => {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `Invalid voice for key ${API_KEY}` } }));
    };
    const tts = createOpenAiTts({ baseUrl, apiKey: API_KEY, model: 'tts-1', timeoutMs: 300 });
    const refused = await providerErrorOf(tts.synthesize('Hi.', 'alloy'));
    assert.equal(refused.code, 'upstream_error');
    assert.equal(refused.status, 400);
    assert.ok(
      !refused.message.includes(API_KEY) &&
        !JSON.stringify(refused).includes(API_KEY) &&
        !refused.stack!.includes(API_KEY),
    );

    handler = (_req, res) => res.end('{"not":"audio"}');
    assert.equal((await providerErrorOf(tts.synthesize('Hi.', 'alloy'))).code, 'bad_response');

    handler = (_req, res) => res.writeHead(200, { 'content-type': 'audio/wav' }).write('RIFF');
    assert.equal((await providerErrorOf(tts.synthesize('Hi.', 'alloy'))).code, 'timeout');

    const sent = requests.length;
    assert.equal((await providerErrorOf(tts.synthesize('Hi.', '../../etc'))).code, 'invalid_request');
    assert.equal((await providerErrorOf(tts.synthesize('', 'alloy'))).code, 'invalid_request');
    assert.equal(requests.length, sent, 'nothing sent for bad input');
  });

  test('configuration: espeak-ng by default, openai or none when asked', async () => {
    const offline = createTtsProvider(loadConfig({}).tts);
    assert.equal(offline.name, 'espeak-ng');
    await offline.close();

    const none = createTtsProvider(loadConfig({ TTS_PROVIDER: 'none' }).tts);
    assert.equal((await providerErrorOf(none.synthesize('Hi.', 'x'))).code, 'unavailable');
    assert.deepEqual(await none.voices(), []);

    const config = loadConfig({
      TTS_PROVIDER: 'openai',
      TTS_BASE_URL: baseUrl,
      TTS_API_KEY: API_KEY,
      TTS_MODEL: 'kokoro',
    });
    const online = createTtsProvider(config.tts);
    assert.equal(online.name, 'openai:kokoro');
    handler = (_req, res) => res.end(encodeWav({ samples: sine(16000, 1600), sampleRate: 16000, channels: 1 }));
    assert.equal((await online.synthesize('Hi.', 'af_bella')).sampleRate, 16000);
    assert.equal(requests.at(-1)!.body.model, 'kokoro');

    assert.equal(loadConfig({ TTS_PROVIDER: 'openai' }).tts.baseUrl, 'https://api.openai.com/v1');
    assert.throws(() => loadConfig({ TTS_PROVIDER: 'polly' }), ConfigError);
    assert.throws(() => loadConfig({ TTS_TIMEOUT_MS: '-5' }), ConfigError);
  });
});
