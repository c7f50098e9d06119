/**
 * Object storage for recordings and other files: `local` (a directory, the default) or `s3` (any
 * S3-compatible bucket). Keys are validated the same way for both, so switching drivers never changes
 * which keys are accepted.
 */
import type { StorageConfig } from '../../config.js';
import { ProviderError } from '../provider-error.js';
import { createLocalStorage } from './local-storage.js';
import type { ObjectStorage } from './object-storage.js';
import { createS3Storage } from './s3-storage.js';

export * from './object-storage.js';
export { createLocalStorage, directoryProblem } from './local-storage.js';
export { createS3Storage, type S3StorageOptions } from './s3-storage.js';

export function createObjectStorage(config: StorageConfig): ObjectStorage {
  if (config.driver === 's3') {
    return createS3Storage({
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
