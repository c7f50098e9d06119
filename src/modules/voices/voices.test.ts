/**
 * Voices over HTTP, with the real espeak-ng engine: the list, a WAV sample rendered and then served from object
 * storage, live models from the catalog, and agents refusing a voice or live model that is not offered. The service's
 * rules on engines it is given (none, not installed, failing, shared renderings) are in voices.service.test.ts.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, call, errorBody, signUp, type SignedUp, type TestApp } from '../../../test/helpers.js';
import { decodeWav } from '../../lib/wav.js';

let t: TestApp;
let owner: SignedUp;
before(async () => {
  t = await buildTestApp();
  owner = await signUp(t.app);
});
after(async () => t.close());

const fields = (response: { json(): unknown; statusCode: number }) =>
  errorBody(response).details.fields as { field: string; message: string }[];

test('voices come from the speech engine, each with id, name, language, gender, provider and a sample URL', async () => {
  const response = await call(owner, 'GET', '/voices?limit=500');
  assert.equal(response.statusCode, 200, response.body);
  const list = response.json();
  assert.deepEqual(list.engine, { name: 'espeak-ng', defaultVoice: 'en-us', available: true, message: null });
  assert.ok(list.total > 20 && list.voices.length === Math.min(list.total, 500));
  const english = list.voices.find((voice: { id: string }) => voice.id === 'en-us+f3');
  assert.deepEqual(english, {
    id: 'en-us+f3',
    name: english.name,
    language: 'en-us',
    gender: 'female',
    provider: 'espeak-ng',
    sampleUrl: '/api/v1/voices/en-us%2Bf3/sample.wav',
  });

  const filtered = (await call(owner, 'GET', '/voices?language=en-us&gender=female')).json();
  assert.deepEqual(
    filtered.voices.map((voice: { id: string }) => voice.id),
    ['en-us+f3'],
  );
  assert.equal((await call(owner, 'GET', '/voices?gender=robot')).statusCode, 400);
});

test('a sample is a WAV rendered once by the engine, then served from object storage', async () => {
  const first = await call(owner, 'GET', '/api/v1/voices/en-us%2Bf3/sample.wav');
  assert.equal(first.statusCode, 200, first.body.slice(0, 200));
  assert.equal(first.headers['content-type'], 'audio/wav');
  const audio = decodeWav(first.rawPayload);
  assert.equal(audio.channels, 1);
  const seconds = audio.samples.length / audio.sampleRate;
  assert.ok(seconds > 1 && seconds < 20, `${seconds} s of speech`);
  assert.ok(
    audio.samples.some((sample) => Math.abs(sample) > 1000),
    'it is not silence',
  );

  assert.equal(await t.infra.providers.objects.exists('voice-samples/espeak-ng/en-us+f3.wav'), true);
  const again = await call(owner, 'GET', '/api/v1/voices/en-us%2Bf3/sample.wav');
  assert.deepEqual(again.rawPayload, first.rawPayload);

  assert.equal((await call(owner, 'GET', '/voices/xx-nope/sample.wav')).statusCode, 404);
  assert.equal(
    (await t.app.inject({ method: 'GET', url: '/api/v1/voices/en-us/sample.wav' })).statusCode,
    401,
    'needs a sign-in',
  );
});

test('live models: the active LLMs of the catalog, with latency, context and prices; the playbook engine is marked', async () => {
  const before = (await call(owner, 'GET', '/live-models')).json();
  assert.deepEqual(
    before.models.map((m: { slug: string }) => m.slug),
    ['parley-playbook'],
  );
  assert.equal(before.models[0].kind, 'builtin_engine');
  assert.equal(before.models[0].isDefault, true);
  assert.equal(before.models[0].inputPer1kTokensUsd, '0.00');

  const refused = await call(owner, 'POST', '/agents', { name: 'A', liveLlmId: 'openai-gpt-4o-mini' });
  assert.equal(refused.statusCode, 400);
  assert.deepEqual(fields(refused), [
    { field: 'body/liveLlmId', message: 'must be the slug or id of a live model: parley-playbook' },
  ]);

  const catalog = await t.services.catalog.listModels('llm', { limit: 10, offset: 0 });
  const gpt = catalog.models.find((m) => m.slug === 'openai-gpt-4o-mini')!;
  await t.services.catalog.updateModel('llm', gpt.id, { active: true });
  const after = (await call(owner, 'GET', '/live-models')).json();
  const listed = after.models.find((m: { slug: string }) => m.slug === 'openai-gpt-4o-mini');
  assert.deepEqual(
    {
      kind: listed.kind,
      provider: listed.provider,
      latencyClass: listed.latencyClass,
      contextTokens: listed.contextTokens,
      input: listed.inputPer1kTokensUsd,
      output: listed.outputPer1kTokensUsd,
    },
    {
      kind: 'model',
      provider: 'openai-compatible',
      latencyClass: 'medium',
      contextTokens: 128000,
      input: '0.00015',
      output: '0.0006',
    },
  );
  assert.equal(JSON.stringify(after).includes('api.openai.com'), false, 'no upstream URL is shown');

  const bySlug = await call(owner, 'POST', '/agents', { name: 'A', liveLlmId: 'openai-gpt-4o-mini', voice: 'en-us' });
  assert.equal(bySlug.statusCode, 200, bySlug.body);
  const byId = await call(owner, 'PATCH', `/agents/${bySlug.json().id}`, { liveLlmId: gpt.id });
  assert.equal(byId.statusCode, 200, byId.body);
});

test("an agent's voice must be one the engine offers; a refused change writes nothing", async () => {
  const refused = await call(owner, 'POST', '/agents', { name: 'A', voice: 'alloy' });
  assert.equal(refused.statusCode, 400);
  const [problem] = fields(refused);
  assert.equal(problem!.field, 'body/voice');
  assert.match(problem!.message, /^must be one of the voices of espeak-ng: .+ \(\d+ in all: see GET \/v1\/voices\)$/);

  const agent = (await call(owner, 'POST', '/agents', { name: 'B', voice: 'en-us+f3' })).json();
  const patch = await call(owner, 'PATCH', `/agents/${agent.id}`, { voice: 'alloy', name: 'Renamed' });
  assert.equal(patch.statusCode, 400);
  assert.equal((await call(owner, 'GET', `/agents/${agent.id}`)).json().name, 'B');
  const cleared = await call(owner, 'PATCH', `/agents/${agent.id}`, { voice: null });
  assert.equal(cleared.json().voiceId, null);
});
