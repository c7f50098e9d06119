/**
 * Runs readImportRows (contacts.import-rows.ts) in a worker thread: parsing, header mapping and phone validation
 * take a core of their own while this thread stages what the worker already sent, and the event loop stays free
 * for other requests (and, on PGlite, for the database). The worker asks for the file's chunks as it needs them and
 * waits once two batches are not yet taken, so memory stays bounded whatever the file size and a slow database
 * slows the reading. On a single core the rows are read on this thread instead: a worker would only add copying.
 */
import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import { CsvSyntaxError, CsvTooLargeError } from '../../lib/csv.js';
import { AppError, type ErrorCode } from '../../lib/errors.js';
import { siblingModule, startWorker } from '../../lib/workers.js';
import { readImportRows, type ImportRowsOptions, type RowBatch } from './contacts.import-rows.js';

/** Batches the worker may send before this thread has taken them. */
export const BATCHES_AHEAD = 2;
/** Chunks of the file the worker holds or has asked for, at most. */
export const CHUNKS_AHEAD = 2;
/** Imports reading in a worker at once: one core stays for the event loop; the next import reads on this thread. */
const MAX_BUSY_WORKERS = Math.max(1, availableParallelism() - 1);
/** Idle workers kept for the next import. */
const IDLE_WORKERS = 2;

export type ToWorker =
  | { type: 'start'; options: ImportRowsOptions }
  | { type: 'chunk'; chunk: Uint8Array | string }
  | { type: 'end' }
  /** This thread took a batch: the worker may send one more. */
  | { type: 'taken' };

export type FromWorker =
  | { type: 'need' }
  | { type: 'batch'; batch: RowBatch }
  | { type: 'failed'; error: SerializedError };

/** An error as it crosses threads (a thrown class does not survive postMessage). */
export type SerializedError =
  | {
      kind: 'csv_syntax';
      message: string;
      line: number;
      reason: string;
      detectedAtLine: number | null;
      limit: number | null;
    }
  | { kind: 'too_large'; limitBytes: number }
  | { kind: 'app'; code: ErrorCode; message: string; details: Record<string, unknown> }
  | { kind: 'other'; message: string; stack?: string };

export function serializeError(error: unknown): SerializedError {
  if (error instanceof CsvSyntaxError) {
    const { message, line, reason, detectedAtLine, limit } = error;
    return { kind: 'csv_syntax', message, line, reason, detectedAtLine, limit };
  }
  if (error instanceof CsvTooLargeError) return { kind: 'too_large', limitBytes: error.limitBytes };
  if (error instanceof AppError) {
    return { kind: 'app', code: error.code, message: error.message, details: error.details };
  }
  const cause = error instanceof Error ? error : new Error(String(error));
  return { kind: 'other', message: cause.message, stack: cause.stack };
}

export function deserializeError(error: SerializedError): Error {
  switch (error.kind) {
    case 'csv_syntax':
      return new CsvSyntaxError(error.message, error.line, error.reason, error.detectedAtLine, error.limit);
    case 'too_large':
      return new CsvTooLargeError(error.limitBytes);
    case 'app':
      return new AppError(error.code, error.message, error.details);
    default: {
      const rebuilt = new Error(error.message);
      if (error.stack) rebuilt.stack = error.stack;
      return rebuilt;
    }
  }
}

const workerUrl = siblingModule(import.meta.url, 'contacts.import-worker');
const idle: Worker[] = [];
let busy = 0;

function takeWorker(): Worker {
  const worker = idle.pop() ?? newWorker();
  worker.ref();
  return worker;
}

function newWorker(): Worker {
  const worker = startWorker(workerUrl);
  // An import's own listeners report a worker's death to it; an idle worker that dies is simply forgotten.
  worker.on('error', () => undefined);
  worker.on('exit', () => {
    const index = idle.indexOf(worker);
    if (index >= 0) idle.splice(index, 1);
  });
  return worker;
}

/** A worker that finished its file waits, unreferenced (it keeps no process alive), for the next one. */
function giveBack(worker: Worker) {
  if (idle.length >= IDLE_WORKERS) {
    void worker.terminate();
    return;
  }
  worker.unref();
  idle.push(worker);
}

/** A chunk as its own buffer, which can be moved to the worker without copying again (a Buffer may share a pool). */
function ownChunk(chunk: Buffer | Uint8Array | string): Uint8Array | string {
  return typeof chunk === 'string' ? chunk : Uint8Array.prototype.slice.call(chunk);
}

/** readImportRows in a worker thread: the same batches, in the same order, and the same errors. */
export async function* readImportRowsInWorker(
  source: AsyncIterable<Buffer | Uint8Array | string>,
  options: ImportRowsOptions,
): AsyncGenerator<RowBatch> {
  const worker = takeWorker();
  busy++;
  const input = source[Symbol.asyncIterator]();
  const arrived: RowBatch[] = [];
  let failure: Error | null = null;
  let wake: (() => void) | null = null;
  let finished = false;
  const notify = () => {
    wake?.();
    wake = null;
  };
  const fail = (error: Error) => {
    failure ??= error;
    notify();
  };

  // Chunks are read from the source one at a time, in order, each when the worker asks for one.
  let reading = Promise.resolve();
  const sendNext = () => {
    reading = reading.then(async () => {
      if (failure) return;
      try {
        const next = await input.next();
        if (next.done) worker.postMessage({ type: 'end' } satisfies ToWorker);
        else {
          const chunk = ownChunk(next.value);
          const message: ToWorker = { type: 'chunk', chunk };
          worker.postMessage(message, typeof chunk === 'string' ? [] : [chunk.buffer as ArrayBuffer]);
        }
      } catch (error) {
        fail(error instanceof Error ? error : new Error(String(error)));
      }
    });
  };

  // Listeners are removed by reference: removeAllListeners() would also cut the worker's own message channel.
  const onMessage = (message: FromWorker) => {
    if (message.type === 'need') sendNext();
    else if (message.type === 'batch') {
      arrived.push(message.batch);
      notify();
    } else fail(deserializeError(message.error));
  };
  const onError = (error: Error) => fail(error);
  const onExit = (code: number) => fail(new Error(`the import worker stopped (exit code ${code})`));
  worker.on('message', onMessage);
  worker.on('error', onError);
  worker.on('exit', onExit);
  worker.postMessage({ type: 'start', options } satisfies ToWorker);

  try {
    for (;;) {
      const batch = arrived.shift();
      if (batch) {
        worker.postMessage({ type: 'taken' } satisfies ToWorker);
        if (batch.last) finished = true;
        yield batch;
        if (finished) return;
        continue;
      }
      if (failure) throw failure;
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
    }
  } finally {
    busy--;
    worker.off('message', onMessage);
    worker.off('error', onError);
    worker.off('exit', onExit);
    if (finished && !failure) giveBack(worker);
    else {
      // Stopped early (a failed file or database, an abort): the worker may be mid-file, so it goes.
      void worker.terminate();
      // The source is left as it is, as readCsv leaves it: the caller decides what becomes of an unread body.
      await reading;
    }
  }
}

/** Where the rows of an import are read: a worker thread when the machine has a core to spare, else this thread. */
export function readImportRowsOffThread(
  source: AsyncIterable<Buffer | Uint8Array | string>,
  options: ImportRowsOptions,
): AsyncGenerator<RowBatch> {
  const spare = availableParallelism() > 1 && busy < MAX_BUSY_WORKERS;
  return spare ? readImportRowsInWorker(source, options) : readImportRows(source, options);
}
