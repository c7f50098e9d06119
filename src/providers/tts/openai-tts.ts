/**
 * OpenAI-compatible speech: `POST {baseUrl}/audio/speech` with `{ model, voice, input, response_format }`.
 * `wav` (the default) describes its own rate, so it works with any compatible server; `pcm` is OpenAI's
 * raw 24 kHz 16-bit little-endian mono.
 */
import type { Dispatcher } from 'undici';
import { decodeWav, toMono, WavFormatError } from '../../lib/wav.js';
import { postJson, type OpenAiEndpoint } from '../openai-http.js';
import { ProviderError } from '../provider-error.js';
import { checkSpeechText, type SynthesizedSpeech, type TtsProvider, type Voice } from './speech.js';

const PROVIDER = 'openai-tts';
const OPENAI_PCM_RATE = 24_000;
/** ~17 minutes of 24 kHz audio: far past any one utterance, and a bound on memory. */
const MAX_AUDIO_BYTES = 50 * 1024 * 1024;

export interface OpenAiTtsOptions {
  baseUrl: string;
  apiKey: string | null;
  model: string;
  timeoutMs: number;
  responseFormat?: 'wav' | 'pcm';
  dispatcher?: Dispatcher;
}

// OpenAI's built-in voices. OpenAI publishes no genders; these are the ones commonly given for them.
const OPENAI_VOICES: [id: string, gender: Voice['gender']][] = [
  ['alloy', 'neutral'],
  ['ash', 'male'],
  ['ballad', 'male'],
  ['coral', 'female'],
  ['echo', 'male'],
  ['fable', 'neutral'],
  ['nova', 'female'],
  ['onyx', 'male'],
  ['sage', 'female'],
  ['shimmer', 'female'],
  ['verse', 'male'],
];

export function createOpenAiTts(options: OpenAiTtsOptions): TtsProvider {
  const format = options.responseFormat ?? 'wav';
  const endpoint: OpenAiEndpoint = {
    provider: PROVIDER,
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    apiKey: options.apiKey,
    timeoutMs: options.timeoutMs,
    ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
  };
  const badResponse = (message: string) => new ProviderError(PROVIDER, 'bad_response', message);

  return {
    name: `openai:${options.model}`,
    defaultVoice: 'alloy',

    async voices() {
      return OPENAI_VOICES.map(([id, gender]) => ({
        id,
        name: id[0]!.toUpperCase() + id.slice(1),
        language: 'mul',
        gender,
        provider: 'openai',
      }));
    },

    async synthesize(text, voice, { signal } = {}): Promise<SynthesizedSpeech> {
      checkSpeechText(text, PROVIDER);
      if (typeof voice !== 'string' || !/^[\w.-]{1,64}$/.test(voice)) {
        throw new ProviderError(PROVIDER, 'invalid_request', 'a voice id is 1-64 letters, digits, "_", "-" or "."');
      }
      const response = await postJson(
        endpoint,
        '/audio/speech',
        { model: options.model, voice, input: text, response_format: format },
        signal,
      );
      const chunks: Buffer[] = [];
      let size = 0;
      try {
        for await (const chunk of response.body) {
          size += (chunk as Buffer).length;
          if (size > MAX_AUDIO_BYTES) throw badResponse(`the audio is larger than ${MAX_AUDIO_BYTES} bytes`);
          chunks.push(chunk as Buffer);
        }
      } catch (error) {
        throw response.failure(error);
      } finally {
        if (!response.body.readableEnded) response.body.destroy();
        response.done();
      }
      const audio = Buffer.concat(chunks);
      if (format === 'pcm') {
        if (audio.length % 2 !== 0) throw badResponse('the PCM audio has an odd number of bytes');
        const pcm = new Int16Array(audio.length / 2);
        for (let i = 0; i < pcm.length; i++) pcm[i] = audio.readInt16LE(i * 2);
        return { pcm, sampleRate: OPENAI_PCM_RATE };
      }
      try {
        const decoded = toMono(decodeWav(audio));
        return { pcm: decoded.samples, sampleRate: decoded.sampleRate };
      } catch (error) {
        if (error instanceof WavFormatError) throw badResponse(`the audio is not a usable WAV file: ${error.message}`);
        throw error;
      }
    },

    async close() {},
  };
}
