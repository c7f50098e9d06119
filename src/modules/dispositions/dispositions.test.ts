/**
 * The disposition codes' HTTP contract: statuses, bodies, validation and access. Their rules are tested through the
 * service, in dispositions.service.test.ts.
 */
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

test('the codes are a page of the default set, each with its fields', async () => {
  const user = await signUp(t.app);
  const response = await call(user, 'GET', '/disposition-codes');
  assert.equal(response.statusCode, 200);
  const body = response.json();
  assert.equal(body.total, DEFAULT_DISPOSITIONS.length);
  assert.equal(body.limit, 25);
  assert.equal(body.offset, 0);
  assert.equal(body.dispositionCodes.length, Math.min(25, DEFAULT_DISPOSITIONS.length));
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
});

test('create, list with filters, update and delete a code', async () => {
  const user = await signUp(t.app);
  const created = await call(user, 'POST', '/disposition-codes', {
    code: 'demo_scheduled',
    label: 'Demo scheduled',
    category: 'positive',
    description: 'A demo is on the calendar.',
  });
  assert.equal(created.statusCode, 200, created.body);
  const code = created.json();
  assert.equal(code.code, 'demo_scheduled');
  assert.equal(code.isSystem, false);
  assert.equal(code.active, true);

  const positive = await codesOf(user, '?category=positive&limit=500');
  assert.ok(positive.every((c) => c.category === 'positive') && positive.some((c) => c.code === 'demo_scheduled'));
  const updated = await call(user, 'PATCH', `/disposition-codes/${code.id}`, { label: 'Demo booked', active: false });
  assert.equal(updated.statusCode, 200, updated.body);
  assert.equal(updated.json().label, 'Demo booked');
  assert.equal(updated.json().active, false);
  assert.deepEqual(
    (await codesOf(user, '?active=false')).map((c) => c.code),
    ['demo_scheduled'],
  );

  const deleted = await call(user, 'DELETE', `/disposition-codes/${code.id}`);
  assert.equal(deleted.statusCode, 200);
  assert.deepEqual(deleted.json(), { id: code.id, deleted: true });
  assert.equal((await call(user, 'DELETE', `/disposition-codes/${code.id}`)).statusCode, 404);
  assert.equal((await call(user, 'PATCH', `/disposition-codes/${code.id}`, { label: 'x' })).statusCode, 404);
});

test('changing a system code as it cannot be changed, or making a code twice, is a 409', async () => {
  const user = await signUp(t.app);
  const dnc = (await codesOf(user)).find((c) => c.code === 'do_not_call')!;
  const deleted = await call(user, 'DELETE', `/disposition-codes/${dnc.id}`);
  assert.equal(deleted.statusCode, 409);
  const body = errorBody(deleted);
  assert.equal(body.error, 'conflict');
  assert.match(body.message, /do_not_call.*system code.*cannot be deleted.*relabel/);
  assert.equal((await call(user, 'PATCH', `/disposition-codes/${dnc.id}`, { active: false })).statusCode, 409);
  const duplicate = await call(user, 'POST', '/disposition-codes', {
    code: 'voicemail',
    label: 'VM',
    category: 'neutral',
  });
  assert.equal(duplicate.statusCode, 409);
  assert.match(errorBody(duplicate).message, /"voicemail" already exists/);
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
