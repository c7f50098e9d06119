/**
 * Object storage for recordings and other files: `local` (a directory, the default) or `s3` (any
 * S3-compatible bucket). Keys are validated the same way for both, so switching drivers never changes
 * which keys are accepted.
 */
import type { StorageConfig } from '../../config.js';
import { ProviderError } from '../provider-error.js';
import { createLocalStorage } from './local-storage.js';
import type { ObjectStorage } from './object-storage.js';
import type { S3StorageOptions } from './s3-storage.js';

export * from './object-storage.js';
export { createLocalStorage, directoryProblem } from './local-storage.js';
export type { S3StorageOptions } from './s3-storage.js';

/** The AWS SDK takes a fifth of a second to load: only a deployment that stores in a bucket loads it. */
async function loadS3Storage(options: S3StorageOptions): Promise<ObjectStorage> {
  return (await import('./s3-storage.js')).createS3Storage(options);
}

export async function createObjectStorage(config: StorageConfig): Promise<ObjectStorage> {
  if (config.driver === 's3') {
    return loadS3Storage({
      bucket: config.bucket,
      region: config.region,
      endpoint: config.endpoint,
      forcePathStyle: config.forcePathStyle,
      credentials: config.credentials,
    });
  }
  if (!config.dir) {
    throw new ProviderError(
      'storage',
      'unavailable',
      'local object storage needs STORAGE_DIR when DATA_DIR is ":memory:"',
    );
  }
  return createLocalStorage({ dir: config.dir });
}
