/**
 * A real S3-protocol server for tests: s3rver on 127.0.0.1, a random port, a bucket, in a temporary
 * directory that is removed on close. It knows one key pair (S3RVER / S3RVER) and refuses unknown access
 * key ids, but does not verify SigV4 signatures themselves.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import S3rver from 's3rver';

export interface TestS3Server {
  endpoint: string;
  bucket: string;
  region: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
  directory: string;
  close(): Promise<void>;
}

export async function startS3Server(bucket = 'parley-test'): Promise<TestS3Server> {
  const directory = await mkdtemp(join(tmpdir(), 'parley-s3rver-'));
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory,
    configureBuckets: [{ name: bucket, configs: [] }],
  });
  const { port } = await server.run();
  return {
    endpoint: `http://127.0.0.1:${port}`,
    bucket,
    region: 'us-east-1',
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    directory,
    async close() {
      // Keep-alive sockets of clients not yet closed would hold close() open.
      (server as unknown as { httpServer: Server }).httpServer.closeAllConnections();
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
