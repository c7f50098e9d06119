import { Type } from 'typebox';
import type { App } from '../../http/types.js';
import { allow } from '../../http/access.js';
import { responses } from '../../http/schemas.js';
import type { VoicesService } from './voices.service.js';
import { ListVoicesQuery, LiveModelList, VoiceList, VoiceParams } from './voices.schemas.js';

const read = allow.account('account.read');
const tags = ['agents'];

const SampleWav = {
  description: "A few seconds of the voice: WAV, 16-bit PCM, mono, at the engine's own rate.",
  content: { 'audio/wav': { schema: Type.String({ format: 'binary' }) } },
};

export function voicesRoutes(app: App, { voices }: { voices: VoicesService }) {
  app.get(
    '/voices',
    {
      config: { access: read },
      schema: {
        operationId: 'listVoices',
        tags,
        summary: 'The voices agents can use, each with a sample URL',
        description:
          'When the speech engine has no voices (espeak-ng not installed, or speech turned off), the list is empty and engine.message says why.',
        querystring: ListVoicesQuery,
        response: responses(VoiceList),
      },
    },
    async (req) => voices.listVoices(req.query),
  );
  app.get(
    '/voices/:id/sample.wav',
    {
      config: { access: read },
      schema: {
        operationId: 'listVoiceSampleWav',
        tags,
        summary: 'A short WAV sample of a voice (rendered once, then served from storage)',
        description:
          'Needs an API key or a session, like the voice list; a browser signed in to the dashboard can play it directly.',
        params: VoiceParams,
        response: { ...responses(Type.String()), 200: SampleWav },
      },
    },
    async (req, reply) => {
      const wav = await voices.sample(req.params.id);
      return reply
        .type('audio/wav')
        .header('cache-control', 'private, max-age=86400')
        .header('content-length', wav.length)
        .send(wav);
    },
  );
  app.get(
    '/live-models',
    {
      config: { access: read },
      schema: {
        operationId: 'listLiveModels',
        tags,
        summary:
          'The LLMs an agent can run live (liveLlmId), with latency class, context size and prices per 1k tokens',
        response: responses(LiveModelList),
      },
    },
    async () => voices.liveModels(),
  );
}
