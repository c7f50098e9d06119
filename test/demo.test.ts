/**
 * `npm run demo` as a newcomer runs it: the real server with --demo on an empty data directory creates the demo
 * account, whose calls run through the engine on the simulated network; a second start finds it and adds nothing.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const dataDir = await mkdtemp(join(tmpdir(), 'parley-demo-'));
after(() => rm(dataDir, { recursive: true, force: true }));

interface LogLine {
  msg?: string;
  [field: string]: unknown;
}

/** Starts the server with --demo and resolves once the demo's log line is out. */
async function startDemo() {
  const { DATABASE_URL: _db, REDIS_URL: _redis, ...inherited } = process.env;
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', '--demo'], {
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

test('the demo account, its agents, list, number and calls with transcripts, recordings and costs; twice is harmless', async () => {
  const first = await startDemo();
  const demo = first.line.demo as { email: string; password: string; created: boolean; calls: number };
  assert.equal(demo.created, true);
  assert.equal(demo.calls, 5);
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
  assert.equal((await (await get('/contacts')).json()).total, 5);

  // The calls really run: wait until every one has ended.
  let calls: Array<{
    id: string;
    status: string;
    endReason: string | null;
    recordingStorageKey: string | null;
    totalCostUsd: string;
  }> = [];
  for (let i = 0; i < 600; i++) {
    calls = (await (await get('/calls?limit=25')).json()).calls;
    if (calls.length === 5 && calls.every((c) => ['completed', 'failed', 'busy', 'no_answer'].includes(c.status)))
      break;
    await sleep(500);
  }
  assert.deepEqual(
    calls.map((c) => c.status),
    ['completed', 'completed', 'completed', 'completed', 'completed'],
    `the calls' ends: ${calls.map((c) => `${c.status} (${c.endReason})`).join(', ')}`,
  );
  const answered = calls.filter((c) => c.recordingStorageKey !== null);
  assert.ok(answered.length >= 4, 'the answered calls have recordings');
  for (const call of answered) {
    const detail = await (await get(`/calls/${call.id}`)).json();
    assert.ok(detail.transcript.length >= 2, 'a transcript');
    assert.ok(detail.costItems.length > 0 && Number(detail.totalCostUsd) > 0, 'costs');
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
  await first.stop();

  const second = await startDemo();
  assert.equal((second.line.demo as { created: boolean }).created, false);
  assert.match(second.line.msg!, /^demo account already there: sign in as demo@parley\.example/);
  const again = await signIn(second.url, demo);
  assert.equal((await (await again('/calls')).json()).total, 5, 'no new calls');
  assert.equal((await (await again('/agents')).json()).agents.length, 2);
  await second.stop();
});
