/**
 * The job queue (pg-boss in our own database) on whichever storage the run uses: PGlite by default,
 * PostgreSQL when DATABASE_URL is set.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Type } from 'typebox';
import { pino } from 'pino';
import pg from 'pg';
import { buildTestApp, createTestDatabase, signUp, type TestApp, type TestDatabase } from './helpers.js';
import { newId } from '../src/lib/ids.js';
import { jobRegistry, workerLoops } from '../src/background.js';
import type { JobRegistry } from '../src/jobs/define.js';
import { ensureQueues } from '../src/jobs/queue.js';
import { startJobWorkers, type JobWorkers } from '../src/jobs/workers.js';
import { createSqlExecutor } from '../src/jobs/sql-executor.js';

const log = pino({ level: 'silent' });
const DAY_MS = 86_400_000;

let t: TestApp;
before(async () => (t = await buildTestApp({ database: await createTestDatabase({ from: 'template' }) })));
after(async () => {
  await t.close();
  if (t.database.url) await dropOnceDisconnected(t.database);
});

function startWorkers(app: TestApp, registry: JobRegistry = jobRegistry): Promise<JobWorkers> {
  return startJobWorkers({
    db: app.infra.database.db,
    services: app.services,
    log,
    registry,
    loops: registry === jobRegistry ? workerLoops : {},
    pollingIntervalSeconds: 0.5,
  });
}

/** Waits (bounded) until the job reaches one of `states`, and answers it. */
async function waitForJob(app: TestApp, name: string, id: string, states: string[]) {
  let job = await app.infra.jobs.boss.getJobById(name, id);
  for (let i = 0; i < 300 && !(job && states.includes(job.state)); i++) {
    await sleep(100);
    job = await app.infra.jobs.boss.getJobById(name, id);
  }
  assert.ok(
    job && states.includes(job.state),
    `job ${name} ${id} is ${job?.state ?? 'missing'}, expected ${states.join(' or ')}`,
  );
  return job;
}

test('a job sent inside a transaction exists only if that transaction commits (outbox)', async () => {
  const db = t.infra.database.db;
  const rolledBackAccount = newId();
  let rolledBackJob: string | null = null;
  await assert.rejects(
    db.transaction().execute(async (trx) => {
      await trx.insertInto('accounts').values({ id: rolledBackAccount, name: 'outbox rollback' }).execute();
      rolledBackJob = await t.infra.jobs.send('sessions.purge', {}, { trx });
      throw new Error('abort the write');
    }),
    /abort the write/,
  );
  assert.ok(rolledBackJob, 'the send inside the transaction answered an id');
  assert.equal(await t.infra.jobs.boss.getJobById('sessions.purge', rolledBackJob), null);
  assert.equal(
    await db.selectFrom('accounts').select('id').where('id', '=', rolledBackAccount).executeTakeFirst(),
    undefined,
  );

  const committedAccount = newId();
  const committedJob = await db.transaction().execute(async (trx) => {
    await trx.insertInto('accounts').values({ id: committedAccount, name: 'outbox commit' }).execute();
    return t.infra.jobs.send('sessions.purge', {}, { trx });
  });
  assert.ok(committedJob);
  const job = await t.infra.jobs.boss.getJobById('sessions.purge', committedJob);
  assert.equal(job?.state, 'created');
  assert.deepEqual(job?.data, {});
  assert.ok(await db.selectFrom('accounts').select('id').where('id', '=', committedAccount).executeTakeFirst());
  await t.infra.jobs.boss.deleteJob('sessions.purge', committedJob);
});

test('a pg-boss script that fails midway does not leave the connection inside an aborted transaction', async () => {
  const db = t.infra.database.db;
  const executor = createSqlExecutor(db);
  const [abandoned, kept] = [newId(), newId()];
  await assert.rejects(
    executor.executeSql(
      `BEGIN; INSERT INTO accounts (id, name) VALUES ('${abandoned}', 'abandoned'); SELECT 1/0; COMMIT;`,
    ),
    /division by zero/,
  );
  // On PGlite there is one connection: without the rollback every later query would fail.
  assert.deepEqual((await executor.executeSql('SELECT 1 AS one')).rows, [{ one: 1 }]);
  // The script's own write was rolled back, not left pending...
  assert.equal(await db.selectFrom('accounts').select('id').where('id', '=', abandoned).executeTakeFirst(), undefined);
  // ...and a later write commits on its own: a ROLLBACK after it finds no open transaction to undo it with.
  await db.insertInto('accounts').values({ id: kept, name: 'kept' }).execute();
  await executor.executeSql('ROLLBACK');
  assert.deepEqual(await db.selectFrom('accounts').select('id').where('id', '=', kept).executeTakeFirst(), {
    id: kept,
  });
});

test('sending the same job id twice enqueues it once', async () => {
  const id = newId();
  assert.equal(await t.infra.jobs.send('sessions.purge', {}, { id }), id);
  assert.equal(await t.infra.jobs.send('sessions.purge', {}, { id }), null);
  await t.infra.jobs.boss.deleteJob('sessions.purge', id);
});

test('a worker runs sessions.purge: sessions dead for over a day go, the rest stay', async () => {
  const user = await signUp(t.app);
  const db = t.infra.database.db;
  const now = Date.now();
  const session = (label: string, expiresAt: number, revokedAt: number | null) => ({
    id: newId(),
    token_hash: `${label}-${newId()}`,
    user_id: user.userId,
    account_id: user.accountId,
    ip: null,
    user_agent: label,
    expires_at: new Date(expiresAt),
    revoked_at: revokedAt === null ? null : new Date(revokedAt),
  });
  await db
    .insertInto('sessions')
    .values([
      session('expired two days ago', now - 2 * DAY_MS, null),
      session('revoked two days ago', now + DAY_MS, now - 2 * DAY_MS),
      session('expired an hour ago', now - 3_600_000, null),
      session('revoked an hour ago', now + DAY_MS, now - 3_600_000),
    ])
    .execute();

  const workers = await startWorkers(t);
  try {
    const id = await t.infra.jobs.send('sessions.purge', {});
    assert.ok(id);
    const job = await waitForJob(t, 'sessions.purge', id, ['completed', 'failed']);
    assert.equal(job.state, 'completed');
    assert.deepEqual(job.output, { deleted: 2 });
  } finally {
    await workers.stop(5_000);
  }
  const left = await db.selectFrom('sessions').select('user_agent').where('user_id', '=', user.userId).execute();
  assert.deepEqual(left.map((s) => s.user_agent).sort(), [
    'expired an hour ago',
    'lightMyRequest',
    'revoked an hour ago',
  ]);
  const me = await t.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: { cookie: user.cookie } });
  assert.equal(me.statusCode, 200, 'the live session still signs in');
});

test("the worker role schedules the registry's jobs (UTC), and only registered schedules", async () => {
  await t.infra.jobs.boss.createQueue('retired.job', { name: 'retired.job' });
  await t.infra.jobs.boss.schedule('retired.job', '*/5 * * * *');
  const workers = await startWorkers(t);
  try {
    const schedules = await t.infra.jobs.boss.getSchedules();
    assert.deepEqual(
      // pg-boss's rows carry the time zone, though its types leave it out.
      schedules
        .map((s) => ({ name: s.name, cron: s.cron, timezone: (s as { timezone?: string }).timezone }))
        .sort((a, b) => a.name.localeCompare(b.name)),
      // Every schedule the registry declares, and nothing else (the retired one is gone).
      Object.entries(jobRegistry)
        .filter(([, job]) => job.schedule !== undefined)
        .map(([name, job]) => ({ name, cron: job.schedule, timezone: 'UTC' }))
        .sort((a, b) => a.name.localeCompare(b.name)),
    );
    assert.ok(schedules.some((s) => s.name === 'sessions.purge' && s.cron === '0 * * * *'));
  } finally {
    await workers.stop(5_000);
  }
});

test("queues are created once and their stored policy follows the definition's, written only when it changed", async () => {
  const boss = t.infra.jobs.boss;
  const writes: string[] = [];
  const spy = Object.create(boss) as typeof boss;
  spy.createQueue = (name, options) => (writes.push(`create ${name}`), boss.createQueue(name, options));
  spy.updateQueue = (name, options) => (writes.push(`update ${name}`), boss.updateQueue(name, options));
  const definition = (policy: JobRegistry[string]['policy']): JobRegistry => ({
    'test.policy': { payload: Type.Object({}), policy, async run() {} },
  });

  await ensureQueues(spy, definition({ retryLimit: 1, expireInSeconds: 60 }));
  assert.deepEqual(writes, ['create test.policy', 'update test.policy']);
  await ensureQueues(spy, definition({ retryLimit: 1, expireInSeconds: 60 }));
  assert.deepEqual(writes.length, 2, 'nothing written when nothing changed');
  await ensureQueues(spy, definition({ retryLimit: 3, expireInSeconds: 60 }));
  assert.deepEqual(writes.slice(2), ['update test.policy']);
  const stored = await boss.getQueue('test.policy');
  assert.equal(stored?.retryLimit, 3);
  assert.equal(stored?.expireInSeconds, 60);
});

test('a payload that does not match its schema fails the job without running the handler', async () => {
  const calls: unknown[] = [];
  const registry: JobRegistry = {
    'test.strict': {
      payload: Type.Object({ count: Type.Integer() }, { additionalProperties: false }),
      policy: { retryLimit: 0 },
      async run(payload) {
        calls.push(payload);
      },
    },
  };
  const workers = await startWorkers(t, registry);
  try {
    const bad = await t.infra.jobs.boss.send('test.strict', { count: 'three' });
    const good = await t.infra.jobs.boss.send('test.strict', { count: 3 });
    assert.ok(bad && good);
    const failed = await waitForJob(t, 'test.strict', bad, ['failed']);
    assert.match(JSON.stringify(failed.output), /does not match its schema/);
    await waitForJob(t, 'test.strict', good, ['completed']);
    assert.deepEqual(calls, [{ count: 3 }]);
  } finally {
    await workers.stop(5_000);
  }
});

test('stopping the workers lets a running job finish first', async () => {
  const events: string[] = [];
  let started!: () => void;
  const handlerStarted = new Promise<void>((resolve) => (started = resolve));
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const registry: JobRegistry = {
    'test.slow': {
      payload: Type.Object({}),
      async run() {
        started();
        await gate;
        events.push('handler finished');
        return { finished: true };
      },
    },
  };
  const workers = await startWorkers(t, registry);
  const id = await t.infra.jobs.boss.send('test.slow', {});
  assert.ok(id);
  await handlerStarted;
  const stopping = workers.stop(20_000).then(() => events.push('workers stopped'));
  setTimeout(release, 300);
  await stopping;
  assert.deepEqual(events, ['handler finished', 'workers stopped']);
  const job = await t.infra.jobs.boss.getJobById('test.slow', id);
  assert.equal(job?.state, 'completed');
  assert.deepEqual(job?.output, { finished: true });
});

test('a queued job survives a restart and runs after it', async () => {
  // The same database as the file's app: PostgreSQL's when DATABASE_URL is set, else a PGlite data directory.
  const dataDir = await mkdtemp(join(tmpdir(), 'parley-jobs-'));
  try {
    const first = await buildTestApp({ database: t.database, dataDir });
    const id = await first.infra.jobs.send('sessions.purge', {});
    assert.ok(id);
    await first.close();

    const second = await buildTestApp({ database: t.database, dataDir });
    try {
      assert.equal((await second.infra.jobs.boss.getJobById('sessions.purge', id))?.state, 'created');
      const workers = await startWorkers(second);
      try {
        const job = await waitForJob(second, 'sessions.purge', id, ['completed', 'failed']);
        assert.equal(job.state, 'completed');
      } finally {
        await workers.stop(5_000);
      }
    } finally {
      await second.close();
    }
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
});

/**
 * pg's Pool.end() resolves before its sockets have closed; DROP DATABASE ... WITH (FORCE) in that window
 * kills those connections and the pool, which has no 'error' listener, throws. Wait until the server
 * sees no connection to the database first.
 */
async function dropOnceDisconnected(database: TestDatabase) {
  const name = new URL(database.url!).pathname.slice(1);
  const admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await admin.connect();
  try {
    const connected = async () =>
      Number((await admin.query('SELECT count(*) AS n FROM pg_stat_activity WHERE datname = $1', [name])).rows[0].n);
    for (let i = 0; i < 100 && (await connected()) > 0; i++) await sleep(50);
  } finally {
    await admin.end();
  }
  await database.drop();
}

test('two instances starting at once on a fresh PostgreSQL database both come up', {
  skip: !process.env.DATABASE_URL && 'DATABASE_URL is not set',
}, async () => {
  const database = await createTestDatabase();
  try {
    // Both race to install pg-boss's schema; the install lock makes the second find it installed.
    const apps = await Promise.all([buildTestApp({ database }), buildTestApp({ database })]);
    try {
      for (const app of apps) {
        assert.ok(await app.infra.jobs.send('sessions.purge', {}));
        assert.equal((await app.app.inject({ method: 'GET', url: '/api/health' })).statusCode, 200);
      }
    } finally {
      await Promise.all(apps.map((app) => app.close()));
    }
  } finally {
    await dropOnceDisconnected(database);
  }
});
