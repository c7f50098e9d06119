import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildTestApp, type TestApp } from './helpers.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

// The README's five-minute tour, step by step, as a client would run it.
let t: TestApp;
before(async () => (t = await buildTestApp()));
after(() => t.close());

test('the README tour works end to end', async () => {
  const register = await t.app.inject({
    method: 'POST',
    url: '/api/v1/auth/register',
    payload: { email: 'ada@example.com', password: 'a long passphrase', accountName: 'Acme Sales' },
  });
  assert.equal(register.statusCode, 200);
  const cookie = `vsid=${register.cookies.find((c) => c.name === 'vsid')!.value}`;

  const key = await t.app.inject({
    method: 'POST',
    url: '/api/v1/api-keys',
    headers: { cookie },
    payload: { name: 'tour' },
  });
  assert.equal(key.statusCode, 200);
  const auth = { authorization: `Bearer ${key.json().key}` };

  const agent = await t.app.inject({
    method: 'POST',
    url: '/api/v1/agents',
    headers: auth,
    payload: { name: 'Appointment setter', mission: 'Book a demo with the lead' },
  });
  assert.equal(agent.statusCode, 200);
  const patched = await t.app.inject({
    method: 'PATCH',
    url: `/api/v1/agents/${agent.json().id}`,
    headers: auth,
    payload: { soul: 'Warm, brief, never pushy.', status: 'active' },
  });
  assert.equal(patched.statusCode, 200);
  assert.equal(patched.json().version, 2);
  assert.equal(patched.json().status, 'active');
  const agents = await t.app.inject({ method: 'GET', url: '/api/v1/agents', headers: auth });
  assert.equal(agents.json().agents.length, 1);

  const csv = 'First Name,Last Name,Phone Number,Email\nAda,Lovelace,(415) 555-2671,ada@example.com\n';
  const imported = await t.app.inject({
    method: 'POST',
    url: '/api/v1/contact-lists?name=Leads&defaultCountry=US',
    headers: { ...auth, 'content-type': 'text/csv' },
    payload: csv,
  });
  assert.equal(imported.statusCode, 200);
  assert.equal(imported.json().counts.imported, 1);
  const contacts = await t.app.inject({ method: 'GET', url: '/api/v1/contacts?q=ada', headers: auth });
  assert.equal(contacts.json().contacts[0].phone, '+14155552671');

  const calls = await t.app.inject({
    method: 'GET',
    url: '/api/v1/calls?status=completed&limit=25&offset=0',
    headers: auth,
  });
  assert.deepEqual(calls.json(), { calls: [], total: 0, limit: 25, offset: 0 });

  const bad = await t.app.inject({ method: 'GET', url: '/api/v1/calls?status=bogus', headers: auth });
  assert.equal(bad.statusCode, 400);
  assert.equal(bad.json().error, 'validation_failed');
  assert.match(bad.json().message, /querystring\/status must be one of/);
});

/** The README's tour block itself, run by bash against the real server, twice (the second run signs in). */
test('the README tour, as written, runs twice against the real server', async () => {
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
  const section = readme.slice(readme.indexOf('## A five-minute tour'));
  const script = /```sh\n([\s\S]*?)```/.exec(section)![1]!;
  assert.match(script, /^BASE=http:\/\/127\.0\.0\.1:3000\/api$/m);
  const dir = await mkdtemp(join(tmpdir(), 'parley-tour-'));
  const { DATABASE_URL: _db, REDIS_URL: _redis, ...inherited } = process.env;
  const server = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: ROOT,
    env: {
      ...inherited,
      HOST: '127.0.0.1',
      PORT: '0',
      DATA_DIR: join(dir, 'data'),
      LOG_LEVEL: 'info',
      LOG_FORMAT: 'json',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<number | null>((resolve) => server.on('exit', (code) => resolve(code)));
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let pending = '';
      server.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
        pending += chunk;
        const started = /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(pending);
        if (started) resolve(started[1]!);
      });
      void exited.then((code) => reject(new Error(`the server exited (${code})`)));
    });
    const runTour = () =>
      new Promise<{ code: number | null; output: string }>((resolve) => {
        const bash = spawn('bash', ['-c', script.replace(/^BASE=.*$/m, `BASE=${url}/api`)], {
          cwd: dir,
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let output = '';
        bash.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
        bash.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
        const timer = setTimeout(() => bash.kill('SIGKILL'), 240_000);
        bash.on('close', (code) => {
          clearTimeout(timer);
          resolve({ code, output });
        });
      });
    for (const run of [1, 2]) {
      const { code, output } = await runTour();
      assert.equal(code, 0, output);
      if (run === 2)
        assert.match(output, /"error":"conflict"/, 'the second run is told the email is taken, then signs in');
      assert.match(output, /"status":"completed"/);
      assert.match(output, /"speaker":"agent"/, 'the transcript');
      assert.match(output, /"error":"validation_failed"/);
      assert.equal((await readFile(join(dir, 'ada.wav'))).subarray(0, 4).toString(), 'RIFF');
    }
  } finally {
    server.kill('SIGTERM');
    await exited;
    await rm(dir, { recursive: true, force: true });
  }
});
