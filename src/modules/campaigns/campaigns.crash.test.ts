/**
 * Crash safety of the dialer, with real worker processes on PostgreSQL: a worker (`src/main.ts --role worker`) dialing
 * a 100-contact campaign is killed with SIGKILL mid-campaign and a new one started. Every contact is dialled exactly
 * once (one call per attempt), none is lost: the calls cut off are closed as worker_lost and counted, the contacts it
 * had claimed go back to the queue, and the campaign completes. Skipped on the embedded database, which one process
 * owns.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { buildTestApp, createTestDatabase, type TestApp, type TestDatabase } from '../../../test/helpers.js';
import { api } from '../../../test/calls-kit.js';
import { assertEachContactCalledOnce, dialingAccount, waitForStats } from '../../../test/campaigns-kit.js';

const onPostgres = Boolean(process.env.DATABASE_URL);
const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const CONTACTS = 100;

let database: TestDatabase | undefined;
let t: TestApp | undefined;
const workers: ChildProcess[] = [];

after(async () => {
  for (const worker of workers) if (worker.exitCode === null && worker.signalCode === null) worker.kill('SIGKILL');
  await t?.close();
  await database?.drop();
});

/** A worker process on the test database; resolves once it says it started. */
async function startWorker(url: string): Promise<{ child: ChildProcess; exited: Promise<unknown> }> {
  const { DATABASE_URL: _db, ...inherited } = process.env;
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', '--role', 'worker'], {
    cwd: ROOT,
    env: {
      ...inherited,
      DATABASE_URL: url,
      LOG_LEVEL: 'info',
      TTS_PROVIDER: 'none',
      CAMPAIGN_TICK_SECONDS: '1',
      // Every number is busy: no live answers, so the pace governor has nothing to govern and would hold its start pace.
      CAMPAIGN_PACE_GOVERNOR: 'false',
      CAMPAIGN_DIAL_BATCH: '10',
      CAMPAIGN_CLAIM_TIMEOUT_SECONDS: '5',
      CALLS_HEARTBEAT_STALE_SECONDS: '2',
      CALLS_MAX_CONCURRENT_PER_ACCOUNT: '20',
      CALLS_PER_WORKER: '20',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  workers.push(child);
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise((resolve) => child.on('exit', resolve));
  await new Promise<void>((resolve, reject) => {
    let out = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
      if (out.includes('parley started')) resolve();
    });
    void exited.then((code) => reject(new Error(`worker exited (${code}) before it started: ${stderr}`)));
  });
  return { child, exited };
}

/** The UTC offset zone where it is now about 13:00, so the real clock is inside the calling window whenever this runs. */
function zoneAtMidday(now: Date): string {
  const offset = 13 - now.getUTCHours(); // -10 … +13
  return offset === 0 ? 'Etc/GMT' : `Etc/GMT${offset > 0 ? '-' : '+'}${Math.abs(offset)}`;
}

test('a worker killed with SIGKILL mid-campaign: every contact dialled exactly once, none lost', {
  skip: !onPostgres && 'PostgreSQL only',
}, async () => {
  database = await createTestDatabase({ from: 'template' });
  // This process serves the API only; the dialing is the worker processes'.
  t = await buildTestApp({ database, env: { RATE_LIMIT_PER_MINUTE: '100000' } });
  // Busy numbers (last digit 6): about a second of dialing each, on the real clock.
  const phones = Array.from({ length: CONTACTS }, (_, i) => `+1212555${String(i * 10 + 6).padStart(4, '0')}`);
  const zone = zoneAtMidday(new Date());
  const account = await dialingAccount(t, phones, { columns: { Timezone: phones.map(() => zone) } });
  const { ok } = api(t, account.user);
  const everyDay = { days: ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'], start: '09:00', end: '20:00' };
  const campaign = await ok('POST', '/campaigns', {
    name: 'Crash',
    agentId: account.agentId,
    contactListIds: [account.listId],
    schedule: everyDay,
    maxConcurrency: 10,
    callsPerMinute: 10_000,
  });

  const first = await startWorker(database.url!);
  await ok('POST', `/campaigns/${campaign.id}/start`);
  const before = await waitForStats(t, account.user, campaign.id, (s) => s.counts.dialed >= 25, 'the first worker');
  first.child.kill('SIGKILL');
  await first.exited;
  assert.ok(before.counts.dialed < CONTACTS, 'killed mid-campaign');

  const second = await startWorker(database.url!);
  const stats = await waitForStats(
    t,
    account.user,
    campaign.id,
    (s) => s.status === 'completed',
    'the campaign after the crash',
  );
  second.child.kill('SIGTERM');
  await second.exited;

  assert.equal(stats.counts.dialed, CONTACTS);
  assert.deepEqual(stats.contacts, { total: CONTACTS, finished: CONTACTS, remaining: 0, dueNow: 0, inCall: 0 });
  // Calls the kill cut off end as failed (worker_lost); the others are busy. Each is counted once.
  assert.equal(stats.counts.busy + stats.counts.failed, CONTACTS);
  const db = t.infra.database.db;
  await assertEachContactCalledOnce(db, campaign.id, CONTACTS);
  const attempts = await db
    .selectFrom('campaign_attempts')
    .select(['status', 'attempt_number', (eb) => eb.fn.countAll<string>().as('n')])
    .where('campaign_id', '=', campaign.id)
    .groupBy(['status', 'attempt_number'])
    .execute();
  assert.deepEqual(
    attempts.map((row) => ({ ...row, n: Number(row.n) })),
    [{ status: 'ended', attempt_number: 1, n: CONTACTS }],
  );
  const live = await db
    .selectFrom('calls')
    .select('id')
    .where('campaign_id', '=', campaign.id)
    .where('status', 'in', ['queued', 'dialing', 'ringing', 'connected'])
    .execute();
  assert.equal(live.length, 0, 'no call left queued or live');
});
