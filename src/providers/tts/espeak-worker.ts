/**
 * Worker thread body for espeak-ng (see espeak-tts.ts). The npm package is the espeak-ng command line
 * compiled to WebAssembly: each run is a fresh instance whose main() gets the arguments, reads the text
 * from stdin and writes a WAV file into its in-memory file system. The WebAssembly module is compiled
 * once and instantiated per utterance; runs take turns, so one instance (32 MB) is alive at a time.
 */
import { readFile } from 'node:fs/promises';
import { parentPort, workerData } from 'node:worker_threads';
import { decodeWav, toMono } from '../../lib/wav.js';

export type EspeakTask = { type: 'synthesize'; text: string; voice: string } | { type: 'voices' };
export type EspeakRequest = EspeakTask & { id: number };

export interface EspeakVoiceLine {
  language: string;
  gender: string;
  name: string;
  file: string;
}

export type EspeakReply =
  | { id: number; pcm: Int16Array; sampleRate: number }
  | { id: number; voices: EspeakVoiceLine[] }
  | { id: number; error: { code: 'unavailable' | 'invalid_request' | 'bad_response'; message: string } };

interface EmscriptenModule {
  FS: { readFile(path: string): Uint8Array; analyzePath(path: string): { exists: boolean } };
}
type EspeakFactory = (options: Record<string, unknown>) => Promise<EmscriptenModule>;

const { moduleName } = workerData as { moduleName: string };
let engine: Promise<{ factory: EspeakFactory; wasm: WebAssembly.Module }> | null = null;

function loadEngine() {
  engine ??= (async () => {
    const imported = (await import(moduleName)) as { default: EspeakFactory };
    const wasmUrl = new URL('espeak-ng.wasm', import.meta.resolve(moduleName));
    const wasm = await WebAssembly.compile(await readFile(wasmUrl));
    return { factory: imported.default, wasm };
  })();
  return engine;
}

class EngineFailure extends Error {
  constructor(
    readonly code: 'unavailable' | 'invalid_request' | 'bad_response',
    message: string,
  ) {
    super(message);
  }
}

/** Runs the espeak-ng command line once; returns what it printed and its file system. */
async function runEspeak(args: string[], stdin?: Buffer) {
  let loaded: Awaited<ReturnType<typeof loadEngine>>;
  try {
    loaded = await loadEngine();
  } catch (error) {
    engine = null;
    throw new EngineFailure(
      'unavailable',
      `the optional package "${moduleName}" could not be loaded: ${(error as Error).message}`,
    );
  }
  const out: string[] = [];
  const errors: string[] = [];
  let position = 0;
  const instance = await loaded.factory({
    // The factory's main() takes ownership of (and changes) this array.
    arguments: [...args],
    stdin: () => (stdin && position < stdin.length ? stdin[position++]! : null),
    print: (line: string) => out.push(line),
    printErr: (line: string) => {
      if (!line.startsWith('program exited')) errors.push(line);
    },
    instantiateWasm(
      imports: WebAssembly.Imports,
      receive: (instance: WebAssembly.Instance, module: WebAssembly.Module) => void,
    ) {
      void WebAssembly.instantiate(loaded.wasm, imports).then((instance) => {
        // Starting the instance mounts ~1,000 embedded data files, and the file system builds an Error
        // (with a stack trace) for each path it probes: without traces that start costs ~40% less CPU.
        const limit = Error.stackTraceLimit;
        Error.stackTraceLimit = 0;
        try {
          receive(instance, loaded.wasm);
        } finally {
          Error.stackTraceLimit = limit;
        }
      });
      return {};
    },
  });
  return { instance, out, errors };
}

async function synthesize(text: string, voice: string) {
  const { instance, errors } = await runEspeak(
    ['-v', voice, '-w', '/speech.wav', '--stdin'],
    Buffer.from(text, 'utf8'),
  );
  if (!instance.FS.analyzePath('/speech.wav').exists) {
    const message = errors.join(' ').replace(/^Error:\s*/, '') || 'espeak-ng produced no audio';
    throw new EngineFailure(/voice/i.test(message) ? 'invalid_request' : 'bad_response', message);
  }
  return toMono(decodeWav(instance.FS.readFile('/speech.wav')));
}

/** Parses `espeak-ng --voices`: "Pty Language Age/Gender VoiceName File Other Languages". */
async function voices(): Promise<EspeakVoiceLine[]> {
  const { out } = await runEspeak(['--voices']);
  return out.flatMap((line) => {
    const match = /^\s*\d+\s+(\S+)\s+\S*\/([MF-])\s+(\S+)\s+(\S+)/.exec(line);
    return match ? [{ language: match[1]!, gender: match[2]!, name: match[3]!, file: match[4]! }] : [];
  });
}

let queue: Promise<unknown> = Promise.resolve();

parentPort!.on('message', (request: EspeakRequest) => {
  queue = queue.then(async () => {
    try {
      if (request.type === 'voices') {
        parentPort!.postMessage({ id: request.id, voices: await voices() } satisfies EspeakReply);
      } else {
        const audio = await synthesize(request.text, request.voice);
        parentPort!.postMessage(
          { id: request.id, pcm: audio.samples, sampleRate: audio.sampleRate } satisfies EspeakReply,
          [audio.samples.buffer as ArrayBuffer],
        );
      }
    } catch (error) {
      const failure =
        error instanceof EngineFailure ? error : new EngineFailure('bad_response', (error as Error).message);
      parentPort!.postMessage({
        id: request.id,
        error: { code: failure.code, message: failure.message },
      } satisfies EspeakReply);
    }
  });
});
