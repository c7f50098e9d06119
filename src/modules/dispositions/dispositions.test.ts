import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, errorBody, signUp, type SignedUp, type TestApp } from '../../../test/helpers.js';
import { DEFAULT_DISPOSITIONS } from './dispositions.defaults.js';

let t: TestApp;
before(async () => (t = await buildTestApp()));
after(() => t.close());

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';
const call = (
  user: { headers?: Record<string, string>; cookie?: string },
  method: Method,
  url: string,
  payload?: unknown,
) =>
  t.app.inject({
    method,
    url: `/api/v1${url}`,
    headers: user.headers ?? { cookie: user.cookie! },
    ...(payload === undefined ? {} : { payload: payload as object }),
  });

interface Code {
  id: string;
  code: string;
  label: string;
  description: string;
  category: string;
  isSystem: boolean;
  active: boolean;
  updatedAt: string;
}

async function codesOf(user: SignedUp, query = '?limit=500'): Promise<Code[]> {
  const response = await call(user, 'GET', `/disposition-codes${query}`);
  assert.equal(response.statusCode, 200, response.body);
  return response.json().dispositionCodes;
}

const rowCount = async (accountId: string) =>
  (
    await t.infra.database.db
      .selectFrom('disposition_codes')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('account_id', '=', accountId)
      .executeTakeFirstOrThrow()
  ).n;

test("every account starts with the default set, the engine's codes marked as system", async () => {
  const user = await signUp(t.app);
  const response = await call(user, 'GET', '/disposition-codes');
  assert.equal(response.statusCode, 200);
  const body = response.json();
  assert.equal(body.total, DEFAULT_DISPOSITIONS.length);
  assert.equal(body.limit, 25);
  assert.equal(body.offset, 0);
  const byCode = new Map<string, Code>(body.dispositionCodes.map((c: Code) => [c.code, c]));
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
  assert.deepEqual(Object.keys(body.dispositionCodes[0]).sort(), [
    'active',
    'category',
    'code',
    'createdAt',
    'description',
    'id',
    'isSystem',
    'label',
    'updatedAt',
  ]);
  // Reading again does not add them twice, and another account gets its own set.
  assert.equal((await codesOf(user)).length, DEFAULT_DISPOSITIONS.length);
  assert.equal(await rowCount(user.accountId), DEFAULT_DISPOSITIONS.length);
  const other = await signUp(t.app);
  const theirs = await codesOf(other);
  assert.equal(theirs.length, DEFAULT_DISPOSITIONS.length);
  assert.ok(theirs.every((c) => !byCode.has(c.code) || byCode.get(c.code)!.id !== c.id));
});

test('create, list with filters, update and delete a code', async () => {
  const user = await signUp(t.app);
  const created = await call(user, 'POST', '/disposition-codes', {
    code: 'demo_scheduled',
    label: '  Demo scheduled ',
    category: 'positive',
    description: 'A demo is on the calendar.',
  });
  assert.equal(created.statusCode, 200, created.body);
  const code = created.json();
  assert.equal(code.code, 'demo_scheduled');
  assert.equal(code.label, 'Demo scheduled');
  assert.equal(code.isSystem, false);
  assert.equal(code.active, true);

  const all = await codesOf(user);
  assert.equal(all.length, DEFAULT_DISPOSITIONS.length + 1);
  assert.equal(all[0]!.code, 'demo_scheduled', 'newest first');
  const positive = await codesOf(user, '?category=positive&limit=500');
  assert.ok(positive.every((c) => c.category === 'positive') && positive.some((c) => c.code === 'demo_scheduled'));

  const updated = await call(user, 'PATCH', `/disposition-codes/${code.id}`, { label: 'Demo booked', active: false });
  assert.equal(updated.statusCode, 200, updated.body);
  assert.equal(updated.json().label, 'Demo booked');
  assert.equal(updated.json().active, false);
  assert.equal(updated.json().code, 'demo_scheduled');
  const inactive = await codesOf(user, '?active=false');
  assert.deepEqual(
    inactive.map((c) => c.code),
    ['demo_scheduled'],
  );

  assert.equal(
    await t.services.dispositions.isValidCode(user.accountId, 'demo_scheduled'),
    false,
    'inactive codes cannot be set',
  );
  assert.equal((await t.services.dispositions.resolve(user.accountId, 'demo_scheduled'))?.label, 'Demo booked');

  const deleted = await call(user, 'DELETE', `/disposition-codes/${code.id}`);
  assert.equal(deleted.statusCode, 200);
  assert.deepEqual(deleted.json(), { id: code.id, deleted: true });
  assert.equal((await call(user, 'DELETE', `/disposition-codes/${code.id}`)).statusCode, 404);
  assert.equal((await call(user, 'PATCH', `/disposition-codes/${code.id}`, { label: 'x' })).statusCode, 404);
  assert.equal(await t.services.dispositions.resolve(user.accountId, 'demo_scheduled'), null);
});

test('a default that is not a system code can be deleted, and stays deleted', async () => {
  const user = await signUp(t.app);
  const wrongNumber = (await codesOf(user)).find((c) => c.code === 'wrong_number')!;
  assert.equal((await call(user, 'DELETE', `/disposition-codes/${wrongNumber.id}`)).statusCode, 200);
  const after = await codesOf(user);
  assert.equal(after.length, DEFAULT_DISPOSITIONS.length - 1);
  assert.ok(!after.some((c) => c.code === 'wrong_number'));
  // Re-creating it is a new code of the account's own.
  const again = await call(user, 'POST', '/disposition-codes', {
    code: 'wrong_number',
    label: 'Wrong person',
    category: 'negative',
  });
  assert.equal(again.statusCode, 200);
  assert.equal(again.json().isSystem, false);
});

test('system codes can be relabelled but not deleted or turned off', async () => {
  const user = await signUp(t.app);
  const dnc = (await codesOf(user)).find((c) => c.code === 'do_not_call')!;
  const deleted = await call(user, 'DELETE', `/disposition-codes/${dnc.id}`);
  assert.equal(deleted.statusCode, 409);
  const body = errorBody(deleted);
  assert.equal(body.error, 'conflict');
  assert.match(body.message, /do_not_call.*system code.*cannot be deleted.*relabel/);
  const off = await call(user, 'PATCH', `/disposition-codes/${dnc.id}`, { active: false });
  assert.equal(off.statusCode, 409);
  assert.match(errorBody(off).message, /stays active/);

  const relabelled = await call(user, 'PATCH', `/disposition-codes/${dnc.id}`, {
    label: 'DNC — never call again',
    description: 'Added to the do-not-call list.',
  });
  assert.equal(relabelled.statusCode, 200);
  assert.equal(relabelled.json().label, 'DNC — never call again');
  assert.equal(relabelled.json().code, 'do_not_call');
  assert.equal(relabelled.json().isSystem, true);
  assert.equal(await t.services.dispositions.isValidCode(user.accountId, 'do_not_call'), true);
  const row = await t.infra.database.db
    .selectFrom('disposition_codes')
    .selectAll()
    .where('id', '=', dnc.id)
    .executeTakeFirstOrThrow();
  assert.equal(row.active, true);
});

test('a duplicate code is a 409 and a no-op save writes nothing', async () => {
  const user = await signUp(t.app);
  const duplicate = await call(user, 'POST', '/disposition-codes', {
    code: 'voicemail',
    label: 'VM',
    category: 'neutral',
  });
  assert.equal(duplicate.statusCode, 409);
  assert.match(errorBody(duplicate).message, /"voicemail" already exists/);
  const busy = (await codesOf(user)).find((c) => c.code === 'busy')!;
  const same = await call(user, 'PATCH', `/disposition-codes/${busy.id}`, { label: 'Busy', category: 'neutral' });
  assert.equal(same.statusCode, 200);
  assert.equal(same.json().updatedAt, busy.updatedAt, 'nothing was written');
  const row = await t.infra.database.db
    .selectFrom('disposition_codes')
    .select('updated_at')
    .where('id', '=', busy.id)
    .executeTakeFirstOrThrow();
  assert.equal(row.updated_at.toISOString(), busy.updatedAt);
});

test('bad input is a 400 naming the field, and writes nothing', async () => {
  const user = await signUp(t.app);
  await codesOf(user);
  const before = await rowCount(user.accountId);
  const bad: Array<[unknown, string]> = [
    [{ code: 'Has Spaces', label: 'x', category: 'positive' }, 'body/code'],
    [{ code: '9starts_with_digit', label: 'x', category: 'positive' }, 'body/code'],
    [{ code: 'a'.repeat(65), label: 'x', category: 'positive' }, 'body/code'],
    [{ code: 'ok_code', label: '', category: 'positive' }, 'body/label'],
    [{ code: 'ok_code', label: '   ', category: 'positive' }, 'body/label'],
    [{ code: 'ok_code', label: 'x'.repeat(81), category: 'positive' }, 'body/label'],
    [{ code: 'ok_code', label: 'x', category: 'great' }, 'body/category'],
    [{ code: 'ok_code', label: 'x' }, 'body/category'],
    [{ code: 'ok_code', label: 'x', category: 'positive', isSystem: true }, 'body/isSystem'],
    [{ code: 'ok_code', label: 'x', category: 'positive', active: 'yes' }, 'body/active'],
  ];
  for (const [payload, field] of bad) {
    const response = await call(user, 'POST', '/disposition-codes', payload);
    assert.equal(response.statusCode, 400, JSON.stringify(payload));
    const body = errorBody(response);
    assert.equal(body.error, 'validation_failed');
    assert.ok(
      (body.details.fields as Array<{ field: string }>).some((f) => f.field === field),
      `${JSON.stringify(payload)}: ${body.message}`,
    );
  }
  const interested = (await codesOf(user)).find((c) => c.code === 'interested')!;
  for (const [payload, field] of [
    [{ code: 'renamed' }, 'body/code'],
    [{ label: ' ' }, 'body/label'],
    [{ category: 'meh' }, 'body/category'],
  ] as const) {
    const response = await call(user, 'PATCH', `/disposition-codes/${interested.id}`, payload);
    assert.equal(response.statusCode, 400, JSON.stringify(payload));
    assert.ok((errorBody(response).details.fields as Array<{ field: string }>).some((f) => f.field === field));
  }
  assert.equal((await call(user, 'PATCH', '/disposition-codes/not-a-uuid', { label: 'x' })).statusCode, 400);
  assert.equal((await call(user, 'GET', '/disposition-codes?category=meh')).statusCode, 400);
  assert.equal(await rowCount(user.accountId), before);
  const unchanged = (await codesOf(user)).find((c) => c.code === 'interested')!;
  assert.equal(unchanged.label, 'Interested');
});

test("another account's code answers 404, exactly like a missing one", async () => {
  const alice = await signUp(t.app);
  const bob = await signUp(t.app);
  const aliceCode = (
    await call(alice, 'POST', '/disposition-codes', { code: 'alice_only', label: 'Alice only', category: 'neutral' })
  ).json();
  const aliceSystem = (await codesOf(alice)).find((c) => c.code === 'voicemail')!;
  for (const id of [aliceCode.id, aliceSystem.id]) {
    const patch = await call(bob, 'PATCH', `/disposition-codes/${id}`, { label: 'mine now' });
    assert.equal(patch.statusCode, 404);
    assert.equal(errorBody(patch).error, 'not_found');
    assert.equal(errorBody(patch).message, 'Disposition code not found');
    const del = await call(bob, 'DELETE', `/disposition-codes/${id}`);
    assert.equal(del.statusCode, 404);
  }
  assert.ok(!(await codesOf(bob)).some((c) => c.code === 'alice_only'));
  assert.equal(await t.services.dispositions.resolve(bob.accountId, 'alice_only'), null);
  assert.equal((await codesOf(alice)).find((c) => c.code === 'alice_only')!.label, 'Alice only');
});

test('members read the codes; admins and owners change them', async () => {
  const owner = await signUp(t.app);
  const member = await signUp(t.app);
  await t.infra.database.db
    .insertInto('memberships')
    .values({ account_id: owner.accountId, user_id: member.userId, role: 'member' })
    .execute();
  assert.equal(
    (await call({ cookie: member.cookie }, 'POST', '/auth/switch-account', { accountId: owner.accountId })).statusCode,
    200,
  );
  assert.equal((await call({ cookie: member.cookie }, 'GET', '/disposition-codes')).statusCode, 200);
  const refused = await call({ cookie: member.cookie }, 'POST', '/disposition-codes', {
    code: 'member_made',
    label: 'x',
    category: 'neutral',
  });
  assert.equal(refused.statusCode, 403);
  assert.match(errorBody(refused).message, /dispositions\.manage/);
});

test('the calls module resolves codes, also inside its own transaction', async () => {
  const user = await signUp(t.app);
  // A fresh account: resolving seeds the defaults first.
  assert.deepEqual(await t.services.dispositions.resolve(user.accountId, 'voicemail'), {
    id: (
      await t.infra.database.db
        .selectFrom('disposition_codes')
        .select('id')
        .where('account_id', '=', user.accountId)
        .where('code', '=', 'voicemail')
        .executeTakeFirstOrThrow()
    ).id,
    code: 'voicemail',
    label: 'Voicemail',
    category: 'neutral',
    isSystem: true,
    active: true,
  });
  assert.equal(await t.services.dispositions.isValidCode(user.accountId, 'no_such_code'), false);
  const fresh = await signUp(t.app);
  const valid = await t.infra.database.db
    .transaction()
    .execute((trx) => t.services.dispositions.isValidCode(fresh.accountId, 'busy', { trx }));
  assert.equal(valid, true);
  assert.equal(await rowCount(fresh.accountId), DEFAULT_DISPOSITIONS.length);
});

test('changes are recorded as domain events for the audit log', async () => {
  const user = await signUp(t.app);
  const created = (
    await call(user, 'POST', '/disposition-codes', { code: 'audited', label: 'Audited', category: 'neutral' })
  ).json();
  await call(user, 'PATCH', `/disposition-codes/${created.id}`, { label: 'Audited twice' });
  await call(user, 'DELETE', `/disposition-codes/${created.id}`);
  const events = await t.infra.database.db
    .selectFrom('domain_events')
    .select(['type', 'subject_id', 'data'])
    .where('account_id', '=', user.accountId)
    .where('subject_type', '=', 'disposition_code')
    .orderBy('occurred_at')
    .execute();
  assert.deepEqual(
    events.map((e) => e.type),
    ['disposition_code.created', 'disposition_code.updated', 'disposition_code.deleted'],
  );
  assert.ok(events.every((e) => e.subject_id === created.id));
  assert.deepEqual(events[1]!.data, { code: 'audited', changed: ['label'] });
});

test('concurrent first reads seed the defaults once; concurrent creates of one code make one', async () => {
  const user = await signUp(t.app);
  const lists = await Promise.all(Array.from({ length: 5 }, () => call(user, 'GET', '/disposition-codes?limit=500')));
  for (const list of lists) assert.equal(list.json().total, DEFAULT_DISPOSITIONS.length, list.body);
  assert.equal(await rowCount(user.accountId), DEFAULT_DISPOSITIONS.length);

  const creates = await Promise.all(
    Array.from({ length: 4 }, () =>
      call(user, 'POST', '/disposition-codes', { code: 'raced', label: 'Raced', category: 'neutral' }),
    ),
  );
  assert.deepEqual(creates.map((r) => r.statusCode).sort(), [200, 409, 409, 409]);
  for (const refused of creates.filter((r) => r.statusCode === 409))
    assert.match(errorBody(refused).message, /"raced" already exists/);
});
