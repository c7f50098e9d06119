/**
 * Phone validation is the costliest step of a large import (libphonenumber-js matches each number
 * against its country's patterns: ~10 µs a number). A pool of worker threads takes it off the main
 * thread, so the event loop keeps serving requests and parsing overlaps validation.
 */
import { availableParallelism } from 'node:os';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { normalizePhone, type NormalizedPhone } from './phone.js';

interface Pending {
  worker: Worker;
  resolve(results: NormalizedPhone[]): void;
  reject(error: Error): void;
}

export interface PhonePool {
  /** How many batches may usefully be in flight at once. */
  readonly parallelism: number;
  normalize(phones: string[], defaultCountry: string): Promise<NormalizedPhone[]>;
}

// Runs under tsx (.ts) and compiled (.js) alike. A worker thread does not inherit tsx's loader: under
// tsx it starts from a bootstrap that registers the loader, then imports the worker module.
const extension = extname(fileURLToPath(import.meta.url));
const workerUrl = new URL(`./phone-worker${extension}`, import.meta.url);

function spawnWorker(): Worker {
  if (extension !== '.ts') return new Worker(workerUrl);
  const bootstrap = `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(workerUrl.href)}); })`;
  return new Worker(bootstrap, { eval: true });
}

/** Normalizes on the calling thread: for a single core, where a worker would only add copying. */
const inline: PhonePool = {
  parallelism: 1,
  async normalize(phones, defaultCountry) {
    return phones.map((phone) => normalizePhone(phone, defaultCountry));
  },
};

/** Workers are started on first use; an idle worker does not keep the process alive. */
export function createPhonePool(size = Math.min(4, availableParallelism() - 1)): PhonePool {
  if (size < 1) return inline;
  const workers: Worker[] = [];
  const pending = new Map<number, Pending>();
  let nextId = 0;
  let turn = 0;

  function start(): Worker {
    const worker = spawnWorker();
    worker.unref();
    worker.on('message', (message: { id: number; results: NormalizedPhone[] }) => {
      pending.get(message.id)?.resolve(message.results);
      pending.delete(message.id);
      if (![...pending.values()].some((waiting) => waiting.worker === worker)) worker.unref();
    });
    worker.on('error', (error) => fail(worker, error));
    worker.on('exit', (code) => fail(worker, new Error(`phone worker exited with code ${code}`)));
    return worker;
  }

  // A dead worker fails its batches in flight (their imports answer 500 and leave nothing) and is replaced on next use.
  function fail(worker: Worker, error: Error) {
    const index = workers.indexOf(worker);
    if (index < 0) return;
    workers.splice(index, 1);
    for (const [id, waiting] of pending) {
      if (waiting.worker !== worker) continue;
      waiting.reject(error);
      pending.delete(id);
    }
  }

  return {
    parallelism: size + 1,
    normalize(phones, defaultCountry) {
      while (workers.length < size) workers.push(start());
      const worker = workers[turn++ % workers.length]!;
      const id = nextId++;
      return new Promise((resolve, reject) => {
        worker.ref();
        pending.set(id, { worker, resolve, reject });
        worker.postMessage({ id, phones, defaultCountry });
      });
    },
  };
}
