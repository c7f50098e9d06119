import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import type { ReadStream } from 'node:fs';
import { mkdtemp, open, readdir, readFile, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { ConfigError, loadConfig } from '../../config.js';
import { startS3Server, type TestS3Server } from '../../../test/s3-server.js';
import { providerErrorOf } from '../../../test/provider-errors.js';
import { createLocalStorage, createObjectStorage, type ObjectStorage } from './index.js';
import { createS3Storage } from './s3-storage.js';

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Deterministic bytes: `size` of them, in chunks of `chunk`, so streams arrive in many pieces. */
function* pattern(size: number, chunk = 64 * 1024): Generator<Buffer> {
  for (let offset = 0; offset < size; offset += chunk) {
    const piece = Buffer.alloc(Math.min(chunk, size - offset));
    for (let i = 0; i < piece.length; i++) piece[i] = ((offset + i) * 31 + 7) & 0xff;
    yield piece;
  }
}
const sha = (buffer: Buffer) => createHash('sha256').update(buffer).digest('hex');

const INVALID_KEYS = [
  '',
  '/etc/passwd',
  '../escape',
  'a/../../b',
  'a/./b',
  'a//b',
  'a/',
  '.hidden',
  'a/.meta',
  'a\u0000b',
  'a\nb',
  'a\\b',
  'k'.repeat(1025),
];

/**
 * What every driver must do alike. `strictRanges: false` skips two edge cases s3rver gets wrong (it
 * treats "bytes=0-0" as "bytes=0-", and serves a range of an empty object); AWS S3 answers them like
 * the local driver.
 */
function storageContract(driverName: string, make: () => ObjectStorage, { strictRanges = true } = {}) {
  describe(`${driverName} storage`, () => {
    let storage: ObjectStorage;
    before(() => {
      storage = make();
    });
    after(() => storage.close());

    test('put, exists, get whole and by byte range', async () => {
      const body = Buffer.from('0123456789abcdefghij');
      assert.deepEqual(await storage.put('calls/c1/recording.wav', body, { contentType: 'audio/wav' }), { size: 20 });
      assert.equal(await storage.exists('calls/c1/recording.wav'), true);

      const whole = await storage.get('calls/c1/recording.wav');
      assert.equal(whole.size, 20);
      assert.equal(whole.contentType, 'audio/wav');
      assert.equal(whole.range, null);
      assert.equal((await readAll(whole.stream)).toString(), '0123456789abcdefghij');

      const cases: [{ start: number; end?: number }, string, { start: number; end: number }][] = [
        [{ start: 2, end: 5 }, '2345', { start: 2, end: 5 }],
        [{ start: 15 }, 'fghij', { start: 15, end: 19 }],
        [{ start: 18, end: 1000 }, 'ij', { start: 18, end: 19 }],
        ...(strictRanges ? [[{ start: 0, end: 0 }, '0', { start: 0, end: 0 }] as (typeof cases)[number]] : []),
      ];
      for (const [range, bytes, span] of cases) {
        const part = await storage.get('calls/c1/recording.wav', { range });
        assert.equal((await readAll(part.stream)).toString(), bytes, JSON.stringify(range));
        assert.deepEqual(part.range, span);
        assert.equal(part.size, 20, 'size is the whole object');
      }
      assert.equal(
        (await providerErrorOf(storage.get('calls/c1/recording.wav', { range: { start: 20 } }))).code,
        'range_not_satisfiable',
      );
      assert.equal(
        (await providerErrorOf(storage.get('calls/c1/recording.wav', { range: { start: 5, end: 2 } }))).code,
        'invalid_request',
      );
      assert.equal(
        (await providerErrorOf(storage.get('calls/c1/recording.wav', { range: { start: -1 } }))).code,
        'invalid_request',
      );
    });

    test('a streamed body of several megabytes round-trips byte for byte', async () => {
      const size = 9 * 1024 * 1024 + 123; // past one 8 MiB part, so S3 takes a multipart upload
      const expected = Buffer.concat([...pattern(size)]);
      assert.deepEqual(
        await storage.put('big/stream.bin', Readable.from(pattern(size)), { contentType: 'application/octet-stream' }),
        { size },
      );
      const got = await storage.get('big/stream.bin');
      assert.equal(got.size, size);
      assert.equal(sha(await readAll(got.stream)), sha(expected));
      const tail = await storage.get('big/stream.bin', { range: { start: size - 100 } });
      assert.deepEqual(await readAll(tail.stream), expected.subarray(size - 100));
      await storage.delete('big/stream.bin');
    });

    test('replace, delete (twice), missing keys, an empty object, a unicode key', async () => {
      await storage.put('notes/a.txt', Buffer.from('first'), { contentType: 'text/plain' });
      await storage.put('notes/a.txt', Buffer.from('second version'), { contentType: 'text/markdown; charset=utf-8' });
      const replaced = await storage.get('notes/a.txt');
      assert.equal((await readAll(replaced.stream)).toString(), 'second version');
      assert.equal(replaced.contentType, 'text/markdown; charset=utf-8');

      await storage.delete('notes/a.txt');
      await storage.delete('notes/a.txt');
      assert.equal(await storage.exists('notes/a.txt'), false);
      assert.equal((await providerErrorOf(storage.get('notes/a.txt'))).code, 'not_found');
      assert.equal((await providerErrorOf(storage.get('never/was.txt'))).code, 'not_found');

      await storage.put('empty.bin', Buffer.alloc(0), { contentType: 'application/octet-stream' });
      const empty = await storage.get('empty.bin');
      assert.equal(empty.size, 0);
      assert.equal((await readAll(empty.stream)).length, 0);
      if (strictRanges)
        assert.equal(
          (await providerErrorOf(storage.get('empty.bin', { range: { start: 0 } }))).code,
          'range_not_satisfiable',
        );

      const unicode = 'recordings/Zoë Müller – call #1 (v2).wav';
      await storage.put(unicode, Buffer.from('RIFF'), { contentType: 'audio/wav' });
      assert.equal((await readAll((await storage.get(unicode)).stream)).toString(), 'RIFF');
    });

    test('invalid keys and content types are refused before anything is written', async () => {
      for (const key of INVALID_KEYS) {
        const refused = await providerErrorOf(storage.put(key, Buffer.from('x'), { contentType: 'text/plain' }));
        assert.equal(refused.code, 'invalid_request', JSON.stringify(key));
        assert.match(refused.message, /^invalid object key/);
        assert.equal((await providerErrorOf(storage.get(key))).code, 'invalid_request');
        assert.equal((await providerErrorOf(storage.exists(key))).code, 'invalid_request');
        assert.equal((await providerErrorOf(storage.delete(key))).code, 'invalid_request');
      }
      for (const contentType of ['', 'text/plain\r\nx-injected: 1', 'ü/ü']) {
        assert.equal(
          (await providerErrorOf(storage.put('ok.txt', Buffer.from('x'), { contentType }))).code,
          'invalid_request',
        );
      }
      assert.equal(await storage.exists('ok.txt'), false);
    });
  });
}

/** Every file under a directory, relative, sorted. */
async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name).slice(dir.length + 1))
    .sort();
}

const scratch = await mkdtemp(join(tmpdir(), 'parley-storage-'));
after(() => rm(scratch, { recursive: true, force: true }));

storageContract('local', () => createLocalStorage({ dir: join(scratch, 'contract') }));

let s3: TestS3Server;
before(async () => {
  s3 = await startS3Server();
});
after(() => s3.close());
storageContract(
  's3',
  () =>
    createS3Storage({
      bucket: s3.bucket,
      region: s3.region,
      endpoint: s3.endpoint,
      forcePathStyle: true,
      credentials: s3.credentials,
    }),
  { strictRanges: false },
);

describe('local storage on disk', () => {
  const dir = join(scratch, 'local');
  const storage = createLocalStorage({ dir });

  test('check: a directory that cannot be made or written is unavailable, said with the reason', async () => {
    // Made on first use, as a put would.
    await createLocalStorage({ dir: join(scratch, 'made-by-check', 'objects') }).check();
    assert.equal((await readdir(join(scratch, 'made-by-check'))).includes('objects'), true);

    const file = join(scratch, 'a-file');
    await writeFile(file, 'not a directory');
    for (const [path, code] of [
      [file, 'ENOTDIR'],
      [join(file, 'objects'), 'ENOTDIR'],
      // Node's recursive mkdir spins forever here: /proc holds no directories of ours.
      ['/proc/parley-nope/objects', 'ENOENT'],
    ] as const) {
      const refused = await providerErrorOf(createLocalStorage({ dir: path }).check());
      assert.equal(refused.code, 'unavailable');
      assert.equal(refused.message, `the storage directory ${path} cannot be written (${code})`);
    }
  });

  test('objects are plain files; content types sit beside them', async () => {
    await storage.put('recordings/acct/call.wav', Buffer.from('RIFF....WAVE'), { contentType: 'audio/wav' });
    assert.equal(await readFile(join(dir, 'recordings/acct/call.wav'), 'utf8'), 'RIFF....WAVE');
    assert.deepEqual(await listFiles(dir), ['.meta/recordings/acct/call.wav.json', 'recordings/acct/call.wav']);
    // A file dropped in by hand is served as bytes.
    await writeFile(join(dir, 'manual.bin'), 'hand-made');
    assert.equal((await storage.get('manual.bin')).contentType, 'application/octet-stream');
  });

  test('a failed upload leaves the previous object whole and no temporary file', async () => {
    await storage.put('atomic/object.bin', Buffer.from('the old version'), { contentType: 'text/plain' });
    async function* failing() {
      yield Buffer.alloc(100_000, 1);
      yield Buffer.alloc(100_000, 2);
      throw new Error('the caller lost its source');
    }
    await assert.rejects(
      storage.put('atomic/object.bin', Readable.from(failing()), { contentType: 'audio/wav' }),
      /lost its source/,
    );
    const kept = await storage.get('atomic/object.bin');
    assert.equal((await readAll(kept.stream)).toString(), 'the old version');
    assert.equal(kept.contentType, 'text/plain');
    assert.deepEqual(
      (await listFiles(dir)).filter((file) => file.includes('.tmp-')),
      [],
    );
  });

  test('a reader keeps the version it opened while the object is replaced', async () => {
    await storage.put('versions/x.txt', Buffer.from('A'.repeat(100_000)), { contentType: 'text/plain' });
    const reading = await storage.get('versions/x.txt');
    await storage.put('versions/x.txt', Buffer.from('B'.repeat(50)), { contentType: 'text/plain' });
    await storage.delete('versions/x.txt');
    assert.equal((await readAll(reading.stream)).toString(), 'A'.repeat(100_000));
  });

  test('a byte range reads only its bytes, even at the end of a 4 GiB file', async () => {
    await mkdir(join(dir, 'huge'), { recursive: true });
    const handle = await open(join(dir, 'huge/sparse.bin'), 'w');
    await handle.truncate(4 * 1024 ** 3); // sparse: no disk used
    await handle.write(Buffer.from('tail!'), 0, 5, 4 * 1024 ** 3 - 5);
    await handle.close();
    const part = await storage.get('huge/sparse.bin', { range: { start: 4 * 1024 ** 3 - 5, end: 4 * 1024 ** 3 + 10 } });
    assert.equal(part.size, 4 * 1024 ** 3);
    assert.equal((await readAll(part.stream)).toString(), 'tail!');
    assert.equal((part.stream as ReadStream).bytesRead, 5);
  });

  test('a key cannot be both an object and a folder', async () => {
    await storage.put('clash/a', Buffer.from('file'), { contentType: 'text/plain' });
    assert.equal(
      (await providerErrorOf(storage.put('clash/a/b', Buffer.from('x'), { contentType: 'text/plain' }))).code,
      'invalid_request',
    );
    await storage.put('clash2/a/b', Buffer.from('x'), { contentType: 'text/plain' });
    assert.equal(
      (await providerErrorOf(storage.put('clash2/a', Buffer.from('x'), { contentType: 'text/plain' }))).code,
      'invalid_request',
    );
    assert.equal(await storage.exists('clash2/a'), false);
    assert.equal((await providerErrorOf(storage.get('clash2/a'))).code, 'not_found');
    await storage.delete('clash2/a');
    assert.equal((await readAll((await storage.get('clash2/a/b')).stream)).toString(), 'x');
  });
});

describe('storage configuration', () => {
  test('local by default, under DATA_DIR/objects; STORAGE_DIR moves it; in-memory data needs it', async () => {
    const config = loadConfig({ DATA_DIR: join(scratch, 'data') });
    assert.deepEqual(config.storage, { driver: 'local', dir: join(scratch, 'data', 'objects') });
    const storage = await createObjectStorage(config.storage);
    assert.equal(storage.driver, 'local');
    await storage.put('x.txt', Buffer.from('x'), { contentType: 'text/plain' });
    assert.equal(await readFile(join(scratch, 'data/objects/x.txt'), 'utf8'), 'x');

    assert.equal(loadConfig({ DATA_DIR: ':memory:', STORAGE_DIR: '/srv/objects' }).storage.driver, 'local');
    const inMemory = loadConfig({ DATA_DIR: ':memory:' }).storage;
    assert.equal((await providerErrorOf(createObjectStorage(inMemory))).code, 'unavailable');
    assert.throws(() => loadConfig({ STORAGE_DRIVER: 'ftp' }), /STORAGE_DRIVER must be one of local, s3/);
  });

  test('s3 from the environment, against the S3 server; refused credentials never show the secret', async () => {
    const env = {
      STORAGE_DRIVER: 's3',
      S3_BUCKET: s3.bucket,
      S3_ENDPOINT: s3.endpoint,
      S3_FORCE_PATH_STYLE: 'true',
      S3_ACCESS_KEY_ID: s3.credentials.accessKeyId,
      S3_SECRET_ACCESS_KEY: s3.credentials.secretAccessKey,
    };
    const storage = await createObjectStorage(loadConfig(env).storage);
    await storage.put('configured.txt', Buffer.from('via env'), { contentType: 'text/plain' });
    assert.equal((await readAll((await storage.get('configured.txt')).stream)).toString(), 'via env');
    // check: the bucket answers, or says why not.
    await storage.check();
    await storage.close();
    const missing = await createObjectStorage(loadConfig({ ...env, S3_BUCKET: 'no-such-bucket' }).storage);
    const noBucket = await providerErrorOf(missing.check());
    assert.equal(noBucket.code, 'unavailable');
    assert.equal(noBucket.message, 'no bucket no-such-bucket');
    await missing.close();

    const secret = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';
    const wrong = await createObjectStorage(
      loadConfig({ ...env, S3_ACCESS_KEY_ID: 'AKIAUNKNOWN', S3_SECRET_ACCESS_KEY: secret }).storage,
    );
    const refused = await providerErrorOf(wrong.put('nope.txt', Buffer.from('x'), { contentType: 'text/plain' }));
    assert.equal(refused.code, 'upstream_error');
    assert.equal(refused.status, 403);
    assert.match(refused.message, /InvalidAccessKeyId/);
    assert.ok(
      !JSON.stringify(refused).includes(secret) &&
        !refused.message.includes(secret) &&
        !refused.stack!.includes(secret),
    );
    assert.equal((await providerErrorOf(wrong.check())).code, 'upstream_error');
    await wrong.close();

    assert.throws(() => loadConfig({ STORAGE_DRIVER: 's3' }), /S3_BUCKET is required/);
    assert.throws(() => loadConfig({ STORAGE_DRIVER: 's3', S3_BUCKET: 'b', S3_ACCESS_KEY_ID: 'id' }), ConfigError);
    assert.throws(() => loadConfig({ STORAGE_DRIVER: 's3', S3_BUCKET: 'b', S3_ENDPOINT: 'not a url' }), ConfigError);
    const defaults = loadConfig({ STORAGE_DRIVER: 's3', S3_BUCKET: 'b' }).storage;
    assert.deepEqual(defaults, {
      driver: 's3',
      bucket: 'b',
      region: 'us-east-1',
      endpoint: null,
      forcePathStyle: false,
      credentials: null,
    });
  });
});
