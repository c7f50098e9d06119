/**
 * Offline speech with espeak-ng (the npm package `espeak-ng`: the C engine compiled to WebAssembly,
 * GPL-3.0-or-later). It is an optional dependency: when it is not installed, synthesize() fails with
 * `unavailable` and voices() is empty, and callers carry on without audio.
 *
 * Synthesis runs in one worker thread, started on first use: an utterance costs ~100-300 ms of CPU
 * (most of it starting a fresh WebAssembly instance), which must not stall the event loop.
 */
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { ProviderError } from '../provider-error.js';
import type { EspeakReply, EspeakRequest, EspeakTask, EspeakVoiceLine } from './espeak-worker.js';
import { checkSpeechText, type SynthesizedSpeech, type TtsProvider, type Voice } from './speech.js';

const PROVIDER = 'espeak-ng';

// Runs under tsx (.ts) and compiled (.js) alike; under tsx the worker first registers tsx's loader.
const extension = extname(fileURLToPath(import.meta.url));
const workerUrl = new URL(`./espeak-worker${extension}`, import.meta.url);

function spawnWorker(moduleName: string): Worker {
  const workerData = { moduleName };
  if (extension !== '.ts') return new Worker(workerUrl, { workerData });
  const bootstrap = `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(workerUrl.href)}); })`;
  return new Worker(bootstrap, { eval: true, workerData });
}

/** A language, with an optional "+variant" (en-us, pt-br, en-us+f3): nothing that reads as an option. */
const VOICE_ID = /^[a-z]{2,3}(?:-[a-z0-9]{1,8})*(?:\+[a-z0-9_]{1,20})?$/i;

/** The female variant offered beside each language's default (male) voice. */
const FEMALE_VARIANT = 'f3';

function voicesFrom(lines: EspeakVoiceLine[]): Voice[] {
  const voices: Voice[] = [];
  const seen = new Set<string>();
  for (const line of lines) {
    // mb/ voices need MBROLA, which this build leaves out; variants are listed separately.
    if (line.file.startsWith('mb/') || line.language === 'variant' || seen.has(line.language)) continue;
    seen.add(line.language);
    const name = line.name.replace(/_/g, ' ');
    voices.push({
      id: line.language,
      name,
      language: line.language,
      gender: line.gender === 'F' ? 'female' : 'male',
      provider: PROVIDER,
    });
    voices.push({
      id: `${line.language}+${FEMALE_VARIANT}`,
      name: `${name}, female`,
      language: line.language,
      gender: 'female',
      provider: PROVIDER,
    });
  }
  return voices;
}

export interface EspeakTtsOptions {
  /** The package to load; "espeak-ng" unless told otherwise. */
  moduleName?: string;
}

export function createEspeakTts(options: EspeakTtsOptions = {}): TtsProvider {
  const moduleName = options.moduleName ?? 'espeak-ng';
  let worker: Worker | null = null;
  let unavailable: ProviderError | null = null;
  let voiceList: Promise<Voice[]> | null = null;
  const pending = new Map<number, { resolve(reply: EspeakReply): void; reject(error: Error): void }>();
  let nextId = 0;

  function failAll(error: Error) {
    for (const waiting of pending.values()) waiting.reject(error);
    pending.clear();
  }

  function start(): Worker {
    const started = spawnWorker(moduleName);
    started.unref();
    started.on('message', (reply: EspeakReply) => {
      pending.get(reply.id)?.resolve(reply);
      pending.delete(reply.id);
      if (pending.size === 0) started.unref();
    });
    started.on('error', (error) => {
      worker = null;
      failAll(new ProviderError(PROVIDER, 'bad_response', `the speech worker failed: ${error.message}`));
    });
    started.on('exit', () => {
      if (worker === started) worker = null;
      failAll(new ProviderError(PROVIDER, 'bad_response', 'the speech worker stopped'));
    });
    return started;
  }

  /** Sends one request to the worker (started on first use); remembers for good that the package is missing. */
  function ask(task: EspeakTask): Promise<EspeakReply> {
    if (unavailable) return Promise.reject(unavailable);
    worker ??= start();
    const id = nextId++;
    const current = worker;
    return new Promise<EspeakReply>((resolve, reject) => {
      current.ref();
      pending.set(id, { resolve, reject });
      current.postMessage({ ...task, id } satisfies EspeakRequest);
    }).then((reply) => {
      if (!('error' in reply)) return reply;
      const error = new ProviderError(PROVIDER, reply.error.code, reply.error.message);
      if (reply.error.code === 'unavailable') {
        unavailable = error;
        void current.terminate();
      }
      throw error;
    });
  }

  return {
    name: PROVIDER,
    defaultVoice: 'en-us',

    voices() {
      voiceList ??= ask({ type: 'voices' }).then(
        (reply) => ('voices' in reply ? voicesFrom(reply.voices) : []),
        (error: unknown) => {
          voiceList = null;
          if (error instanceof ProviderError && error.code === 'unavailable') return [];
          throw error;
        },
      );
      return voiceList;
    },

    async synthesize(text, voice, { signal } = {}): Promise<SynthesizedSpeech> {
      checkSpeechText(text, PROVIDER);
      if (!VOICE_ID.test(voice))
        throw new ProviderError(
          PROVIDER,
          'invalid_request',
          `"${voice}" is not an espeak-ng voice id (e.g. en-us, en-us+f3)`,
        );
      if (signal?.aborted) throw new ProviderError(PROVIDER, 'aborted', 'synthesis was aborted by the caller');
      const reply = ask({ type: 'synthesize', text, voice });
      const result = signal
        ? await Promise.race([
            reply,
            new Promise<never>((_, reject) =>
              signal.addEventListener(
                'abort',
                () => reject(new ProviderError(PROVIDER, 'aborted', 'synthesis was aborted by the caller')),
                { once: true },
              ),
            ),
          ])
        : await reply;
      if (!('pcm' in result))
        throw new ProviderError(PROVIDER, 'bad_response', 'the speech worker answered without audio');
      return { pcm: result.pcm, sampleRate: result.sampleRate };
    },

    async close() {
      const stopping = worker;
      worker = null;
      await stopping?.terminate();
    },
  };
}
