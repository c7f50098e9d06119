/**
 * The operator's command, run as an operator runs it: `npm run admin -- grant-platform-admin <email>`, in a child
 * process, against a PGlite data directory. The command opens storage as the server does, so it runs in the PGlite
 * pass only.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildTestApp, signUp, type TestDatabase } from './helpers.js';
import { NODE_ARGS, PGLITE_PASS_ONLY, ROOT } from './process-kit.js';

let dataDir: string;
// The data directory is the database: the app and the command open it in turn.
const database: TestDatabase = { url: null, restoreFrom: null, drop: async () => {} };
before(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'parley-admin-cli-'));
});
after(() => rm(dataDir, { recursive: true, force: true }));

/** Runs the command with only the storage settings given (the data directory, no DATABASE_URL). */
function admin(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const { DATABASE_URL: _db, REDIS_URL: _redis, ...inherited } = process.env;
  const child = spawn(process.execPath, [...NODE_ARGS, 'src/admin-cli.ts', ...args], {
    cwd: ROOT,
    env: { ...inherited, LOG_LEVEL: 'info', DATA_DIR: dataDir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

/** Opens the app on the same storage, runs `work`, and closes it again (PGlite's directory takes one process at a time). */
async function withApp<T>(work: (app: Awaited<ReturnType<typeof buildTestApp>>) => Promise<T>): Promise<T> {
  const app = await buildTestApp({ database, dataDir });
  try {
    return await work(app);
  } finally {
    await app.close();
  }
}

test('grant and revoke the platform-admin flag by email; the user sees it on the next request', {
  skip: PGLITE_PASS_ONLY,
}, async () => {
  const user = await withApp((app) => signUp(app.app, { email: 'Ops.Lead@Example.com' }));

  const granted = await admin('grant-platform-admin', 'ops.lead@example.com');
  assert.equal(granted.code, 0, granted.stderr);
  assert.equal(
    granted.stdout.trim(),
    'Ops.Lead@Example.com is now a platform administrator; it takes effect on their next request.',
  );
  const again = await admin('grant-platform-admin', 'Ops.Lead@Example.com');
  assert.equal(again.code, 0, again.stderr);
  assert.match(again.stdout, /was already a platform administrator; nothing changed/);

  await withApp(async (app) => {
    const me = await app.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: { cookie: user.cookie } });
    assert.equal(me.json().user.isPlatformAdmin, true);
    const models = await app.app.inject({
      method: 'GET',
      url: '/api/v1/admin/models/llm',
      headers: { cookie: user.cookie },
    });
    assert.equal(models.statusCode, 200, models.body);
  });

  const revoked = await admin('revoke-platform-admin', 'ops.lead@example.com');
  assert.equal(revoked.code, 0, revoked.stderr);
  assert.equal(
    revoked.stdout.trim(),
    'Ops.Lead@Example.com is no longer a platform administrator; it takes effect on their next request.',
  );
  await withApp(async (app) => {
    const models = await app.app.inject({
      method: 'GET',
      url: '/api/v1/admin/models/llm',
      headers: { cookie: user.cookie },
    });
    assert.equal(models.statusCode, 403);
  });
});

test('an unknown email or a bad command exits 2 with a message and changes nothing', {
  skip: PGLITE_PASS_ONLY,
}, async () => {
  const unknown = await admin('grant-platform-admin', 'nobody@example.com');
  assert.equal(unknown.code, 2);
  assert.equal(unknown.stdout, '');
  assert.match(unknown.stderr, /No user has the email nobody@example\.com/);

  const badUsage = [
    [],
    ['grant-platform-admin'],
    ['make-admin', 'a@example.com'],
    ['grant-platform-admin', 'a@example.com', 'extra'],
  ];
  const results = await Promise.all(badUsage.map((args) => admin(...args)));
  for (const [i, result] of results.entries()) {
    assert.equal(result.code, 2, badUsage[i]!.join(' '));
    assert.match(result.stderr, /Usage:\n {2}npm run admin -- grant-platform-admin <email>/);
  }
  const admins = await withApp((app) =>
    app.infra.database.db.selectFrom('users').select('email').where('is_platform_admin', '=', true).execute(),
  );
  assert.deepEqual(admins, []);
});

test('create-user makes a user and its account with a printed password; a taken email exits 2', {
  skip: PGLITE_PASS_ONLY,
}, async () => {
  const created = await admin('create-user', 'newhire@example.com');
  assert.equal(created.code, 0, created.stderr);
  const match =
    /^Created newhire@example\.com with the password (\S+) \(account ([0-9a-f-]{36})\); they can change it after signing in\.$/.exec(
      created.stdout.trim(),
    );
  assert.ok(match, created.stdout);
  await withApp(async (app) => {
    const login = await app.app.inject({
      method: 'POST',
      url: '/api/v1/auth/login',
      payload: { email: 'newhire@example.com', password: match[1] },
    });
    assert.equal(login.statusCode, 200, login.body);
    assert.equal(login.json().accountId, match[2]);
  });
  const again = await admin('create-user', 'newhire@example.com');
  assert.equal(again.code, 2);
  assert.match(again.stderr, /A user with the email newhire@example\.com already exists\./);
  const bad = await admin('create-user', 'not-an-email');
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /"not-an-email" is not an email address\./);
});
