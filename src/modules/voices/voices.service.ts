import { AppError, invalidField, notFound } from '../../lib/errors.js';
import { envelope } from '../../db/pagination.js';
import { encodeWav } from '../../lib/wav.js';
import { ProviderError } from '../../providers/provider-error.js';
import type { ObjectStorage } from '../../providers/storage/index.js';
import type { TtsProvider, Voice } from '../../providers/tts/index.js';
import type { CatalogService } from '../catalog/catalog.service.js';
import type { ListVoicesQuery } from './voices.schemas.js';

/** Where a voice's sample is served; the route needs a signed-in member of any account (see voices.routes.ts). */
export const sampleUrl = (id: string) => `/api/v1/voices/${encodeURIComponent(id)}/sample.wav`;

const SAMPLE_TEXT = (voice: Voice) =>
  `Hello, I'm ${voice.name}. This is how your agent will sound on the phone. How can I help you today?`;

/** A storage key for a voice's sample: the engine and the voice, with anything unusual replaced. */
const sampleKey = (engine: string, id: string) =>
  `voice-samples/${engine.replace(/[^\w.-]/g, '_')}/${id.replace(/[^\w.+-]/g, '_')}.wav`;

/** What to tell a user when the engine offers no voices at all. */
function unavailableMessage(engine: string): string {
  if (engine === 'espeak-ng') {
    return 'No voices: the offline speech engine espeak-ng is not installed. Install it with `npm install espeak-ng` (GPL-3.0), or set TTS_PROVIDER=openai to use an OpenAI-compatible speech server.';
  }
  if (engine === 'none') return 'No voices: speech synthesis is turned off (TTS_PROVIDER=none).';
  return `No voices: the speech engine ${engine} offered none.`;
}

/** How many allowed values a 400 lists before pointing at the full list. */
const LISTED_CHOICES = 12;
const allowedList = (values: string[], where: string) =>
  values.length <= LISTED_CHOICES
    ? values.join(', ')
    : `${values.slice(0, LISTED_CHOICES).join(', ')}, … (${values.length} in all: see ${where})`;

/**
 * The voices of the speech engine (with cached WAV samples) and the LLMs an agent can run live, from the catalog.
 * Agents check their `voice` and `liveLlmId` against these.
 */
export function createVoicesService(deps: {
  tts: TtsProvider;
  objects: ObjectStorage;
  catalog: Pick<CatalogService, 'liveModels'>;
}) {
  const { tts, objects, catalog } = deps;
  const rendering = new Map<string, Promise<Buffer>>();

  async function voices() {
    try {
      return await tts.voices();
    } catch (error) {
      if (error instanceof ProviderError)
        throw new AppError('service_unavailable', `The speech engine could not list its voices: ${error.message}`);
      throw error;
    }
  }

  async function render(voice: Voice, key: string): Promise<Buffer> {
    let speech;
    try {
      speech = await tts.synthesize(SAMPLE_TEXT(voice), voice.id);
    } catch (error) {
      if (error instanceof ProviderError)
        throw new AppError('service_unavailable', `The sample could not be rendered: ${error.message}`);
      throw error;
    }
    const wav = encodeWav({ samples: speech.pcm, sampleRate: speech.sampleRate, channels: 1 });
    await objects.put(key, wav, { contentType: 'audio/wav' });
    return wav;
  }

  return {
    async listVoices(query: ListVoicesQuery) {
      const all = await voices();
      const matching = all.filter(
        (voice) =>
          (!query.language || voice.language.toLowerCase() === query.language.toLowerCase()) &&
          (!query.gender || voice.gender === query.gender),
      );
      const page = matching
        .slice(query.offset, query.offset + query.limit)
        .map((voice) => ({ ...voice, sampleUrl: sampleUrl(voice.id) }));
      return {
        ...envelope('voices', page, matching.length, query),
        engine: {
          name: tts.name,
          defaultVoice: tts.defaultVoice || null,
          available: all.length > 0,
          message: all.length > 0 ? null : unavailableMessage(tts.name),
        },
      };
    },

    /** The voice's sample as WAV: rendered by the engine on first request, then served from object storage. */
    async sample(id: string): Promise<Buffer> {
      const voice = (await voices()).find((candidate) => candidate.id === id);
      if (!voice) throw notFound('Voice');
      const key = sampleKey(tts.name, voice.id);
      try {
        const stored = await objects.get(key);
        const chunks: Buffer[] = [];
        for await (const chunk of stored.stream) chunks.push(chunk as Buffer);
        return Buffer.concat(chunks);
      } catch (error) {
        if (!(error instanceof ProviderError && error.code === 'not_found')) throw error;
      }
      // Requests that arrive while a sample renders share that rendering.
      let pending = rendering.get(key);
      if (!pending) {
        pending = render(voice, key).finally(() => rendering.delete(key));
        rendering.set(key, pending);
      }
      return pending;
    },

    async liveModels() {
      const models = await catalog.liveModels();
      return {
        models: models.map((model) => ({
          ...model,
          // The playbook engine follows the agent's steps deterministically; it is not a language model.
          kind: model.provider === 'parley-playbook' ? ('builtin_engine' as const) : ('model' as const),
        })),
      };
    },

    /** Refuses (400, naming the field and what is allowed) a voice the engine does not offer or an LLM that is not live. */
    async checkAgentChoices(input: { voice?: string | null; liveLlmId?: string | null }) {
      if (input.voice !== undefined && input.voice !== null) {
        const ids = (await voices()).map((voice) => voice.id);
        if (ids.length === 0)
          throw invalidField(
            'body/voice',
            `cannot be set: ${unavailableMessage(tts.name)} Leave it null for the default.`,
          );
        if (!ids.includes(input.voice))
          throw invalidField(
            'body/voice',
            `must be one of the voices of ${tts.name}: ${allowedList(ids, 'GET /v1/voices')}`,
          );
      }
      if (input.liveLlmId !== undefined && input.liveLlmId !== null) {
        const models = await catalog.liveModels();
        if (!models.some((model) => model.slug === input.liveLlmId || model.id === input.liveLlmId)) {
          const slugs = models.map((model) => model.slug);
          throw invalidField(
            'body/liveLlmId',
            `must be the slug or id of a live model: ${allowedList(slugs, 'GET /v1/live-models')}`,
          );
        }
      }
    },
  };
}

export type VoicesService = ReturnType<typeof createVoicesService>;
