/**
 * The first run as a newcomer meets it: the real process, spawned. A start that cannot go on says what to do in
 * one sentence and exits 2; `.env` is read; the bare addresses point to the docs; sign-up follows REGISTRATION.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildTestApp, type TestApp } from './helpers.js';
import { NODE_ARGS, PGLITE_PASS_ONLY, ROOT } from './process-kit.js';

const MAIN = join(ROOT, 'src/main.ts');

let scratch: string;
let t: TestApp;
before(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'parley-first-run-'));
  t = await buildTestApp({ env: { REGISTRATION: 'closed' } });
});
after(async () => {
  await t.close();
  await rm(scratch, { recursive: true, force: true });
});

/** Runs `src/main.ts` to its exit with only the environment given (storage settings included). */
function run(env: Record<string, string>, options: { cwd?: string; unset?: string[] } = {}) {
  const { DATABASE_URL: _db, REDIS_URL: _redis, ...inherited } = process.env;
  const environment: Record<string, string | undefined> = {
    ...inherited,
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: 'info',
    LOG_FORMAT: 'json',
    ...env,
  };
  for (const name of options.unset ?? []) delete environment[name];
  const child = spawn(process.execPath, [...NODE_ARGS, MAIN], {
    cwd: options.cwd ?? ROOT,
    env: environment,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  // Whatever happens, a start that did not fail is not left running.
  const timer = setTimeout(() => child.kill('SIGKILL'), 240_000);
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    }),
  );
}

/** Exit 2 and one plain sentence on stderr: no stack, no JSON. */
function assertFriendly(result: { code: number | null; stderr: string }, pattern: RegExp) {
  assert.equal(result.code, 2, result.stderr);
  const lines = result.stderr.trim().split('\n');
  assert.equal(lines.length, 1, `one line: ${result.stderr}`);
  assert.match(lines[0]!, pattern);
  assert.doesNotMatch(result.stderr, /\n\s+at |^\{/);
}

function listen(server: Server): Promise<number> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)),
  );
}

test('a start that cannot go on says what to do in one sentence and exits 2', { skip: PGLITE_PASS_ONLY }, async () => {
  const busy = createServer();
  const port = await listen(busy);
  const notADirectory = join(scratch, 'a-file');
  await writeFile(notADirectory, 'not a directory');
  try {
    // One start for each way a start fails (a bad setting of any kind is one: test/config.test.ts has their messages).
    const [portInUse, pretty, postgres, redis, badPort, dataDir] = await Promise.all([
      run({ PORT: String(port), DATA_DIR: ':memory:', STORAGE_DIR: join(scratch, 'objects-1') }),
      run({ PORT: String(port), DATA_DIR: ':memory:', STORAGE_DIR: join(scratch, 'objects-1'), LOG_FORMAT: 'pretty' }),
      run({ DATABASE_URL: 'postgres://parley@127.0.0.1:1/parley' }),
      run({ DATA_DIR: ':memory:', STORAGE_DIR: join(scratch, 'objects-2'), REDIS_URL: 'redis://127.0.0.1:1' }),
      run({ PORT: 'eighty' }),
      run({ DATA_DIR: join(notADirectory, 'data') }),
    ]);
    assertFriendly(
      portInUse,
      new RegExp(`^Port ${port} on 127\\.0\\.0\\.1 is already in use by another program: stop it, or set PORT`),
    );
    assertFriendly(
      postgres,
      /^Cannot reach PostgreSQL at 127\.0\.0\.1:1 \(ECONNREFUSED\): start it, or fix DATABASE_URL\.$/,
    );
    assertFriendly(
      redis,
      /^Cannot reach Redis at 127\.0\.0\.1:1 \(ECONNREFUSED\): start it, fix REDIS_URL, or unset it/,
    );
    assertFriendly(badPort, /^Configuration error: PORT must be an integer >= 0, got "eighty"\.$/);
    assertFriendly(
      dataDir,
      /^The data directory .*a-file\/data cannot be created or written \(ENOTDIR\): fix its permissions, or set DATA_DIR/,
    );
    // It said it was starting first, on stdout.
    assert.match(portInUse.stdout, /"msg":"parley starting \(role all\)"/);
    // LOG_FORMAT=pretty (the default on a terminal) writes readable lines instead.
    assertFriendly(pretty, /^Port \d+ on 127\.0\.0\.1 is already in use/);
    assert.match(pretty.stdout, /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: parley starting \(role all\)$/m);
    assert.doesNotMatch(pretty.stdout, /^\{/m);
  } finally {
    busy.close();
  }
});

test('.env in the working directory is read, and the environment wins over it', {
  skip: PGLITE_PASS_ONLY,
}, async () => {
  const dir = await mkdtemp(join(scratch, 'dotenv-'));
  await writeFile(join(dir, '.env'), '# settings of this machine\nLOG_LEVEL=chatty\nPORT=eighty # a comment\n');
  // LOG_LEVEL comes from the file (and is refused); PORT, checked before it, is the environment's, not the file's.
  const result = await run({ PORT: '0' }, { cwd: dir, unset: ['LOG_LEVEL'] });
  assertFriendly(result, /LOG_LEVEL must be one of .*got "chatty"/);
  assert.doesNotMatch(result.stderr, /eighty/);
});

test('.env.example has every variable of the README configuration table, each with a comment', () => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const configuration = readme.slice(
    readme.indexOf('## Configuration'),
    readme.indexOf('\n## ', readme.indexOf('## Configuration') + 5),
  );
  const documented = [...configuration.matchAll(/^\| `([A-Z0-9_]+)` \|/gm)].map((m) => m[1]!);
  assert.ok(documented.length >= 40, `${documented.length} variables in the README table`);
  const example = readFileSync(join(ROOT, '.env.example'), 'utf8').split('\n');
  const listed: string[] = [];
  for (const [i, line] of example.entries()) {
    const match = /^#?\s?([A-Z][A-Z0-9_]+)=/.exec(line);
    if (!match) continue;
    listed.push(match[1]!);
    assert.match(example[i - 1] ?? '', /^# \S/, `${match[1]} has a comment on the line above`);
  }
  assert.deepEqual([...listed].sort(), [...documented].sort());
});

test('/ is the dashboard (or says how to build it), and the bare API addresses point to the documentation', async () => {
  const root = await t.app.inject({ method: 'GET', url: '/' });
  assert.ok([200, 503].includes(root.statusCode), `${root.statusCode}`);
  assert.match(String(root.headers['content-type']), /^text\/html/);
  for (const url of ['/api', '/api/']) {
    const api = await t.app.inject({ method: 'GET', url });
    assert.equal(api.statusCode, 200, url);
    assert.deepEqual(api.json(), {
      name: 'Parley',
      docs: '/api/docs',
      openapi: '/api/v1/openapi.json',
      health: '/api/health',
    });
  }
});

test('with REGISTRATION=closed sign-up answers 403 and creates nothing', async () => {
  const register = await t.app.inject({
    method: 'POST',
    url: '/api/v1/auth/register',
    payload: { email: 'newcomer@example.com', password: 'a long passphrase' },
  });
  assert.equal(register.statusCode, 403);
  assert.deepEqual(register.json(), {
    error: 'forbidden',
    details: {},
    message: 'Sign-up is closed on this server: ask its administrator to create your user',
  });
  assert.equal(register.cookies.length, 0);
  const users = await t.infra.database.db.selectFrom('users').select('id').execute();
  assert.deepEqual(users, []);
});
