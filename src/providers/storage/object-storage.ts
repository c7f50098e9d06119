/** The object storage interface and the rules both drivers share (see index.ts). */
import type { Readable } from 'node:stream';
import { ProviderError } from '../provider-error.js';

/** Bytes `start` to `end`, both inclusive as in HTTP Range; without `end`, to the end of the object. */
export interface ByteRange {
  start: number;
  end?: number;
}

export interface StoredObject {
  stream: Readable;
  /** The whole object's size in bytes, whatever the range. */
  size: number;
  contentType: string;
  /** The bytes the stream carries (end clamped to the object), or null for the whole object. */
  range: { start: number; end: number } | null;
}

export interface ObjectStorage {
  readonly driver: 'local' | 's3';
  /** Stores the object whole or not at all; an existing object under the key is replaced. */
  put(key: string, body: Buffer | Readable, options: { contentType: string }): Promise<{ size: number }>;
  /** Throws ProviderError `not_found`, or `range_not_satisfiable` for a range starting past the end. */
  get(key: string, options?: { range?: ByteRange }): Promise<StoredObject>;
  /** Deleting a missing object is not an error. */
  delete(key: string): Promise<void>;
  exists(key: string): Promise<boolean>;
  /**
   * Throws ProviderError `unavailable` (or the bucket's `upstream_error` or `network`) when objects cannot be written
   * now: the local directory cannot be created or written, or the bucket cannot be reached. Writes nothing.
   */
  check(): Promise<void>;
  close(): Promise<void>;
}

export const MAX_KEY_BYTES = 1024;

/**
 * A key is 1-1024 bytes of UTF-8 path segments joined by "/": no leading, trailing or double slash, no
 * backslash, no control character (NUL included), and no segment starting with "." (that rules out "."
 * and ".." and reserves dot-names for the local driver's temporary and metadata files).
 */
export function validateObjectKey(key: unknown, provider = 'storage'): asserts key is string {
  const invalid = (why: string) => new ProviderError(provider, 'invalid_request', `invalid object key: ${why}`);
  if (typeof key !== 'string' || key.length === 0) throw invalid('it must be a non-empty string');
  if (Buffer.byteLength(key, 'utf8') > MAX_KEY_BYTES) throw invalid(`it is longer than ${MAX_KEY_BYTES} bytes`);
  if (/[\u0000-\u001f\u007f]/.test(key)) throw invalid('it contains a control character');
  if (key.includes('\\')) throw invalid('it contains a backslash');
  if (key.startsWith('/')) throw invalid('it must not start with "/"');
  for (const segment of key.split('/')) {
    if (segment === '') throw invalid('it has an empty segment ("//" or a trailing "/")');
    if (segment.startsWith('.')) throw invalid(`segment "${segment}" starts with "."`);
  }
}

export function validateContentType(contentType: unknown, provider = 'storage'): asserts contentType is string {
  if (typeof contentType !== 'string' || !/^[\x21-\x7e][\x20-\x7e]{0,254}$/.test(contentType)) {
    throw new ProviderError(provider, 'invalid_request', 'contentType must be 1-255 printable ASCII characters');
  }
}

/** The inclusive byte span a range selects in an object of `size` bytes. */
export function resolveRange(range: ByteRange, size: number, provider = 'storage'): { start: number; end: number } {
  const { start, end } = range;
  if (!Number.isSafeInteger(start) || start < 0 || (end !== undefined && (!Number.isSafeInteger(end) || end < start))) {
    throw new ProviderError(provider, 'invalid_request', 'a range needs integers 0 <= start <= end');
  }
  if (start >= size) {
    throw new ProviderError(
      provider,
      'range_not_satisfiable',
      `the range starts at byte ${start} of a ${size}-byte object`,
    );
  }
  return { start, end: Math.min(end ?? size - 1, size - 1) };
}
