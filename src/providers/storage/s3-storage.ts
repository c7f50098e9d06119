/**
 * Objects in an S3-compatible bucket (AWS S3, MinIO, Cloudflare R2, Backblaze B2, Ceph…) through the
 * AWS SDK. Streams of unknown length go up as a multipart upload, so memory stays flat for any size.
 */
import { Readable } from 'node:stream';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { ProviderError, redactSecrets } from '../provider-error.js';
import {
  resolveRange,
  validateContentType,
  validateObjectKey,
  type ObjectStorage,
  type StoredObject,
} from './object-storage.js';

const PROVIDER = 's3-storage';

export interface S3StorageOptions {
  bucket: string;
  region: string;
  /** For S3-compatible services; null for AWS itself. */
  endpoint: string | null;
  /** bucket in the path (http://host/bucket/key) rather than the host name; most self-hosted servers need it. */
  forcePathStyle: boolean;
  /** null: the SDK's default chain (environment, shared profile, instance or task role). */
  credentials: { accessKeyId: string; secretAccessKey: string } | null;
}

function statusOf(error: unknown): number | undefined {
  return (error as { $metadata?: { httpStatusCode?: number } } | null)?.$metadata?.httpStatusCode;
}

/** "bytes 0-9/100" -> { start: 0, end: 9, size: 100 } */
function parseContentRange(header: string | undefined) {
  const match = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(header ?? '');
  return match ? { start: Number(match[1]), end: Number(match[2]), size: Number(match[3]) } : null;
}

export function createS3Storage(options: S3StorageOptions): ObjectStorage {
  const client = new S3Client({
    region: options.region,
    ...(options.endpoint ? { endpoint: options.endpoint } : {}),
    forcePathStyle: options.forcePathStyle,
    ...(options.credentials ? { credentials: options.credentials } : {}),
    // Checksums only where S3 requires them: many S3-compatible servers reject the newer default ones.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  const { bucket } = options;
  const secrets = [options.credentials?.secretAccessKey];

  function failure(error: unknown, key: string): ProviderError {
    if (error instanceof ProviderError) return error;
    const status = statusOf(error);
    const name = (error as { name?: string } | null)?.name;
    if (name === 'NoSuchKey' || name === 'NotFound' || status === 404) {
      return new ProviderError(PROVIDER, 'not_found', `no object "${key}" in bucket ${bucket}`, 404);
    }
    if (name === 'InvalidRange' || status === 416) {
      return new ProviderError(PROVIDER, 'range_not_satisfiable', `the range starts past the end of "${key}"`, 416);
    }
    const message = redactSecrets(error instanceof Error ? error.message : String(error), secrets);
    if (error instanceof S3ServiceException || status) {
      return new ProviderError(
        PROVIDER,
        'upstream_error',
        `bucket ${bucket} answered ${status ?? 'an error'}: ${name}: ${message}`,
        status ?? null,
      );
    }
    return new ProviderError(PROVIDER, 'network', `bucket ${bucket} could not be reached: ${message}`);
  }

  return {
    driver: 's3',

    async put(key, body, { contentType }) {
      validateObjectKey(key, PROVIDER);
      validateContentType(contentType, PROVIDER);
      try {
        if (Buffer.isBuffer(body)) {
          await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body, ContentType: contentType }));
          return { size: body.length };
        }
        let size = 0;
        const counted = Readable.from(
          (async function* () {
            for await (const chunk of body) {
              size += (chunk as Buffer).length;
              yield chunk as Buffer;
            }
          })(),
        );
        // 8 MiB parts (S3's minimum is 5), two in flight; a body smaller than one part is a single PUT.
        const upload = new Upload({
          client,
          params: { Bucket: bucket, Key: key, Body: counted, ContentType: contentType },
          partSize: 8 * 1024 * 1024,
          queueSize: 2,
          leavePartsOnError: false,
        });
        await upload.done();
        return { size };
      } catch (error) {
        throw failure(error, key);
      }
    },

    async get(key, options = {}): Promise<StoredObject> {
      validateObjectKey(key, PROVIDER);
      if (options.range) resolveRange(options.range, Number.MAX_SAFE_INTEGER, PROVIDER);
      const range = options.range ? `bytes=${options.range.start}-${options.range.end ?? ''}` : undefined;
      try {
        const response = await client.send(
          new GetObjectCommand({ Bucket: bucket, Key: key, ...(range ? { Range: range } : {}) }),
        );
        const body = response.Body;
        if (!(body instanceof Readable))
          throw new ProviderError(PROVIDER, 'bad_response', 'the object body is not a stream');
        const span = parseContentRange(response.ContentRange);
        if (range && !span) {
          body.destroy();
          throw new ProviderError(PROVIDER, 'bad_response', `bucket ${bucket} ignored the byte range`);
        }
        return {
          stream: body,
          size: span?.size ?? response.ContentLength ?? 0,
          contentType: response.ContentType ?? 'application/octet-stream',
          range: span ? { start: span.start, end: span.end } : null,
        };
      } catch (error) {
        throw failure(error, key);
      }
    },

    async delete(key) {
      validateObjectKey(key, PROVIDER);
      try {
        await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
      } catch (error) {
        const mapped = failure(error, key);
        if (mapped.code !== 'not_found') throw mapped;
      }
    },

    async exists(key) {
      validateObjectKey(key, PROVIDER);
      try {
        await client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
        return true;
      } catch (error) {
        const mapped = failure(error, key);
        if (mapped.code === 'not_found') return false;
        throw mapped;
      }
    },

    async check() {
      try {
        await client.send(new HeadBucketCommand({ Bucket: bucket }));
      } catch (error) {
        const mapped = failure(error, '');
        // A missing bucket answers 404 like a missing object: say which.
        if (mapped.code === 'not_found') throw new ProviderError(PROVIDER, 'unavailable', `no bucket ${bucket}`, 404);
        throw mapped;
      }
    },

    async close() {
      client.destroy();
    },
  };
}
