/**
 * The disposition codes' rules, through the service (no HTTP): the default set, system codes, duplicates, saves
 * that change nothing, domain events, and what the calls module asks. The HTTP contract (statuses, bodies,
 * validation, access) is in dispositions.test.ts.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { AppError } from '../../lib/errors.js';
import { buildTestServices, newAccount, type TestServices } from '../../../test/service-kit.js';
import { systemClock } from '../../lib/clock.js';
import type { OutboxFactory } from '../../events/outbox.js';
import { DEFAULT_DISPOSITIONS } from './dispositions.defaults.js';
import { createDispositionsRepo } from './dispositions.repo.js';
import { createDispositionsService } from './dispositions.service.js';

let t: TestServices;
before(async () => (t = await buildTestServices()));
after(() => t.close());

const all = { limit: 500, offset: 0 };
const codesOf = async (auth: Parameters<TestServices['services']['dispositions']['list']>[0], query = {}) =>
  (await t.services.dispositions.list(auth, { ...all, ...query })).dispositionCodes;

const rowCount = async (accountId: string) =>
  (
    await t.db
      .selectFrom('disposition_codes')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('account_id', '=', accountId)
      .executeTakeFirstOrThrow()
  ).n;

/** Asserts that `work` fails with the AppError `code` and a message matching `message`. */
async function refused(work: Promise<unknown>, code: string, message: RegExp) {
  await assert.rejects(work, (error: unknown) => {
    assert.ok(error instanceof AppError, String(error));
    assert.equal(error.code, code);
    assert.match(error.message, message);
    return true;
  });
}

test("every account starts with the default set, the engine's codes marked as system; once", async () => {
  const { auth } = await newAccount(t);
  const codes = await codesOf(auth);
  assert.equal(codes.length, DEFAULT_DISPOSITIONS.length);
  const byCode = new Map(codes.map((c) => [c.code, c]));
  for (const code of [
    'interested',
    'not_interested',
    'callback_requested',
    'appointment_booked',
    'voicemail',
    'no_answer',
    'busy',
    'wrong_number',
    'do_not_call',
    'transferred',
    'failed',
  ]) {
    assert.ok(byCode.has(code), code);
  }
  for (const code of [
    'do_not_call',
    'voicemail',
    'hung_up',
    'transferred',
    'interested',
    'not_interested',
    'callback_requested',
    'no_answer',
    'busy',
    'failed',
  ]) {
    assert.equal(byCode.get(code)!.isSystem, true, code);
  }
  assert.equal(byCode.get('appointment_booked')!.isSystem, false);
  assert.equal(byCode.get('do_not_call')!.category, 'compliance');
  // Reading again does not add them twice, and another account gets its own set.
  assert.equal((await codesOf(auth)).length, DEFAULT_DISPOSITIONS.length);
  assert.equal(await rowCount(auth.accountId), DEFAULT_DISPOSITIONS.length);
  const theirs = await codesOf((await newAccount(t)).auth);
  assert.equal(theirs.length, DEFAULT_DISPOSITIONS.length);
  assert.ok(theirs.every((c) => byCode.get(c.code)?.id !== c.id));
});

test('create, list with filters, update and delete a code', async () => {
  const { auth } = await newAccount(t);
  const code = await t.services.dispositions.create(auth, {
    code: 'demo_scheduled',
    label: '  Demo scheduled ',
    category: 'positive',
    description: 'A demo is on the calendar.',
  });
  assert.equal(code.label, 'Demo scheduled', 'the label is trimmed');
  assert.equal(code.isSystem, false);
  assert.equal(code.active, true);

  const listed = await codesOf(auth);
  assert.equal(listed.length, DEFAULT_DISPOSITIONS.length + 1);
  assert.equal(listed[0]!.code, 'demo_scheduled', 'newest first');
  const positive = await codesOf(auth, { category: 'positive' });
  assert.ok(positive.every((c) => c.category === 'positive') && positive.some((c) => c.code === 'demo_scheduled'));

  const updated = await t.services.dispositions.update(auth, code.id, { label: 'Demo booked', active: false });
  assert.deepEqual(
    { label: updated.label, active: updated.active, code: updated.code },
    { label: 'Demo booked', active: false, code: 'demo_scheduled' },
  );
  assert.deepEqual(
    (await codesOf(auth, { active: false })).map((c) => c.code),
    ['demo_scheduled'],
  );
  assert.equal(await t.services.dispositions.isValidCode(auth.accountId, 'demo_scheduled'), false, 'inactive');
  assert.equal((await t.services.dispositions.resolve(auth.accountId, 'demo_scheduled'))?.label, 'Demo booked');

  assert.deepEqual(await t.services.dispositions.delete(auth, code.id), { id: code.id, deleted: true });
  await refused(t.services.dispositions.delete(auth, code.id), 'not_found', /Disposition code not found/);
  await refused(t.services.dispositions.update(auth, code.id, { label: 'x' }), 'not_found', /not found/);
  assert.equal(await t.services.dispositions.resolve(auth.accountId, 'demo_scheduled'), null);
});

test('a default that is not a system code can be deleted, stays deleted, and can be made again as its own', async () => {
  const { auth } = await newAccount(t);
  const wrongNumber = (await codesOf(auth)).find((c) => c.code === 'wrong_number')!;
  await t.services.dispositions.delete(auth, wrongNumber.id);
  const left = await codesOf(auth);
  assert.equal(left.length, DEFAULT_DISPOSITIONS.length - 1);
  assert.ok(!left.some((c) => c.code === 'wrong_number'));
  const again = await t.services.dispositions.create(auth, {
    code: 'wrong_number',
    label: 'Wrong person',
    category: 'negative',
  });
  assert.equal(again.isSystem, false);
});

test('an account that has its codes gets the system codes added since, never a default it deleted', async () => {
  const { auth } = await newAccount(t);
  const wrongNumber = (await codesOf(auth)).find((c) => c.code === 'wrong_number')!;
  await t.services.dispositions.delete(auth, wrongNumber.id);
  // As an account seeded before hung_up existed, seen by a process started since.
  await t.db
    .deleteFrom('disposition_codes')
    .where('account_id', '=', auth.accountId)
    .where('code', '=', 'hung_up')
    .execute();
  const noEvents: OutboxFactory = () => {
    throw new Error('seeding records no domain events');
  };
  const restarted = createDispositionsService({ repo: createDispositionsRepo(t.db, noEvents), clock: systemClock });
  assert.equal(await restarted.isValidCode(auth.accountId, 'hung_up'), true);
  assert.equal((await restarted.resolve(auth.accountId, 'hung_up'))?.isSystem, true);
  assert.equal(await restarted.resolve(auth.accountId, 'wrong_number'), null, 'a deleted default stays deleted');
  assert.equal(await rowCount(auth.accountId), DEFAULT_DISPOSITIONS.length - 1);
});

test("a template's codes are added once, never as system codes; codes the account has stay as they are", async () => {
  const { auth } = await newAccount(t);
  const vocabulary = [
    { code: 'confirmed', label: 'Confirmed', category: 'positive' as const, description: 'They will come.' },
    { code: 'interested', label: 'Keen', category: 'neutral' as const, description: 'Not this one.' },
  ];
  assert.equal(await t.services.dispositions.addMissing(auth.accountId, vocabulary), 1);
  assert.equal(await t.services.dispositions.addMissing(auth.accountId, vocabulary), 0);
  const byCode = new Map((await codesOf(auth)).map((c) => [c.code, c]));
  assert.equal(byCode.get('confirmed')!.isSystem, false);
  assert.equal(byCode.get('interested')!.label, 'Interested', 'a code already there is left alone');
});

test('system codes can be relabelled but not deleted or turned off', async () => {
  const { auth } = await newAccount(t);
  const dnc = (await codesOf(auth)).find((c) => c.code === 'do_not_call')!;
  await refused(
    t.services.dispositions.delete(auth, dnc.id),
    'conflict',
    /do_not_call.*system code.*cannot be deleted.*relabel/,
  );
  await refused(t.services.dispositions.update(auth, dnc.id, { active: false }), 'conflict', /stays active/);

  const relabelled = await t.services.dispositions.update(auth, dnc.id, {
    label: 'DNC — never call again',
    description: 'Added to the do-not-call list.',
  });
  assert.equal(relabelled.label, 'DNC — never call again');
  assert.equal(relabelled.isSystem, true);
  assert.equal(relabelled.active, true);
  assert.equal(await t.services.dispositions.isValidCode(auth.accountId, 'do_not_call'), true);
});

test('a duplicate code is refused; a save that changes nothing writes nothing', async () => {
  const { auth } = await newAccount(t);
  await refused(
    t.services.dispositions.create(auth, { code: 'voicemail', label: 'VM', category: 'neutral' }),
    'conflict',
    /"voicemail" already exists/,
  );
  const busy = (await codesOf(auth)).find((c) => c.code === 'busy')!;
  const same = await t.services.dispositions.update(auth, busy.id, { label: 'Busy', category: 'neutral' });
  assert.equal(same.updatedAt, busy.updatedAt, 'nothing was written');
  const row = await t.db
    .selectFrom('disposition_codes')
    .select('updated_at')
    .where('id', '=', busy.id)
    .executeTakeFirstOrThrow();
  assert.equal(row.updated_at.toISOString(), busy.updatedAt);
  await refused(t.services.dispositions.update(auth, busy.id, { label: '   ' }), 'validation_failed', /blank/);
});

test("another account's code is not found, exactly like a missing one", async () => {
  const alice = await newAccount(t);
  const bob = await newAccount(t);
  const own = await t.services.dispositions.create(alice.auth, { code: 'alice_only', label: 'A', category: 'neutral' });
  const system = (await codesOf(alice.auth)).find((c) => c.code === 'voicemail')!;
  for (const id of [own.id, system.id]) {
    await refused(t.services.dispositions.update(bob.auth, id, { label: 'mine now' }), 'not_found', /not found/);
    await refused(t.services.dispositions.delete(bob.auth, id), 'not_found', /not found/);
  }
  assert.equal(await t.services.dispositions.resolve(bob.accountId, 'alice_only'), null);
  assert.equal((await codesOf(alice.auth)).find((c) => c.code === 'alice_only')!.label, 'A');
});

test('the calls module resolves codes, also inside its own transaction', async () => {
  const { accountId } = await newAccount(t);
  // A fresh account: resolving seeds the defaults first.
  const voicemail = await t.db
    .selectFrom('disposition_codes')
    .select('id')
    .where('account_id', '=', accountId)
    .where('code', '=', 'voicemail')
    .executeTakeFirst();
  assert.equal(voicemail, undefined, 'nothing is seeded before the first use');
  const resolved = await t.services.dispositions.resolve(accountId, 'voicemail');
  assert.deepEqual(
    { ...resolved, id: undefined },
    {
      id: undefined,
      code: 'voicemail',
      label: 'Voicemail',
      category: 'neutral',
      isSystem: true,
      active: true,
    },
  );
  assert.equal(await t.services.dispositions.isValidCode(accountId, 'no_such_code'), false);

  const fresh = await newAccount(t);
  const valid = await t.db
    .transaction()
    .execute((trx) => t.services.dispositions.isValidCode(fresh.accountId, 'busy', { trx }));
  assert.equal(valid, true);
  assert.equal(await rowCount(fresh.accountId), DEFAULT_DISPOSITIONS.length);
  // Seeded inside a transaction that rolls back, the defaults are gone with it, and seeded again next time.
  const rolledBack = await newAccount(t);
  await assert.rejects(
    t.db.transaction().execute(async (trx) => {
      assert.equal(await t.services.dispositions.isValidCode(rolledBack.accountId, 'busy', { trx }), true);
      throw new Error('roll back');
    }),
    /roll back/,
  );
  assert.equal(await rowCount(rolledBack.accountId), 0);
  assert.equal(await t.services.dispositions.isValidCode(rolledBack.accountId, 'busy'), true);
  assert.equal(await rowCount(rolledBack.accountId), DEFAULT_DISPOSITIONS.length);
});

test('changes are recorded as domain events for the audit log', async () => {
  const { auth } = await newAccount(t);
  const created = await t.services.dispositions.create(auth, {
    code: 'audited',
    label: 'Audited',
    category: 'neutral',
  });
  await t.services.dispositions.update(auth, created.id, { label: 'Audited twice' });
  await t.services.dispositions.update(auth, created.id, { label: 'Audited twice' }); // no change, no event
  await t.services.dispositions.delete(auth, created.id);
  const events = await t.db
    .selectFrom('domain_events')
    .select(['type', 'subject_id', 'data', 'actor_user_id'])
    .where('account_id', '=', auth.accountId)
    .where('subject_type', '=', 'disposition_code')
    .orderBy('occurred_at')
    .execute();
  assert.deepEqual(
    events.map((e) => e.type),
    ['disposition_code.created', 'disposition_code.updated', 'disposition_code.deleted'],
  );
  assert.ok(events.every((e) => e.subject_id === created.id && e.actor_user_id === auth.userId));
  assert.deepEqual(events[1]!.data, { code: 'audited', changed: ['label'] });
});

test('concurrent first reads seed the defaults once; concurrent creates of one code make one', async () => {
  const { auth } = await newAccount(t);
  const lists = await Promise.all(Array.from({ length: 5 }, () => codesOf(auth)));
  for (const list of lists) assert.equal(list.length, DEFAULT_DISPOSITIONS.length);
  assert.equal(await rowCount(auth.accountId), DEFAULT_DISPOSITIONS.length);

  const creates = await Promise.allSettled(
    Array.from({ length: 4 }, () =>
      t.services.dispositions.create(auth, { code: 'raced', label: 'Raced', category: 'neutral' }),
    ),
  );
  assert.equal(creates.filter((c) => c.status === 'fulfilled').length, 1);
  for (const failed of creates.filter((c) => c.status === 'rejected')) {
    const error = (failed as PromiseRejectedResult).reason;
    assert.ok(error instanceof AppError && error.code === 'conflict', String(error));
    assert.match(error.message, /"raced" already exists/);
  }
});
