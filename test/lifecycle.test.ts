/**
 * The real server as an operator runs it: `node --import tsx src/main.ts` in a child process,
 * driven over real HTTP and stopped with real signals.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase } from './helpers.js';
import { NODE_ARGS, PGLITE_PASS_ONLY, ROOT } from './process-kit.js';

const usingPostgres = Boolean(process.env.DATABASE_URL);

interface LogLine {
  msg?: string;
  [field: string]: unknown;
}

interface Spawned {
  child: ChildProcess;
  lines: LogLine[];
  stderr(): string;
  /** Resolves with the first log line (already written or still to come) that matches. */
  waitForLog(match: (line: LogLine) => boolean): Promise<LogLine>;
  exited: Promise<number | null>;
}

/**
 * Starts `src/main.ts` with only the environment given (no DATABASE_URL or REDIS_URL unless passed). `through`: a
 * command that runs node for it (its arguments, then node's).
 */
function spawnParley(args: string[], env: Record<string, string>, through: string[] = []): Spawned {
  const { DATABASE_URL: _db, REDIS_URL: _redis, ...inherited } = process.env;
  const [command = process.execPath, ...commandArgs] = [...through, process.execPath];
  const child = spawn(command, [...commandArgs, ...NODE_ARGS, 'src/main.ts', ...args], {
    cwd: ROOT,
    env: {
      ...inherited,
      HOST: '127.0.0.1',
      PORT: '0',
      LOG_LEVEL: 'info',
      LOG_REQUESTS: 'true',
      SHUTDOWN_GRACE_MS: '10000',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: LogLine[] = [];
  const waiters: Array<{ match: (line: LogLine) => boolean; resolve: (line: LogLine) => void }> = [];
  let pending = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    pending += chunk;
    let newline: number;
    while ((newline = pending.indexOf('\n')) >= 0) {
      const text = pending.slice(0, newline);
      pending = pending.slice(newline + 1);
      let line: LogLine;
      try {
        line = JSON.parse(text) as LogLine;
      } catch {
        line = { msg: text };
      }
      lines.push(line);
      for (const waiter of waiters.filter((w) => w.match(line))) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(line);
      }
    }
  });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    child,
    lines,
    stderr: () => stderr,
    exited,
    waitForLog(match) {
      const seen = lines.find(match);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        waiters.push({ match, resolve });
        void exited.then((code) =>
          reject(new Error(`server exited (${code}) before the expected log line; stderr: ${stderr}`)),
        );
      });
    },
  };
}

async function startServer(args: string[], env: Record<string, string>) {
  const server = spawnParley(args, env);
  const started = await server.waitForLog((l) => typeof l.msg === 'string' && l.msg.startsWith('parley started'));
  return { ...server, started, url: started.url as string | null };
}

async function stopServer(server: Spawned) {
  server.child.kill('SIGTERM');
  const code = await server.exited;
  assert.equal(code, 0, `exit code after SIGTERM; stderr: ${server.stderr()}`);
  const messages = server.lines.map((l) => l.msg);
  assert.ok(messages.includes('shutting down'), 'logs the start of the shutdown');
  assert.ok(
    messages.some((m) => m === 'database closed' || m === 'redis and database closed'),
    'logs the database closing',
  );
}

async function json(response: Response) {
  return (await response.json()) as Record<string, any>;
}

function cookieFrom(response: Response) {
  const vsid = response.headers.getSetCookie().find((c) => c.startsWith('vsid='));
  assert.ok(vsid, 'a vsid cookie is set');
  return vsid.split(';')[0]!;
}

/** Sends the headers and half the body now; the caller finishes the body later. */
function startSlowPost(url: string, payload: object) {
  const body = Buffer.from(JSON.stringify(payload));
  const half = Math.floor(body.length / 2);
  let finish!: () => void;
  const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = request(
      url,
      { method: 'POST', agent: false, headers: { 'content-type': 'application/json', 'content-length': body.length } },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, body: text }));
      },
    );
    req.on('error', reject);
    req.write(body.subarray(0, half));
    finish = () => req.end(body.subarray(half));
  });
  return { response, finish: () => finish() };
}

async function restartKeepsData(storage: Record<string, string>, dataDir: string | null) {
  // No speech synthesis: the live call needs none, and it costs each turn time.
  const env: Record<string, string> = { TTS_PROVIDER: 'none', ...storage };
  const email = `restart-${Date.now()}@example.com`;
  const password = 'correct horse battery';

  const first = await startServer([], env);
  assert.equal(first.started.role, 'all');
  // The start says how many, not every name (one line on a terminal).
  const workers = first.lines.find((l) => l.msg === 'job workers started');
  assert.ok(typeof workers?.jobs === 'number' && workers.jobs > 0 && typeof workers.loops === 'number');
  assert.equal(first.started.storage, env.DATABASE_URL ? 'postgres' : 'pglite');
  assert.equal(first.started.redis, env.REDIS_URL ? 'on' : 'off');
  const register = await fetch(`${first.url}/api/v1/auth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
  assert.equal(register.status, 200);
  const { accountId } = await json(register);
  const created = await fetch(`${first.url}/api/v1/api-keys`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie: cookieFrom(register) },
    body: JSON.stringify({ name: 'survives restarts' }),
  });
  assert.equal(created.status, 200);
  const { key } = await json(created);

  if (dataDir) {
    // PGlite lets any number of processes open one directory and corrupt it; the data-dir lock does not.
    const intruder = spawnParley(['--role', 'migrate'], { DATA_DIR: dataDir });
    assert.equal(await intruder.exited, 1);
    assert.match(intruder.stderr(), new RegExp(`in use by process ${first.child.pid}`));
  }
  await stopServer(first);
  if (dataDir) assert.equal(existsSync(join(dataDir, 'parley.pid')), false, 'the data-dir lock is released');

  const second = await startServer([], env);
  const me = await fetch(`${second.url}/api/v1/auth/me`, { headers: { authorization: `Bearer ${key}` } });
  assert.equal(me.status, 200, 'the API key still authenticates after the restart');
  assert.equal((await json(me)).account.id, accountId);
  const callId = await placeLiveCall(second.url!, key);

  // A request already in flight when SIGTERM arrives is answered before the process exits; the live call is hung up.
  const login = startSlowPost(`${second.url}/api/v1/auth/login`, { email, password });
  await second.waitForLog(
    (l) => l.msg === 'incoming request' && (l.req as { url?: string })?.url === '/api/v1/auth/login',
  );
  second.child.kill('SIGTERM');
  await second.waitForLog((l) => l.msg === 'shutting down');
  login.finish();
  const answered = await login.response;
  assert.equal(answered.status, 200, `login during shutdown: ${answered.body}`);
  assert.equal((JSON.parse(answered.body) as { accountId: string }).accountId, accountId);
  assert.equal(await second.exited, 0, second.stderr());
  const order = second.lines.map((l) => l.msg).filter((m) => m !== undefined);
  const step = (msg: string) => order.indexOf(msg);
  assert.ok(step('shutting down') < step('http server closed: in-flight requests finished'));
  assert.ok(step('job workers stopped') > step('shutting down'));
  assert.ok(step('job workers stopped') < Math.max(step('database closed'), step('redis and database closed')));
  assert.ok(
    second.lines.some((l) => l.msg === 'live calls hung up' && l.calls === 1),
    'the shutdown hangs up the live call',
  );

  // The call ended as the shutdown hung it up, charged to that moment.
  const third = await startServer([], env);
  const call = await json(
    await fetch(`${third.url}/api/v1/calls/${callId}`, { headers: { authorization: `Bearer ${key}` } }),
  );
  await stopServer(third);
  assert.equal(call.status, 'completed');
  assert.equal(call.endReason, 'server_shutdown');
  assert.ok(call.durationSeconds > 0);
  assert.ok(
    call.costItems.some((item: { kind: string }) => item.kind === 'telephony'),
    'charged to the moment it ended',
  );
}

/** Places a call from a new agent and number to a new contact, and answers its id once it is live and talking. */
async function placeLiveCall(url: string, key: string) {
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${key}` };
  const post = async (path: string, body: object) => {
    const response = await fetch(`${url}/api/v1${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
    assert.equal(response.status, 200, path);
    return json(response);
  };
  const agent = await post('/agents', {
    name: 'Sally',
    status: 'active',
    firstMessage: 'Hi, this is Sally from Acme. Do you have a minute?',
    playbook: '1. Ask "Would you like a demo?"',
  });
  await post('/phone-numbers', { number: '+14155553001' });
  const imported = await fetch(`${url}/api/v1/contact-lists?name=Leads&defaultCountry=US`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'text/csv' },
    body: 'First Name,Phone\nAda,+14155550100',
  });
  const listed = await json(await fetch(`${url}/api/v1/contacts?listId=${(await json(imported)).listId}`, { headers }));
  const { callId } = await post(`/crm/contacts/${listed.contacts[0].id}/call`, { agentId: agent.id });
  // Live, some way into the conversation (the simulated person answers within seconds).
  for (let i = 0; ; i++) {
    const call = await json(await fetch(`${url}/api/v1/calls/${callId}`, { headers }));
    if (call.status === 'connected' && call.transcript.length >= 1) break;
    assert.ok(i < 600 && !call.endedAt, `the call is live: ${JSON.stringify(call)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return callId as string;
}

test('on PGlite: an API key and a login survive a SIGTERM and restart; an in-flight request completes; the live call is hung up as server_shutdown, with its costs', {
  skip: PGLITE_PASS_ONLY,
}, async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'parley-lifecycle-'));
  try {
    await restartKeepsData({ DATA_DIR: dataDir }, dataDir);
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
});

test('on PostgreSQL (and Redis): the same restart keeps data and hangs up the live call', {
  skip: !usingPostgres && 'DATABASE_URL is not set',
}, async () => {
  const database = await createTestDatabase();
  try {
    await restartKeepsData(
      { DATABASE_URL: database.url!, ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {}) },
      null,
    );
  } finally {
    await database.drop();
  }
});

async function migrateTwice(env: Record<string, string>) {
  const runs: Array<{ applied: unknown; messages: unknown[] }> = [];
  for (let i = 0; i < 2; i++) {
    const run = spawnParley(['--role', 'migrate'], env);
    const done = await run.waitForLog((l) => l.msg === 'migrations applied');
    assert.equal(await run.exited, 0, run.stderr());
    assert.equal(
      run.lines.some((l) => l.msg?.startsWith('parley started')),
      false,
      'migrate does not serve',
    );
    runs.push({ applied: done.migrations, messages: run.lines.map((l) => l.msg) });
  }
  const [first, second] = runs;
  const migrations = readdirSync(join(ROOT, 'src/db/migrations')).filter((name) => /^\d{4}_.+\.sql$/.test(name));
  assert.equal(first!.applied, migrations.length, 'the first run applies every migration, and says how many');
  assert.equal(second!.applied, 0, 'the second run has nothing left to apply');
  // The wait is announced, and the outcome is one line, not a list of files.
  const said = first!.messages;
  assert.ok(said.indexOf('applying migrations…') < said.indexOf('migrations applied'), JSON.stringify(said));
  if (env.DATA_DIR) {
    assert.ok(
      said.some((m) => typeof m === 'string' && m.startsWith('creating the database in ')),
      'a new embedded database is announced',
    );
    assert.equal(
      second!.messages.some((m) => typeof m === 'string' && m.startsWith('creating the database')),
      false,
      'an existing one is not created again',
    );
  }
}

test("--role migrate applies migrations and exits 0, is safe to run twice, and takes over a dead process's lock (PGlite)", {
  skip: PGLITE_PASS_ONLY,
}, async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'parley-migrate-'));
  const lock = join(dataDir, 'parley.pid');
  try {
    // A data-dir lock left by a dead process: the first run takes it over, and releases it at exit.
    writeFileSync(lock, `${await deadPid()}\n`);
    await migrateTwice({ DATA_DIR: dataDir });
    assert.equal(existsSync(lock), false, 'the lock taken over is released at exit');
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
});

test('--role migrate on PostgreSQL, twice', { skip: !usingPostgres && 'DATABASE_URL is not set' }, async () => {
  const database = await createTestDatabase();
  try {
    await migrateTwice({ DATABASE_URL: database.url! });
  } finally {
    await database.drop();
  }
});

test('--role api and --role worker are refused on PGlite with a clear message', {
  skip: PGLITE_PASS_ONLY,
}, async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'parley-roles-'));
  try {
    const [api, worker, unknown] = ['api', 'worker', 'everything'].map((role) =>
      spawnParley(['--role', role], { DATA_DIR: dataDir }),
    );
    for (const [role, run] of [
      ['api', api],
      ['worker', worker],
    ] as const) {
      assert.equal(await run!.exited, 2);
      assert.match(run!.stderr(), new RegExp(`--role ${role} needs PostgreSQL \\(DATABASE_URL\\)`));
    }
    assert.equal(await unknown!.exited, 2);
    assert.match(unknown!.stderr(), /--role must be one of all, api, worker, migrate/);
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
});

/**
 * A directory made read-only for one process: a private mount namespace with a read-only file system at `dir`
 * (`unshare`, as root or with user namespaces). Null where this machine does not allow it.
 */
function readOnlyMount(dir: string): string[] | null {
  const through = ['unshare', '-m', 'sh', '-c', 'mount -t tmpfs -o ro tmpfs "$0" && exec "$@"', dir];
  const probe = spawnSync(through[0]!, [...through.slice(1), 'true'], { stdio: 'ignore' });
  return probe.status === 0 ? through : null;
}

/** The run exits 2 with one sentence on stderr, no stack, within a minute (a start that spins is stopped). */
async function assertRefused(run: Spawned, pattern: RegExp) {
  const deadline = setTimeout(() => run.child.kill('SIGKILL'), 60_000);
  const code = await run.exited;
  clearTimeout(deadline);
  assert.equal(code, 2, `exit code; stderr: ${run.stderr()}`);
  const lines = run.stderr().trim().split('\n');
  assert.equal(lines.length, 1, `one line: ${run.stderr()}`);
  assert.match(lines[0]!, pattern);
  assert.doesNotMatch(run.stderr(), /\n\s+at /);
}

test('a directory that cannot be made or written stops the start: one sentence, exit 2', {
  skip: PGLITE_PASS_ONLY,
}, async (t) => {
  const scratch = await mkdtemp(join(tmpdir(), 'parley-dirs-'));
  const file = join(scratch, 'a-file');
  writeFileSync(file, 'not a directory');
  const readOnly = join(scratch, 'read-only');
  mkdirSync(readOnly);
  const mount = readOnlyMount(readOnly);
  try {
    const runs = [
      // Once spun at full CPU after "starting", deaf to SIGTERM (node's recursive mkdir loops under /proc).
      assertRefused(
        spawnParley([], { DATA_DIR: '/proc/parley-nope' }),
        /^The data directory \/proc\/parley-nope cannot be created or written \(ENOENT\): fix its permissions, or set DATA_DIR to a directory this user can write\.$/,
      ),
      // Once started, said it was healthy, and lost every recording.
      assertRefused(
        spawnParley([], { DATA_DIR: ':memory:', STORAGE_DIR: join(file, 'objects') }),
        /^The storage directory .*a-file\/objects \(recordings and other files\) cannot be created or written \(ENOTDIR\): fix its permissions, or set STORAGE_DIR to a directory this user can write\.$/,
      ),
    ];
    if (mount) {
      // Once a stack (node's recursive mkdir answers ENOENT there); the data directory is told, not what is under it.
      runs.push(
        assertRefused(
          spawnParley([], { DATA_DIR: join(readOnly, 'data') }, mount),
          /^The data directory .*read-only\/data cannot be created or written \(EROFS\): fix its permissions/,
        ),
        assertRefused(
          spawnParley([], { DATA_DIR: readOnly }, mount),
          /^The data directory .*read-only cannot be created or written \(EROFS\): fix its permissions/,
        ),
      );
    } else {
      t.diagnostic('no read-only mount on this machine (unshare): the read-only file system cases are skipped');
    }
    await Promise.all(runs);
    assert.deepEqual(readdirSync(scratch).sort(), ['a-file', 'read-only'], 'nothing was created');
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
});

test('on PostgreSQL: split api and worker processes start, serve their part, and stop cleanly', {
  skip: !usingPostgres && 'DATABASE_URL is not set',
}, async () => {
  const database = await createTestDatabase();
  const env = { DATABASE_URL: database.url!, ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {}) };
  try {
    const worker = await startServer(['--role', 'worker'], env);
    const api = await startServer(['--role', 'api'], env);
    assert.equal(worker.url, null, 'the worker has no HTTP listener');
    assert.ok(worker.lines.some((l) => l.msg === 'job workers started'));
    assert.equal(
      api.lines.some((l) => l.msg === 'job workers started'),
      false,
      'the api runs no job workers',
    );
    const health = await fetch(`${api.url}/api/health`);
    assert.equal(health.status, 200);
    assert.equal((await json(health)).storage, 'postgres');
    await stopServer(api);
    await stopServer(worker);
  } finally {
    await database.drop();
  }
});

/** The pid of a process that has exited: no live process holds it (barring reuse, which the OS delays). */
async function deadPid() {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  await new Promise((resolve) => child.on('exit', resolve));
  return child.pid!;
}

test('a live data-dir lock refuses the start and is left alone (a dead one is taken over: see --role migrate)', {
  skip: PGLITE_PASS_ONLY,
}, async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'parley-lock-'));
  const lock = join(dataDir, 'parley.pid');
  try {
    // This test runner is alive: its lock stands.
    const held = `${process.pid}\n`;
    writeFileSync(lock, held);
    const refused = spawnParley(['--role', 'migrate'], { DATA_DIR: dataDir });
    assert.equal(await refused.exited, 1);
    assert.match(refused.stderr(), new RegExp(`in use by process ${process.pid}`));
    assert.equal(readFileSync(lock, 'utf8'), held, 'a refused start leaves the lock alone');
    assert.deepEqual(
      readdirSync(dataDir).filter((name) => name.startsWith('parley.pid.')),
      [],
      'no temporary lock files left',
    );
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
});

/** A process that tries the data-dir lock on command (test/fixtures/lock-racer.ts). */
function startRacer(dataDir: string) {
  const child = spawn(process.execPath, [...NODE_ARGS, 'test/fixtures/lock-racer.ts', dataDir], {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines: string[] = [];
  const waiting: Array<(line: string) => void> = [];
  let pending = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    pending += chunk;
    let newline: number;
    while ((newline = pending.indexOf('\n')) >= 0) {
      const line = pending.slice(0, newline);
      pending = pending.slice(newline + 1);
      const waiter = waiting.shift();
      if (waiter) waiter(line);
      else lines.push(line);
    }
  });
  const nextLine = () =>
    lines.length ? Promise.resolve(lines.shift()!) : new Promise<string>((resolve) => waiting.push(resolve));
  const exited = new Promise((resolve) => child.on('exit', resolve));
  return {
    ready: nextLine(),
    send(command: string) {
      child.stdin!.write(`${command}\n`);
      return nextLine();
    },
    async stop() {
      child.stdin!.end();
      await exited;
    },
  };
}

test('starters racing for a stale data-dir lock: exactly one gets it', { skip: PGLITE_PASS_ONLY }, async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'parley-lock-race-'));
  const lock = join(dataDir, 'parley.pid');
  const racers = Array.from({ length: 6 }, () => startRacer(dataDir));
  try {
    for (const racer of racers) assert.equal(await racer.ready, 'ready');
    for (let round = 1; round <= 10; round++) {
      writeFileSync(lock, `${await deadPid()}\n`);
      // All at once; each holds what it got until every one has answered.
      const results = await Promise.all(racers.map((racer) => racer.send('go')));
      assert.equal(results.filter((r) => r === 'locked').length, 1, `round ${round}: ${results.join(' | ')}`);
      for (const refusal of results.filter((r) => r !== 'locked'))
        assert.match(refusal, /^refused: Data directory .* is in use by process \d+/);
      await Promise.all(racers.map((racer) => racer.send('release')));
      assert.equal(existsSync(lock), false, 'released by its holder');
    }
    assert.deepEqual(readdirSync(dataDir), [], 'no claim or temporary files left');
  } finally {
    await Promise.all(racers.map((racer) => racer.stop()));
    await rm(dataDir, { recursive: true, force: true });
  }
});
