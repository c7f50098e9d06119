/**
 * The outbox's writes: in a transaction `inTransaction` opens, the events are gathered and written together just
 * before it commits (their jobs and their in-transaction subscribers' writes with them); an event with a subscriber
 * that acts on one event at a time is written when emitted, after those gathered before it.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { inTransaction } from '../db/repo.js';
import { systemClock } from '../lib/clock.js';
import { buildTestServices, newAccount, type TestServices } from '../../test/service-kit.js';
import type { DomainEvent, DomainEventType } from './domain-events.js';
import { createOutboxFactory, type OutboxQueue, type TransactionSubscriber } from './outbox.js';

let t: TestServices;
let accountId: string;
before(async () => {
  t = await buildTestServices();
  ({ accountId } = await newAccount(t));
});
after(async () => t.close());

/** An outbox whose jobs and subscribers note what they were given, and how many statements each part took. */
function recordingOutbox() {
  const seen: string[] = [];
  const jobs: OutboxQueue = {
    enqueue: async () => null,
    async enqueueAll(queued) {
      if (queued.length > 0) seen.push(`jobs ${queued.map((job) => job.queue).join(',')}`);
    },
  };
  const together: TransactionSubscriber = {
    name: 'together',
    events: ['agent.created', 'agent.updated'],
    run: async (event) => seen.push(`together ${event.subject.id}`),
    runAll: async (events) => seen.push(`together ${events.map((event) => event.subject.id).join(',')}`),
  };
  const oneByOne: TransactionSubscriber = {
    name: 'one by one',
    events: ['agent.deleted'],
    run: async (event) => seen.push(`one by one ${event.subject.id}`),
  };
  const outbox = createOutboxFactory({
    jobs,
    routes: [{ queue: 'audit', events: ['agent.created', 'agent.deleted'] }],
    clock: systemClock,
    inTransaction: [together, oneByOne],
  });
  return { outbox, seen };
}

const event = (type: DomainEventType, subject: string) =>
  ({
    type,
    accountId,
    subject: { type: 'agent', id: subject },
    data: type === 'agent.deleted' ? {} : type === 'agent.created' ? { name: 'A', status: 'draft', version: 1 } : {},
    actor: null,
  }) as Parameters<ReturnType<ReturnType<typeof recordingOutbox>['outbox']>['emit']>[0];

async function storedSubjects(subjects: string[]) {
  const rows = await t.db
    .selectFrom('domain_events')
    .select(['subject_id', 'type', 'data', 'occurred_at'])
    .where('account_id', '=', accountId)
    .where('subject_id', 'in', subjects)
    .orderBy('subject_id')
    .execute();
  return rows;
}

test('events of a transaction are written together before it commits, in order, with their jobs and subscribers', async () => {
  const { outbox, seen } = recordingOutbox();
  const emitted: DomainEvent[] = [];
  await inTransaction(t.db, async (trx) => {
    const tx = outbox(trx);
    emitted.push(await tx.emit(event('agent.created', 'g-1')));
    emitted.push(await tx.emit(event('agent.updated', 'g-2')));
    // Nothing written yet: the events wait for the end of the transaction's work.
    assert.equal(
      (await trx.selectFrom('domain_events').where('subject_id', 'like', 'g-%').selectAll().execute()).length,
      0,
    );
    assert.deepEqual(seen, []);
    emitted.push(await tx.emit(event('agent.created', 'g-3')));
  });
  assert.deepEqual(seen, ['jobs audit,audit', 'together g-1,g-2,g-3']);
  const rows = await storedSubjects(['g-1', 'g-2', 'g-3']);
  assert.deepEqual(
    rows.map((row) => row.subject_id),
    ['g-1', 'g-2', 'g-3'],
  );
  assert.deepEqual(rows[0]!.data, { name: 'A', status: 'draft', version: 1 });
  assert.deepEqual(
    rows.map((row) => row.occurred_at.getTime()),
    emitted.map((e) => e.occurredAt.getTime()),
  );
});

test('an event whose subscriber acts one event at a time is written when emitted, after those gathered before it', async () => {
  const { outbox, seen } = recordingOutbox();
  await inTransaction(t.db, async (trx) => {
    const tx = outbox(trx);
    await tx.emit(event('agent.updated', 'm-1'));
    await tx.emit(event('agent.deleted', 'm-2'));
    assert.deepEqual(seen, ['together m-1', 'jobs audit', 'one by one m-2']);
    assert.equal(
      (await trx.selectFrom('domain_events').where('subject_id', 'like', 'm-%').selectAll().execute()).length,
      2,
    );
    await tx.emit(event('agent.updated', 'm-3'));
  });
  assert.deepEqual(seen, ['together m-1', 'jobs audit', 'one by one m-2', 'together m-3']);
  assert.deepEqual(
    (await storedSubjects(['m-1', 'm-2', 'm-3'])).map((row) => row.subject_id),
    ['m-1', 'm-2', 'm-3'],
  );
});

test('a transaction that fails writes none of its events; one opened without inTransaction writes each as emitted', async () => {
  const { outbox, seen } = recordingOutbox();
  await assert.rejects(
    inTransaction(t.db, async (trx) => {
      await outbox(trx).emit(event('agent.created', 'r-1'));
      throw new Error('refused');
    }),
    /refused/,
  );
  assert.deepEqual(await storedSubjects(['r-1']), []);
  assert.deepEqual(seen, []);

  await t.db.transaction().execute(async (trx) => {
    await outbox(trx).emit(event('agent.created', 'u-1'));
    assert.deepEqual(seen, ['jobs audit', 'together u-1']);
  });
  assert.equal((await storedSubjects(['u-1'])).length, 1);
});
