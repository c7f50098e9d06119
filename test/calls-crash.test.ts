/**
 * Crash safety of the call engine, with the real server: a process killed with SIGKILL in the middle of a call leaves
 * the call live in the database; once a worker starts again the call is closed as failed (worker_lost), with its
 * costs to its last sign of life, and no call is left live.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { createTestDatabase } from './helpers.js';
import { LIVE_CALL_STATUSES } from '../src/modules/calls/calls.tables.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

interface Server {
  child: ChildProcess;
  url: string;
  exited: Promise<number | null>;
}

/** Starts `src/main.ts` with only the environment given, and waits for its "parley started" line. */
async function startServer(env: Record<string, string>): Promise<Server> {
  const { DATABASE_URL: _db, REDIS_URL: _redis, ...inherited } = process.env;
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: ROOT,
    env: {
      ...inherited,
      HOST: '127.0.0.1',
      PORT: '0',
      LOG_LEVEL: 'info',
      TTS_PROVIDER: 'none',
      CALLS_HEARTBEAT_STALE_SECONDS: '2',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    let pending = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      pending += chunk;
      for (let at = pending.indexOf('\n'); at >= 0; at = pending.indexOf('\n')) {
        const line = pending.slice(0, at);
        pending = pending.slice(at + 1);
        try {
          const parsed = JSON.parse(line) as { msg?: string; url?: string };
          if (parsed.msg?.startsWith('parley started') && parsed.url) resolve(parsed.url);
        } catch {
          // not a log line
        }
      }
    });
    void exited.then((code) => reject(new Error(`server exited (${code}) before it started: ${stderr}`)));
  });
  return { child, url, exited };
}

async function crashMidCall(env: Record<string, string>) {
  const first = await startServer(env);
  const base = `${first.url}/api/v1`;
  const send = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: {
        ...(body === undefined ? {} : { 'content-type': typeof body === 'string' ? 'text/csv' : 'application/json' }),
        ...headers,
      },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await response.text();
    assert.ok(response.ok, `${method} ${path}: ${response.status} ${text}`);
    return JSON.parse(text) as Record<string, any>;
  };
  const register = await fetch(`${base}/auth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: `crash-${Date.now()}@example.com`, password: 'correct horse battery' }),
  });
  const cookie = register.headers
    .getSetCookie()
    .find((c) => c.startsWith('vsid='))!
    .split(';')[0]!;
  const { key } = await send('POST', '/api-keys', { name: 'crash' }, { cookie });
  const auth = { authorization: `Bearer ${key}` };
  const agent = await send(
    'POST',
    '/agents',
    { name: 'Steady', status: 'active', firstMessage: 'Hello, this is Steady from Acme calling about your account.' },
    auth,
  );
  await send('POST', '/phone-numbers', { number: '+14155552671' }, auth);
  const { listId } = await send('POST', '/contact-lists?name=L&defaultCountry=US', 'Phone\n+14155550110\n', auth);
  const [contact] = (await send('GET', `/contacts?listId=${listId}`, undefined, auth)).contacts;
  const { callId } = await send('POST', `/crm/contacts/${contact.id}/call`, { agentId: agent.id }, auth);

  // Killed once the call is connected and its first turn is spoken.
  let live: Record<string, any> = {};
  for (let i = 0; i < 600 && !(live.status === 'connected' && live.transcript?.length >= 1); i++) {
    live = await send('GET', `/calls/${callId}`, undefined, auth);
    await sleep(100);
  }
  assert.equal(live.status, 'connected', 'the call is live when the process dies');
  first.child.kill('SIGKILL');
  await first.exited;

  const second = await startServer(env);
  try {
    const again = async (path: string) => {
      const response = await fetch(`${second.url}/api/v1${path}`, { headers: auth });
      assert.equal(response.status, 200);
      return (await response.json()) as Record<string, any>;
    };
    let call: Record<string, any> = {};
    for (let i = 0; i < 900 && call.status !== 'failed'; i++) {
      call = await again(`/calls/${callId}`);
      await sleep(100);
    }
    assert.equal(call.status, 'failed');
    assert.equal(call.endReason, 'worker_lost');
    assert.ok(call.answeredAt, 'it had connected');
    assert.ok(call.durationSeconds >= 1, 'connected time up to its last heartbeat');
    assert.ok(call.endedAt >= call.answeredAt);
    assert.ok(call.transcript.length >= 1, 'what was said stays');
    const kinds = call.costItems.map((item: { kind: string }) => item.kind);
    assert.ok(kinds.includes('telephony') && kinds.includes('platform'), `costs to that moment: ${kinds}`);
    const events = (await again(`/calls/${callId}/events?limit=500`)).events as Array<{
      type: string;
      data: { endReason?: string };
    }>;
    assert.equal(events.at(-1)!.type, 'call.failed');
    assert.equal(events.at(-1)!.data.endReason, 'worker_lost');
    for (const status of LIVE_CALL_STATUSES)
      assert.equal((await again(`/calls?status=${status}`)).total, 0, `no call left ${status}`);
  } finally {
    second.child.kill('SIGTERM');
    await second.exited;
  }
}

test('on PGlite: a call cut off by SIGKILL is closed as worker_lost when the server starts again', async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'parley-crash-'));
  try {
    await crashMidCall({ DATA_DIR: dataDir });
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
});

test('on PostgreSQL: the same, found by its stale heartbeat', {
  skip: !process.env.DATABASE_URL && 'DATABASE_URL is not set',
}, async () => {
  const database = await createTestDatabase();
  try {
    await crashMidCall({
      DATABASE_URL: database.url!,
      ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {}),
    });
  } finally {
    await database.drop();
  }
});
