/**
 * The voices service on engines it is given (no app, no database): filtering and paging the voices, what an engine
 * without voices says, samples rendered once and then read from storage, and which voices and live models an agent
 * may choose. The routes and the real espeak-ng engine are tested in voices.test.ts.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppError } from '../../lib/errors.js';
import { decodeWav } from '../../lib/wav.js';
import { ProviderError } from '../../providers/provider-error.js';
import { createLocalStorage, type ObjectStorage } from '../../providers/storage/index.js';
import { createEspeakTts, createNoTts, type TtsProvider, type Voice } from '../../providers/tts/index.js';
import { createVoicesService } from './voices.service.js';

const dir = mkdtempSync(join(tmpdir(), 'parley-voices-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const objects = createLocalStorage({ dir });

const voice = (id: string, language: string, gender: Voice['gender']): Voice => ({
  id,
  name: id.toUpperCase(),
  language,
  gender,
  provider: 'fake',
});
const VOICES = [
  voice('en-us', 'en-us', 'male'),
  voice('en-us+f3', 'en-us', 'female'),
  voice('en-gb', 'en-gb', 'male'),
  voice('de', 'de', 'male'),
];

/**
 * An engine with these voices that renders one second of a tone, counting its renderings; a rendering waits for
 * `until` when given.
 */
function fakeTts(voices: Voice[] = VOICES, fail?: ProviderError, until?: Promise<unknown>) {
  const rendered: string[] = [];
  const tts: TtsProvider = {
    name: 'fake',
    defaultVoice: 'en-us',
    voices: async () => voices,
    async synthesize(_text, id) {
      rendered.push(id);
      await until;
      if (fail) throw fail;
      return { pcm: Int16Array.from({ length: 8000 }, (_, i) => Math.round(8000 * Math.sin(i / 4))), sampleRate: 8000 };
    },
    close: async () => {},
  };
  return { tts, rendered };
}

const LIVE_MODELS = [
  { id: '00000000-0000-4000-8000-000000000001', slug: 'parley-playbook' },
  { id: '00000000-0000-4000-8000-000000000002', slug: 'local-llama' },
];
const service = (tts: TtsProvider, storage: ObjectStorage = objects) =>
  createVoicesService({
    tts,
    objects: storage,
    catalog: { liveModels: async () => LIVE_MODELS as never },
  });

/** The storage, and a promise that resolves once `count` reads have found nothing. */
function watchedStorage(count: number) {
  let misses = 0;
  let allMissed!: () => void;
  const missed = new Promise<void>((resolve) => (allMissed = resolve));
  const storage: ObjectStorage = {
    ...objects,
    async get(key, options) {
      try {
        return await objects.get(key, options);
      } catch (error) {
        if (++misses === count) allMissed();
        throw error;
      }
    },
  };
  return { storage, missed };
}

/** Asserts a 400 naming `field`, with a message matching `message`. */
async function refusedField(work: Promise<unknown>, field: string, message: RegExp) {
  await assert.rejects(work, (error: unknown) => {
    assert.ok(error instanceof AppError, String(error));
    assert.equal(error.code, 'validation_failed');
    const [problem] = error.details.fields as { field: string; message: string }[];
    assert.equal(problem!.field, field);
    assert.match(problem!.message, message);
    return true;
  });
}

test('voices filtered by language (any case) and gender, a page at a time, each with its sample URL', async () => {
  const voices = service(fakeTts().tts);
  const cases: [Record<string, string | number>, string[], number][] = [
    [{}, ['en-us', 'en-us+f3', 'en-gb', 'de'], 4],
    [{ language: 'EN-US' }, ['en-us', 'en-us+f3'], 2],
    [{ language: 'en-us', gender: 'female' }, ['en-us+f3'], 1],
    [{ gender: 'male', limit: 2 }, ['en-us', 'en-gb'], 3],
    [{ gender: 'male', offset: 2 }, ['de'], 3],
    [{ language: 'fr' }, [], 0],
  ];
  for (const [query, ids, total] of cases) {
    const list = await voices.listVoices({ limit: 25, offset: 0, ...query } as never);
    assert.deepEqual(
      list.voices.map((v) => v.id),
      ids,
      JSON.stringify(query),
    );
    assert.equal(list.total, total);
  }
  const list = await voices.listVoices({ limit: 1, offset: 1 });
  assert.equal(list.voices[0]!.sampleUrl, '/api/v1/voices/en-us%2Bf3/sample.wav');
  assert.deepEqual(list.engine, { name: 'fake', defaultVoice: 'en-us', available: true, message: null });
});

test('an engine without voices says why, and refuses any voice but none', async () => {
  const cases: [TtsProvider, RegExp][] = [
    [createNoTts(), /^No voices: speech synthesis is turned off \(TTS_PROVIDER=none\)\.$/],
    [
      createEspeakTts({ moduleName: 'espeak-ng-not-installed-here' }),
      /^No voices: the offline speech engine espeak-ng is not installed\. Install it with `npm install espeak-ng`/,
    ],
    [fakeTts([]).tts, /^No voices: the speech engine fake offered none\.$/],
  ];
  for (const [tts, message] of cases) {
    try {
      const voices = service(tts);
      const list = await voices.listVoices({ limit: 25, offset: 0 });
      assert.deepEqual([list.voices, list.total, list.engine.available], [[], 0, false]);
      assert.match(list.engine.message!, message);
      await refusedField(
        voices.checkAgentChoices({ voice: 'en-us' }),
        'body/voice',
        new RegExp(`^cannot be set: ${message.source.slice(1).replace(/\$$/, '')}.* Leave it null for the default\\.$`),
      );
      await voices.checkAgentChoices({ voice: null });
      await voices.checkAgentChoices({});
    } finally {
      await tts.close();
    }
  }
});

test('a sample is rendered once, shared by the requests that arrive meanwhile, then read from storage', async () => {
  // The rendering holds until both requests have looked in storage and found nothing.
  const { storage, missed } = watchedStorage(2);
  const { tts, rendered } = fakeTts(VOICES, undefined, missed);
  const voices = service(tts, storage);
  const [first, second] = await Promise.all([voices.sample('en-gb'), voices.sample('en-gb')]);
  assert.deepEqual(rendered, ['en-gb'], 'one rendering for both');
  assert.deepEqual(second, first);
  const audio = decodeWav(first);
  assert.deepEqual([audio.channels, audio.sampleRate, audio.samples.length], [1, 8000, 8000]);
  assert.equal(await objects.exists('voice-samples/fake/en-gb.wav'), true);

  const later = await service(fakeTts().tts).sample('en-gb');
  assert.deepEqual(later, first, 'another process reads the stored sample');
  assert.deepEqual(rendered, ['en-gb']);
});

test('a sample of an unknown voice is 404; an engine that fails is 503, and nothing is stored', async () => {
  const voices = service(fakeTts(VOICES, new ProviderError('fake', 'unavailable', 'the engine is down')).tts);
  await assert.rejects(voices.sample('xx-nope'), (error: unknown) => {
    assert.ok(error instanceof AppError);
    assert.equal(error.code, 'not_found');
    return true;
  });
  await assert.rejects(voices.sample('de'), (error: unknown) => {
    assert.ok(error instanceof AppError);
    assert.equal(error.code, 'service_unavailable');
    assert.match(error.message, /^The sample could not be rendered: .*the engine is down/);
    return true;
  });
  assert.equal(await objects.exists('voice-samples/fake/de.wav'), false);
});

test("an agent's voice must be the engine's; its live model a live one, by slug or id", async () => {
  const many = Array.from({ length: 20 }, (_, i) => voice(`v${i}`, 'en-us', 'neutral'));
  const voices = service(fakeTts(many).tts);
  await voices.checkAgentChoices({ voice: 'v7', liveLlmId: 'local-llama' });
  await voices.checkAgentChoices({ liveLlmId: LIVE_MODELS[1]!.id });
  await refusedField(
    voices.checkAgentChoices({ voice: 'alloy' }),
    'body/voice',
    /^must be one of the voices of fake: v0, v1, .*, v11, … \(20 in all: see GET \/v1\/voices\)$/,
  );
  await refusedField(
    voices.checkAgentChoices({ liveLlmId: 'gpt-9' }),
    'body/liveLlmId',
    /^must be the slug or id of a live model: parley-playbook, local-llama$/,
  );
});
