import { existsSync, mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/**
 * Creates a directory and its missing parents, one level at a time. Node's `mkdir(path, { recursive: true })` spins
 * forever where a parent exists but cannot hold the child (`/proc/nope`: each level answers ENOENT, then EEXIST), and
 * on a read-only file system it reports ENOENT instead of EROFS; one level at a time, every failure is the real one
 * (an error with its errno code: ENOENT, EACCES, EROFS, ENOTDIR…).
 */
export function makeDirectory(path: string): void {
  const missing: string[] = [];
  for (let current = resolve(path); !existsSync(current); current = dirname(current)) {
    missing.unshift(current);
    if (dirname(current) === current) break;
  }
  for (const directory of missing) {
    try {
      mkdirSync(directory);
    } catch (error) {
      // Made meanwhile by another process: as good.
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
}
