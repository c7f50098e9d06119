/**
 * Imports answered at once (Prefer: respond-async): the file is received whole into a temporary file, its header and
 * first rows are checked, the list is created in state processing and the request answers 202; the import then goes
 * on in this process, writing its progress (a heartbeat too) every quarter second or so. An import whose process
 * stopped is failed by the sweep once its heartbeat is stale.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { csvReadError } from '../../http/csv-body.js';
import { CsvTooLargeError, type CsvUpload } from '../../lib/csv.js';
import { AppError } from '../../lib/errors.js';
import type { ImportProgress } from './contacts.import-merge.js';
import type { ImportFailure } from './contacts.tables.js';

/** An import whose progress is older than this lost its process (every running import writes it far more often). */
export const IMPORT_STALE_SECONDS = 120;
/** Progress is written at most this often, and at least every HEARTBEAT_MS even when a long statement runs. */
const PROGRESS_INTERVAL_MS = 250;
const HEARTBEAT_MS = 10_000;
/**
 * The share of an import's time spent reading and checking the file, the rest saving it (13 s of 60 s for 200,000 rows
 * on the embedded database, polled), so that `fraction` moves at a fairly even pace.
 */
export const READING_SHARE = 0.25;

/** True when a Prefer header (RFC 7240; several are joined by commas) asks for respond-async. */
export function prefersAsync(prefer: string | string[] | undefined): boolean {
  const values = Array.isArray(prefer) ? prefer : prefer === undefined ? [] : [prefer];
  return values.some((value) =>
    value.split(',').some((preference) => preference.split(/[;=]/)[0]!.trim().toLowerCase() === 'respond-async'),
  );
}

/** The share of the work done, 0 to 1, from the bytes of the file read, then from the rows merged. */
export function importFraction(progress: ImportProgress, bytesTotal: number): number {
  if (progress.saving) {
    const { merged, valid } = progress.saving;
    return READING_SHARE + (1 - READING_SHARE) * (valid === 0 ? 1 : Math.min(1, merged / valid));
  }
  return bytesTotal === 0 ? 0 : READING_SHARE * Math.min(1, progress.bytes / bytesTotal);
}

export interface SpooledFile {
  path: string;
  bytes: number;
  upload(): CsvUpload;
  remove(): Promise<void>;
}

/** Receives the whole body into a temporary file, refusing it (and removing what was written) past limitBytes. */
export async function spoolUpload(upload: CsvUpload, limitBytes: number, name: string): Promise<SpooledFile> {
  const path = join(tmpdir(), `parley-contact-import-${name}.csv`);
  const remove = () => rm(path, { force: true });
  let bytes = 0;
  async function* limited(source: AsyncIterable<Buffer | string>) {
    for await (const chunk of source) {
      const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      bytes += buffer.length;
      if (bytes > limitBytes) throw new CsvTooLargeError(limitBytes);
      yield buffer;
    }
  }
  try {
    await pipeline(upload.stream, limited, createWriteStream(path, { flags: 'wx', mode: 0o600 }));
  } catch (error) {
    await remove();
    csvReadError(error);
  }
  return {
    path,
    bytes,
    upload: () => ({ stream: createReadStream(path, { highWaterMark: 256 * 1024 }), declaredBytes: bytes }),
    remove,
  };
}

export interface ProgressSnapshot {
  rows: number;
  bytes: number;
  fraction: number;
}

/**
 * Notes an import's progress and writes the latest of it now and then: at most every PROGRESS_INTERVAL_MS, one
 * write at a time (never one statement per row), and every HEARTBEAT_MS whatever happens, as the import's heartbeat.
 */
export function createProgressWriter(
  bytesTotal: number,
  write: (snapshot: ProgressSnapshot) => Promise<void>,
  onError: (error: unknown) => void,
) {
  let latest: ProgressSnapshot = { rows: 0, bytes: 0, fraction: 0 };
  let lastWrite = Date.now();
  let inFlight: Promise<void> | null = null;
  let stopped = false;

  function flush() {
    if (inFlight || stopped) return;
    lastWrite = Date.now();
    inFlight = write(latest)
      .catch(onError)
      .finally(() => {
        inFlight = null;
      });
  }
  const heartbeat = setInterval(flush, HEARTBEAT_MS);
  heartbeat.unref();

  return {
    note(progress: ImportProgress) {
      latest = { rows: progress.rows, bytes: progress.bytes, fraction: importFraction(progress, bytesTotal) };
      if (Date.now() - lastWrite >= PROGRESS_INTERVAL_MS) flush();
    },
    /** Stops writing; resolves once the write in flight, if any, is done. */
    async stop() {
      stopped = true;
      clearInterval(heartbeat);
      await inFlight;
    },
  };
}

/** How a failed import's list says why: the API's error, or a plain sentence for anything unexpected. */
export function importFailure(error: unknown): { failure: ImportFailure; unexpected: boolean } {
  if (error instanceof AppError) {
    const details = Object.keys(error.details).length > 0 ? { details: error.details } : {};
    return { failure: { code: error.code, message: error.message, ...details }, unexpected: false };
  }
  return {
    failure: { code: 'internal_error', message: 'The import stopped on an unexpected error; import the file again' },
    unexpected: true,
  };
}

/** The reason an import is stopped with when the server shuts down before it completes. */
export const interruptedByShutdown = () =>
  new AppError('service_unavailable', 'The server stopped before the import completed; import the file again', {
    reason: 'server_stopped',
  });

/** What the sweep writes on an import whose process stopped. */
export const LOST_IMPORT: ImportFailure = {
  code: 'service_unavailable',
  message: 'The server running the import stopped before it completed; import the file again',
  details: { reason: 'server_stopped' },
};
