/**
 * Speech synthesis: `espeak-ng` (offline, the default; an optional GPL-3 package), `openai` (any
 * OpenAI-compatible /audio/speech server), or `none`. Every engine answers mono 16-bit PCM at its own
 * rate; lib/wav resamples it for recordings and phone lines.
 */
import type { TtsConfig } from '../../config.js';
import { ProviderError } from '../provider-error.js';
import { createEspeakTts } from './espeak-tts.js';
import { createOpenAiTts } from './openai-tts.js';
import type { TtsProvider } from './speech.js';

export * from './speech.js';
export { createEspeakTts, type EspeakTtsOptions } from './espeak-tts.js';
export { createOpenAiTts, type OpenAiTtsOptions } from './openai-tts.js';

/** TTS_PROVIDER=none: no audio at all, said the same way a missing engine says it. */
export function createNoTts(): TtsProvider {
  return {
    name: 'none',
    defaultVoice: '',
    async voices() {
      return [];
    },
    async synthesize() {
      throw new ProviderError('none', 'unavailable', 'speech synthesis is turned off (TTS_PROVIDER=none)');
    },
    async close() {},
  };
}

export function createTtsProvider(config: TtsConfig): TtsProvider {
  switch (config.provider) {
    case 'openai':
      return createOpenAiTts({
        baseUrl: config.baseUrl,
        apiKey: config.apiKey,
        model: config.model,
        timeoutMs: config.timeoutMs,
      });
    case 'none':
      return createNoTts();
    default:
      return createEspeakTts();
  }
}
