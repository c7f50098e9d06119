/**
 * A deployment of several processes on PostgreSQL: a delivery written by the API process (here, this test's app, which
 * runs no workers) is sent by a separate worker process (`src/main.ts --role worker`) that looks for work only every
 * ten minutes. Only the wake-up carried between the processes (PostgreSQL LISTEN/NOTIFY here; Redis when configured)
 * can have made it send the delivery. Skipped on the embedded database, which one process owns.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { buildTestApp, createTestDatabase, signUp, type TestApp, type TestDatabase } from '../../../test/helpers.js';
import { api } from '../../../test/calls-kit.js';
import { publishedWebhookBodies, startReceiver } from '../../../test/webhook-receiver.js';

const onPostgres = Boolean(process.env.DATABASE_URL);
const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

let database: TestDatabase | undefined;
let t: TestApp | undefined;
let worker: ChildProcess | undefined;
const closing: Array<() => Promise<void>> = [];

after(async () => {
  if (worker && worker.exitCode === null && worker.signalCode === null) worker.kill('SIGKILL');
  for (const close of closing) await close();
  await t?.close();
  await database?.drop();
});

/** A worker process on the test database that polls every 10 minutes; resolves once it says it started. */
async function startWorker(url: string): Promise<ChildProcess> {
  const { DATABASE_URL: _db, REDIS_URL: _redis, ...inherited } = process.env;
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', '--role', 'worker'], {
    cwd: ROOT,
    env: {
      ...inherited,
      DATABASE_URL: url,
      LOG_LEVEL: 'info',
      JOBS_POLL_SECONDS: '600',
      WEBHOOK_ALLOW_PRIVATE: 'true',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  await new Promise<void>((resolve, reject) => {
    let out = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
      if (out.includes('parley started')) resolve();
    });
    child.on('exit', (code) => reject(new Error(`worker exited (${code}) before it started: ${stderr}`)));
  });
  return child;
}

test('a delivery written in the API process is sent at once by a worker process that polls every 10 minutes', {
  skip: !onPostgres && 'PostgreSQL only',
}, async () => {
  database = await createTestDatabase({ from: 'template' });
  // No Redis for either process: both reach each other through the database.
  t = await buildTestApp({ database, env: { WEBHOOK_ALLOW_PRIVATE: 'true', REDIS_URL: '' } });
  let secret = '';
  const target = await startReceiver({ secret: () => secret, bodies: await publishedWebhookBodies(t.app) });
  closing.push(() => target.close());
  worker = await startWorker(database.url!);

  // Written after the worker looked for work at its start: its next look is 10 minutes away.
  const user = await signUp(t.app);
  const { ok } = api(t, user);
  const endpoint = await ok('POST', '/webhooks', { url: target.url });
  secret = endpoint.secret;
  const { deliveryId } = await ok('POST', `/webhooks/${endpoint.id}/test`);

  for (let i = 0; i < 600 && !target.received.some((r) => r.deliveryId === deliveryId); i++) await sleep(50);
  const arrived = target.received.filter((r) => r.deliveryId === deliveryId);
  assert.equal(arrived.length, 1, 'the worker process sent the delivery once');
  assert.equal(arrived[0]!.body.type, 'webhook.test');
  // The attempt is recorded just after the answer arrives.
  let log = await ok('GET', `/webhooks/${endpoint.id}/deliveries/${deliveryId}`);
  for (let i = 0; i < 100 && log.state === 'pending'; i++) {
    await sleep(50);
    log = await ok('GET', `/webhooks/${endpoint.id}/deliveries/${deliveryId}`);
  }
  assert.equal(log.state, 'succeeded');
  assert.equal(log.attempts.length, 1);
});
