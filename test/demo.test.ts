/**
 * `npm run demo` as a newcomer runs it: the real server with --demo on an empty data directory creates the demo
 * account, whose calls run through the engine on the simulated network; a second start finds it and adds nothing.
 * The README's tour block, run by bash as written, runs against the same two servers meanwhile (its second run signs
 * in): both wait on calls that take real time, and waiting side by side costs one wait.
 */
import { test, after, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { demoCommands } from '../src/demo/demo.js';
import { NODE_ARGS, PGLITE_PASS_ONLY, ROOT } from './process-kit.js';

const dataDir = await mkdtemp(join(tmpdir(), 'parley-demo-'));
after(() => rm(dataDir, { recursive: true, force: true }));

interface LogLine {
  msg?: string;
  [field: string]: unknown;
}

type Demo = Awaited<ReturnType<typeof startDemo>>;

/** Starts the server with --demo and resolves once the demo's log line is out. */
async function startDemo() {
  const { DATABASE_URL: _db, REDIS_URL: _redis, ...inherited } = process.env;
  const child = spawn(process.execPath, [...NODE_ARGS, 'src/main.ts', '--demo'], {
    cwd: ROOT,
    env: { ...inherited, HOST: '127.0.0.1', PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'info', LOG_FORMAT: 'json' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: LogLine[] = [];
  let pending = '';
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const demoLine = new Promise<LogLine>((resolve, reject) => {
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      pending += chunk;
      let newline: number;
      while ((newline = pending.indexOf('\n')) >= 0) {
        const raw = pending.slice(0, newline);
        // A line that is not the logger's (a library writing to stdout) is kept as text, not a crash of the test.
        const line = (raw.startsWith('{') ? JSON.parse(raw) : { text: raw }) as LogLine;
        pending = pending.slice(newline + 1);
        lines.push(line);
        if (typeof line.msg === 'string' && line.msg.startsWith('demo account')) resolve(line);
        if (line.msg === 'the demo could not be set up') reject(new Error(JSON.stringify(line)));
      }
    });
    void exited.then((code) => reject(new Error(`exited ${code} before the demo was set up: ${stderr}`)));
  });
  const line = await demoLine;
  const url = lines.find((l) => typeof l.msg === 'string' && l.msg.startsWith('parley started'))!.url as string;
  return {
    line,
    url,
    async stop() {
      child.kill('SIGTERM');
      const code = await exited;
      const lastLines = lines.slice(-10).map((l) => JSON.stringify(l));
      assert.equal(code, 0, `exit code ${code}; stderr: ${stderr}; last log lines:\n${lastLines.join('\n')}`);
    },
  };
}

async function signIn(url: string, demo: { email: string; password: string }) {
  const login = await fetch(`${url}/api/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: demo.email, password: demo.password }),
  });
  assert.equal(login.status, 200, await login.clone().text());
  const cookie = login.headers
    .getSetCookie()
    .find((c) => c.startsWith('vsid='))!
    .split(';')[0]!;
  return async (path: string) => {
    const response = await fetch(`${url}/api/v1${path}`, { headers: { cookie } });
    assert.equal(response.status, 200, `${path}: ${await response.clone().text()}`);
    return response;
  };
}

/** The demo account as the first start made it: agents, list, number, and calls that really run to their end. */
async function checkDemo(first: Demo) {
  const demo = first.line.demo as { email: string; password: string; created: boolean; calls: number };
  assert.equal(demo.created, true);
  assert.equal(demo.calls, 8);
  assert.match(first.line.msg!, /sign in as demo@parley\.example with the password "parley demo password"/);
  const get = await signIn(first.url, demo);

  const agents = (await (await get('/agents')).json()).agents as Array<{ name: string; status: string }>;
  assert.deepEqual(
    agents.map((a) => a.status),
    ['active', 'active'],
  );
  const numbers = (await (await get('/phone-numbers')).json()).phoneNumbers as Array<{ source: string }>;
  assert.deepEqual(
    numbers.map((n) => n.source),
    ['purchased'],
  );
  assert.equal((await (await get('/contacts')).json()).total, 8);

  // The calls really run: wait until every one has ended.
  type Listed = {
    id: string;
    status: string;
    endReason: string | null;
    disposition: string | null;
    recordingStorageKey: string | null;
  };
  let calls: Listed[] = [];
  for (let i = 0; i < 600; i++) {
    calls = (await (await get('/calls?limit=25')).json()).calls;
    if (calls.length === 8 && calls.every((c) => ['completed', 'failed', 'busy', 'no_answer'].includes(c.status)))
      break;
    await sleep(500);
  }
  // Every persona and every network outcome, each with the disposition it calls for (the reminder agent's refusal
  // is a cancelled appointment, its own code).
  assert.deepEqual(
    calls.map((c) => `${c.status} ${c.disposition}`).sort(),
    [
      'busy busy',
      'completed appointment_booked',
      'completed callback_requested',
      'completed callback_requested',
      'completed cancelled',
      'completed do_not_call',
      'completed voicemail',
      'no_answer no_answer',
    ],
    `the calls' ends: ${calls.map((c) => `${c.status} (${c.endReason}, ${c.disposition})`).join(', ')}`,
  );
  const answered = calls.filter((c) => c.recordingStorageKey !== null);
  assert.ok(answered.length >= 6, 'the answered calls have recordings');
  for (const call of calls.filter((c) => c.status === 'completed')) {
    const detail = await (await get(`/calls/${call.id}`)).json();
    assert.ok(detail.transcript.length >= 2, 'a transcript');
    for (const turn of detail.transcript as Array<{ speaker: string; text: string }>)
      assert.doesNotMatch(turn.text, /\{\{|\[[a-z ]+\]/i, 'every blank is filled');
    assert.ok(detail.costItems.length > 0 && Number(detail.totalCostUsd) > 0, 'costs');
  }
  for (const call of answered) {
    const recording = await fetch(`${first.url}/api/v1/calls/${call.id}/asset-url?asset=recording`);
    assert.equal(recording.status, 401, 'the signed URL needs credentials to be made');
  }
  const signed = (await (await get(`/calls/${answered[0]!.id}/asset-url?asset=recording`)).json()) as { url: string };
  const wav = await fetch(new URL(signed.url, first.url));
  assert.equal(wav.status, 200);
  assert.equal(
    Buffer.from(await wav.arrayBuffer())
      .subarray(0, 4)
      .toString(),
    'RIFF',
  );
}

/** The README's three commands to see the demo's calls, as written, run by bash: they list all eight. */
async function checkDemoCommands(url: string, dir: string) {
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
  const section = readme.slice(readme.indexOf('- **The demo**'), readme.indexOf('## A five-minute tour'));
  const block = /```sh\n([\s\S]*?)```/.exec(section)![1]!.replace(/^ {2}/gm, '');
  assert.deepEqual(block.trim().split('\n'), demoCommands('http://127.0.0.1:3000/api'), 'the README shows them');
  const script = block.replaceAll('http://127.0.0.1:3000/api', `${url}/api`);
  const output = await new Promise<string>((resolve, reject) => {
    const bash = spawn('bash', ['-c', script], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    let text = '';
    bash.stdout.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
    bash.stderr.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
    bash.on('close', (code) => (code === 0 ? resolve(text) : reject(new Error(`exit ${code}: ${text}`))));
  });
  assert.match(output, /"total":8,"limit":25/, output);
}

/** A second start finds the demo account and adds nothing. */
async function checkDemoAgain(second: Demo) {
  const demo = { email: 'demo@parley.example', password: 'parley demo password' };
  assert.equal((second.line.demo as { created: boolean }).created, false);
  assert.match(second.line.msg!, /^demo account already there: sign in as demo@parley\.example/);
  const again = await signIn(second.url, demo);
  assert.equal((await (await again('/calls')).json()).total, 8, 'no new calls');
  assert.equal((await (await again('/agents')).json()).agents.length, 2);
}

/** The README's tour block itself, as written, run by bash against `url` from the directory `dir`. */
function runTour(url: string, dir: string) {
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
  const section = readme.slice(readme.indexOf('## A five-minute tour'));
  const script = /```sh\n([\s\S]*?)```/.exec(section)![1]!;
  assert.match(script, /^BASE=http:\/\/127\.0\.0\.1:3000\/api$/m);
  return new Promise<{ code: number | null; output: string }>((resolve) => {
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
}

async function checkTour(url: string, dir: string, run: 1 | 2) {
  const { code, output } = await runTour(url, dir);
  assert.equal(code, 0, output);
  if (run === 2) assert.match(output, /"error":"conflict"/, 'the second run is told the email is taken, then signs in');
  assert.match(output, /"status":"completed"/);
  assert.match(output, /"speaker":"agent"/, 'the transcript');
  assert.match(output, /"error":"validation_failed"/);
  assert.equal((await readFile(join(dir, 'ada.wav'))).subarray(0, 4).toString(), 'RIFF');
}

test('the demo and the README tour on the real server, and again after a restart', {
  skip: PGLITE_PASS_ONLY,
  concurrency: true,
}, async (t: TestContext) => {
  const tourDir = await mkdtemp(join(tmpdir(), 'parley-tour-'));
  try {
    const first = await startDemo();
    await Promise.all([
      t.test(
        'the demo account, its agents, list, number and calls with transcripts, recordings and costs',
        async () => {
          await checkDemo(first);
          await checkDemoCommands(first.url, tourDir);
        },
      ),
      t.test('the README tour, as written, runs against it', () => checkTour(first.url, tourDir, 1)),
    ]);
    await first.stop();
    const second = await startDemo();
    await Promise.all([
      t.test('a second start finds the demo account and adds nothing', () => checkDemoAgain(second)),
      t.test('the README tour runs again: the email is taken, so it signs in', () => checkTour(second.url, tourDir, 2)),
    ]);
    await second.stop();
  } finally {
    await rm(tourDir, { recursive: true, force: true });
  }
});
