/**
 * Objects as plain files under one directory (by default DATA_DIR/objects), so a recording can be
 * copied straight off the disk. The content type lives beside it in `.meta/<key>.json`.
 *
 * A put writes a temporary file in the target's directory, fsyncs it and renames it over the target, so
 * a reader sees the old object or the new one, never half of one, and a failed upload leaves the old one.
 * Unlike S3, a key cannot be both an object and a folder ("a" and "a/b"): such a put is refused.
 */
import { randomUUID } from 'node:crypto';
import { constants } from 'node:fs';
import { access, mkdir, open, readFile, rename, rm, stat, type FileHandle } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import type { Readable } from 'node:stream';
import { makeDirectory } from '../../lib/directories.js';
import { ProviderError } from '../provider-error.js';
import {
  resolveRange,
  validateContentType,
  validateObjectKey,
  type ObjectStorage,
  type StoredObject,
} from './object-storage.js';

const PROVIDER = 'local-storage';
const META_DIR = '.meta';

interface ObjectMeta {
  contentType: string;
}

function errnoOf(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | null)?.code;
}

/**
 * Why objects cannot be written under `dir` now (an errno code: EACCES, EROFS, ENOTDIR…), or null when they can.
 * A missing directory is created first, as the first put would.
 */
export async function directoryProblem(dir: string): Promise<string | null> {
  try {
    makeDirectory(dir);
    if (!(await stat(dir)).isDirectory()) return 'ENOTDIR';
    // access() answers for this user and for a read-only file system (EROFS) alike.
    await access(dir, constants.W_OK | constants.X_OK);
    return null;
  } catch (error) {
    return errnoOf(error) ?? (error as Error).message;
  }
}

export function createLocalStorage(options: { dir: string }): ObjectStorage {
  const root = resolve(options.dir);

  /** The data and metadata paths of a valid key; the check on the resolved path is a second line of defence. */
  function pathsOf(key: unknown) {
    validateObjectKey(key, PROVIDER);
    const data = resolve(root, key);
    const meta = resolve(root, META_DIR, `${key}.json`);
    if (!data.startsWith(root + sep) || !meta.startsWith(join(root, META_DIR) + sep)) {
      throw new ProviderError(PROVIDER, 'invalid_request', 'invalid object key: it leaves the storage directory');
    }
    return { data, meta };
  }

  const collision = () =>
    new ProviderError(
      PROVIDER,
      'invalid_request',
      'the key collides with an existing object or folder ("a" and "a/b" cannot both exist)',
    );

  /**
   * Writes a body to a temporary file beside `path` and fsyncs it; `commit` renames it into place.
   * Nothing is visible under `path` until then, and a failure removes the temporary file.
   */
  async function stage(path: string, body: Buffer | Readable) {
    try {
      await mkdir(dirname(path), { recursive: true });
    } catch (error) {
      if (['EEXIST', 'ENOTDIR'].includes(errnoOf(error) ?? '')) throw collision();
      throw error;
    }
    const temporary = join(dirname(path), `.tmp-${randomUUID()}`);
    const discard = () => rm(temporary, { force: true });
    let handle: FileHandle | null = await open(temporary, 'wx');
    let size = 0;
    try {
      if (Buffer.isBuffer(body)) {
        await handle.writeFile(body);
        size = body.length;
      } else {
        for await (const chunk of body) {
          const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
          await handle.write(bytes);
          size += bytes.length;
        }
      }
      await handle.sync();
      await handle.close();
      handle = null;
    } catch (error) {
      await handle?.close().catch(() => undefined);
      await discard();
      throw error;
    }
    return {
      size,
      discard,
      async commit() {
        try {
          await rename(temporary, path);
        } catch (error) {
          await discard();
          if (['EISDIR', 'ENOTEMPTY', 'EEXIST', 'ENOTDIR'].includes(errnoOf(error) ?? '')) throw collision();
          throw error;
        }
      },
    };
  }

  return {
    driver: 'local',

    async put(key, body, { contentType }) {
      const paths = pathsOf(key);
      validateContentType(contentType, PROVIDER);
      // Data first (it is the slow part, and finds a collision), then metadata; the data file is
      // renamed into place last, so an object exists once both are written.
      const data = await stage(paths.data, body);
      try {
        const meta = await stage(paths.meta, Buffer.from(JSON.stringify({ contentType } satisfies ObjectMeta)));
        await meta.commit();
        await data.commit();
      } catch (error) {
        await data.discard();
        throw error;
      }
      return { size: data.size };
    },

    async get(key, options = {}): Promise<StoredObject> {
      const paths = pathsOf(key);
      let handle: FileHandle;
      try {
        handle = await open(paths.data, 'r');
      } catch (error) {
        if (['ENOENT', 'ENOTDIR'].includes(errnoOf(error) ?? ''))
          throw new ProviderError(PROVIDER, 'not_found', `no object "${key}"`);
        throw error;
      }
      try {
        // The open handle keeps reading this version even if the object is replaced or deleted meanwhile.
        const info = await handle.stat();
        if (!info.isFile()) throw new ProviderError(PROVIDER, 'not_found', `no object "${key}"`);
        const range = options.range ? resolveRange(options.range, info.size, PROVIDER) : null;
        let contentType = 'application/octet-stream';
        try {
          contentType = (JSON.parse(await readFile(paths.meta, 'utf8')) as ObjectMeta).contentType || contentType;
        } catch {
          // A file put there by hand has no metadata: served as bytes.
        }
        const stream = handle.createReadStream(range ? { start: range.start, end: range.end } : {});
        return { stream, size: info.size, contentType, range };
      } catch (error) {
        await handle.close().catch(() => undefined);
        throw error;
      }
    },

    async delete(key) {
      const paths = pathsOf(key);
      for (const path of [paths.data, paths.meta]) {
        try {
          await rm(path, { force: true });
        } catch (error) {
          // A folder under that name is not an object: nothing to delete.
          if (!['EISDIR', 'ERR_FS_EISDIR', 'ENOTDIR'].includes(errnoOf(error) ?? '')) throw error;
        }
      }
    },

    async exists(key) {
      const paths = pathsOf(key);
      try {
        return (await stat(paths.data)).isFile();
      } catch (error) {
        if (['ENOENT', 'ENOTDIR'].includes(errnoOf(error) ?? '')) return false;
        throw error;
      }
    },

    async check() {
      const problem = await directoryProblem(root);
      if (problem) {
        throw new ProviderError(
          PROVIDER,
          'unavailable',
          `the storage directory ${root} cannot be written (${problem})`,
        );
      }
    },

    async close() {},
  };
}
