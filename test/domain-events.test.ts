/**
 * Domain events: written in the same transaction as the change, handed to each subscriber through a job, and
 * recorded once by the audit log even when delivered twice or across a restart.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { pino } from 'pino';
import { buildTestApp, createTestDatabase, signUp, type SignedUp, type TestApp } from './helpers.js';
import { startJobWorkers, type JobWorkers } from '../src/background.js';
import { JOBS_SCHEMA } from '../src/jobs/queue.js';

const log = pino({ level: 'silent' });

let t: TestApp;
before(async () => (t = await buildTestApp()));
after(async () => t.close());

function startWorkers(app: TestApp): Promise<JobWorkers> {
  return startJobWorkers({ db: app.infra.database.db, services: app.services, log, pollingIntervalSeconds: 0.5 });
}

async function auditLog(app: TestApp, user: SignedUp, query = '') {
  const response = await app.app.inject({ method: 'GET', url: `/api/v1/audit-events${query}`, headers: user.headers });
  assert.equal(response.statusCode, 200, response.body);
  return response.json() as {
    auditEvents: Array<{
      id: string;
      type: string;
      subject: { type: string; id: string };
      actor: unknown;
      data: Record<string, unknown>;
    }>;
    total: number;
  };
}

/** How many audit.record jobs are still to run (waiting, being retried or running). */
async function auditJobsPending(app: TestApp): Promise<number> {
  const { rows } = await sql<{ pending: number }>`
    SELECT count(*)::int AS pending FROM ${sql.table(`${JOBS_SCHEMA}.job`)}
    WHERE name = 'audit.record' AND state IN ('created', 'retry', 'active')`.execute(app.infra.database.db);
  return rows[0]!.pending;
}

/**
 * Waits until every audit.record job has run and the log holds at least `count` events, then checks it holds
 * exactly that many: once no delivery is left to run, no more can arrive.
 */
async function auditLogSettlesAt(app: TestApp, user: SignedUp, count: number) {
  let log = await auditLog(app, user, '?limit=100');
  for (let i = 0; i < 600 && ((await auditJobsPending(app)) > 0 || log.total < count); i++) {
    await sleep(50);
    log = await auditLog(app, user, '?limit=100');
  }
  assert.equal(await auditJobsPending(app), 0, 'every delivery has run');
  log = await auditLog(app, user, '?limit=100');
  assert.equal(log.total, count, `audit log: ${log.auditEvents.map((e) => e.type).join(', ')}`);
  return log;
}

async function storedEvents(app: TestApp, accountId: string) {
  return app.infra.database.db
    .selectFrom('domain_events')
    .selectAll()
    .where('account_id', '=', accountId)
    .orderBy('occurred_at')
    .execute();
}

test('each change writes one domain event; a refused change writes none', async () => {
  const user = await signUp(t.app);
  const call = (method: 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) =>
    t.app.inject({
      method,
      url: `/api/v1${url}`,
      headers: user.headers,
      ...(payload === undefined ? {} : { payload }),
    });
  const agent = (await call('POST', '/agents', { name: 'Setter', mission: 'Book a demo' })).json();
  assert.equal((await call('PATCH', `/agents/${agent.id}`, { mission: 'Book two demos' })).statusCode, 200);
  assert.equal(
    (await call('PATCH', `/agents/${agent.id}`, { mission: 'Book two demos' })).statusCode,
    200,
    'a save that changes nothing',
  );
  assert.equal(
    (await call('PATCH', `/agents/${agent.id}`, { voicemail: { action: 'leave_message' } })).statusCode,
    400,
  );
  assert.equal((await call('DELETE', `/agents/${agent.id}`)).statusCode, 200);
  assert.equal((await call('DELETE', `/agents/${agent.id}`)).statusCode, 404);
  assert.equal((await call('POST', '/dnc', { phone: '+14155552671', reason: 'asked' })).statusCode, 200);
  assert.equal((await call('POST', '/dnc', { phone: '+14155552671' })).statusCode, 200, 'already listed');
  assert.equal((await call('DELETE', `/dnc/${encodeURIComponent('+14155552671')}`)).statusCode, 200);

  const events = await storedEvents(t, user.accountId);
  assert.deepEqual(
    events.map((e) => e.type),
    ['api_key.created', 'agent.created', 'agent.updated', 'agent.deleted', 'dnc.added', 'dnc.removed'],
  );
  const updated = events.find((e) => e.type === 'agent.updated')!;
  assert.deepEqual(updated.data, { changed: ['mission'], version: 2 });
  assert.equal(updated.subject_id, agent.id);
  assert.equal(updated.actor_api_key_id, user.apiKeyId);
});

test('the audit log records every event exactly once, even when an event is delivered twice', async () => {
  const user = await signUp(t.app);
  const headers = { ...user.headers, 'content-type': 'text/csv' };
  await t.app.inject({ method: 'POST', url: '/api/v1/agents', headers: user.headers, payload: { name: 'Audited' } });
  const imported = await t.app.inject({
    method: 'POST',
    url: '/api/v1/contact-lists?name=Leads&defaultCountry=US',
    headers,
    payload: 'Phone,First Name\n(415) 555-2671,Ada\n',
  });
  assert.equal(imported.statusCode, 200, imported.body);
  const contactId = (await t.app.inject({ method: 'GET', url: '/api/v1/contacts', headers: user.headers })).json()
    .contacts[0].id as string;
  await t.app.inject({
    method: 'PATCH',
    url: `/api/v1/contacts/${contactId}`,
    headers: user.headers,
    payload: { lastName: 'Lovelace' },
  });
  await t.app.inject({
    method: 'POST',
    url: '/api/v1/dnc/bulk',
    headers: user.headers,
    payload: ['+12125550123', '+14155552671'],
  });

  assert.equal((await auditLog(t, user)).total, 0, 'nothing is recorded before a worker runs');
  const workers = await startWorkers(t);
  try {
    const recorded = await auditLogSettlesAt(t, user, 5);
    assert.deepEqual(recorded.auditEvents.map((e) => e.type).sort(), [
      'agent.created',
      'api_key.created',
      'contact.updated',
      'contact_list.imported',
      'dnc.added',
    ]);
    const bulk = recorded.auditEvents.find((e) => e.type === 'dnc.added')!;
    assert.deepEqual(bulk.data, { added: 2, source: 'bulk' });
    assert.deepEqual(bulk.actor, { userId: null, apiKeyId: user.apiKeyId });

    // A redelivery (a retry after a crash mid-handler looks exactly like this) changes nothing.
    for (const event of await storedEvents(t, user.accountId))
      await t.infra.jobs.enqueue('audit.record', { eventId: event.id });
    await auditLogSettlesAt(t, user, 5);
  } finally {
    await workers.stop(5_000);
  }
  const filtered = await auditLog(t, user, `?subjectId=${contactId}`);
  assert.deepEqual(
    filtered.auditEvents.map((e) => e.type),
    ['contact.updated'],
  );
});

test('events written before a restart are delivered after it, once', async () => {
  const database = await createTestDatabase();
  const dataDir = await mkdtemp(join(tmpdir(), 'parley-events-'));
  try {
    const first = await buildTestApp({ database, dataDir });
    const user = await signUp(first.app);
    await first.app.inject({
      method: 'POST',
      url: '/api/v1/agents',
      headers: user.headers,
      payload: { name: 'Before the restart' },
    });
    await first.close();

    for (let run = 0; run < 2; run++) {
      const again = await buildTestApp({ database, dataDir });
      const workers = await startWorkers(again);
      try {
        await auditLogSettlesAt(again, user, 2);
      } finally {
        await workers.stop(5_000);
        await again.close();
      }
    }
  } finally {
    await rm(dataDir, { recursive: true, force: true });
    await database.drop();
  }
});

test('the audit log is for admins, and never shows another account', async () => {
  const owner = await signUp(t.app);
  const other = await signUp(t.app);
  await t.app.inject({ method: 'POST', url: '/api/v1/agents', headers: owner.headers, payload: { name: 'Private' } });
  const workers = await startWorkers(t);
  try {
    await auditLogSettlesAt(t, owner, 2);
  } finally {
    await workers.stop(5_000);
  }
  const seen = await auditLog(t, other, '?limit=100');
  assert.ok(
    seen.auditEvents.every((e) => e.type === 'api_key.created'),
    'only its own key',
  );
});
