import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { buildTestApp, call, errorBody, signUp, type SignedUp, type TestApp } from '../../../test/helpers.js';

let t: TestApp;
// Strictly increasing time, so "newest first" never depends on two writes landing in the same millisecond.
let last = 0;
const clock = { now: () => new Date((last = Math.max(Date.now(), last + 1))) };
before(async () => (t = await buildTestApp({ clock, env: { CSV_BODY_LIMIT_BYTES: '4096' } })));
after(() => t.close());

const fixture = (name: string) => readFileSync(new URL(`../../../test/fixtures/csv/${name}`, import.meta.url));
const asCsv = { headers: { 'content-type': 'text/csv' } };
const add = (user: SignedUp, payload: unknown) => call(user, 'POST', '/dnc', payload as object);
const list = (user: SignedUp, query = '') => call(user, 'GET', `/dnc${query}`);
const remove = (user: SignedUp, phone: string) => call(user, 'DELETE', `/dnc/${encodeURIComponent(phone)}`);
const bulkJson = (user: SignedUp, payload: unknown) => call(user, 'POST', '/dnc/bulk', payload as object);
const bulkCsv = (user: SignedUp, body: string | Buffer) => call(user, 'POST', '/dnc/bulk', body, asCsv);

async function importContacts(user: SignedUp, csv: string) {
  const response = await call(user, 'POST', '/contact-lists?name=Leads', csv, asCsv);
  assert.equal(response.statusCode, 200, response.body);
}

async function dncFlags(user: SignedUp) {
  const response = await call(user, 'GET', '/contacts?limit=500');
  return Object.fromEntries(response.json().contacts.map((c: { phone: string; dnc: boolean }) => [c.phone, c.dnc]));
}

test('adding is idempotent, normalizes to E.164, and flags the matching contacts', async () => {
  const user = await signUp(t.app);
  await importContacts(user, 'phone\n+14155552671\n+12125550123\n');
  const first = await add(user, { phone: '(415) 555-2671', reason: 'asked on the phone' });
  assert.equal(first.statusCode, 200, first.body);
  assert.equal(first.json().phone, '+14155552671');
  assert.equal(first.json().reason, 'asked on the phone');
  const again = await add(user, { phone: '+1 415-555-2671' });
  assert.equal(again.statusCode, 200);
  assert.deepEqual(again.json(), first.json());
  assert.equal((await list(user)).json().total, 1);
  assert.deepEqual(await dncFlags(user), { '+14155552671': true, '+12125550123': false });
});

test('removing takes the phone from the path in any format and unflags the contacts', async () => {
  const user = await signUp(t.app);
  await importContacts(user, 'phone\n+14155552671\n');
  await add(user, { phone: '+14155552671' });
  for (const written of ['(415) 555-2671', '+1 415/555 2671']) {
    await add(user, { phone: '+14155552671' });
    const removed = await remove(user, written);
    assert.equal(removed.statusCode, 200, `${written}: ${removed.body}`);
    assert.deepEqual(removed.json(), { phone: '+14155552671', deleted: true });
    assert.deepEqual(await dncFlags(user), { '+14155552671': false });
  }
  const plus = await add(user, { phone: '+442079460958' });
  assert.equal(plus.statusCode, 200);
  const raw = await t.app.inject({ method: 'DELETE', url: '/api/v1/dnc/+442079460958', headers: user.headers });
  assert.equal(raw.statusCode, 200, 'an unencoded + in the path is a plus, not a space');

  const missing = await remove(user, '+14155552671');
  assert.equal(missing.statusCode, 404);
  assert.equal(errorBody(missing).error, 'not_found');
  const invalid = await remove(user, 'not-a-phone');
  assert.equal(invalid.statusCode, 400);
});

test('the list is paginated, newest first, and searchable by digits or reason', async () => {
  const user = await signUp(t.app);
  await add(user, { phone: '+14155552671', reason: 'Litigator' });
  await add(user, { phone: '+12125550123' });
  await add(user, { phone: '+442079460958', reason: 'asked to stop' });
  const page = await list(user, '?limit=2');
  assert.equal(page.json().total, 3);
  assert.deepEqual(
    page.json().dncEntries.map((e: { phone: string }) => e.phone),
    ['+442079460958', '+12125550123'],
  );
  assert.equal((await list(user, '?limit=2&offset=2')).json().dncEntries[0].phone, '+14155552671');
  assert.deepEqual(
    (await list(user, '?q=litig')).json().dncEntries.map((e: { phone: string }) => e.phone),
    ['+14155552671'],
  );
  assert.deepEqual(
    (await list(user, '?q=(212)%20555')).json().dncEntries.map((e: { phone: string }) => e.phone),
    ['+12125550123'],
  );
  assert.equal((await list(user, '?limit=501')).statusCode, 400);
});

test('bulk from a JSON array: strings or objects, invalid ones reported, contacts flagged', async () => {
  const user = await signUp(t.app);
  await importContacts(user, 'phone\n+14155552671\n+16465553890\n');
  await add(user, { phone: '+16465553890' });
  const response = await bulkJson(user, [
    '(415) 555-2671',
    { phone: '+1 212 555 0123', reason: 'complaint' },
    'garbage',
    '+16465553890',
    '415.555.2671',
  ]);
  assert.equal(response.statusCode, 200, response.body);
  const body = response.json();
  assert.deepEqual(
    { ...body, errors: undefined },
    { rows: 5, added: 2, duplicates: 2, invalid: 1, contactsFlagged: 1, errors: undefined },
  );
  assert.deepEqual(body.errors, [{ row: 3, phone: 'garbage', reason: 'not_a_number', message: 'Not a phone number' }]);
  assert.deepEqual(await dncFlags(user), { '+14155552671': true, '+16465553890': true });
  const entries = (await list(user, '?q=complaint')).json().dncEntries;
  assert.equal(entries[0].phone, '+12125550123');
});

test('bulk from CSV: with a header, or one number per line', async () => {
  const user = await signUp(t.app);
  const withHeader = await bulkCsv(user, fixture('dnc-list.csv'));
  assert.equal(withHeader.statusCode, 200, withHeader.body);
  assert.deepEqual(
    { ...(withHeader.json() as object), errors: undefined },
    { rows: 4, added: 2, duplicates: 1, invalid: 1, contactsFlagged: 0, errors: undefined },
  );
  assert.equal(withHeader.json().errors[0].row, 4);
  assert.equal((await list(user, '?q=asked')).json().dncEntries[0].phone, '+14155552671');

  const plain = await bulkCsv(user, fixture('dnc-numbers-only.csv'));
  assert.equal(plain.statusCode, 200, plain.body);
  assert.deepEqual(
    { ...(plain.json() as object), errors: undefined },
    { rows: 3, added: 1, duplicates: 2, invalid: 0, contactsFlagged: 0, errors: undefined },
  );
  assert.equal((await list(user)).json().total, 3);
});

test('bad bulk bodies are refused and add nothing', async () => {
  const user = await signUp(t.app);
  for (const payload of [[], {}, [5], [{ phone: '+14155552671', extra: 1 }], [{ reason: 'x' }]]) {
    const response = await bulkJson(user, payload);
    assert.equal(response.statusCode, 400, JSON.stringify(payload));
    assert.equal(errorBody(response).error, 'validation_failed');
  }
  const broken = await bulkCsv(user, 'phone,reason\n+14155552671,ok\n+12125550123,"unterminated\n');
  assert.equal(broken.statusCode, 400);
  assert.equal(errorBody(broken).error, 'invalid_csv');
  assert.equal(errorBody(broken).details.line, 3);
  const noPhone = await bulkCsv(user, 'name,reason\nAda,x\n');
  assert.equal(noPhone.statusCode, 400);
  const tooBig = await bulkCsv(user, `phone\n${'+14155552671\n'.repeat(400)}`);
  assert.equal(tooBig.statusCode, 413);
  const empty = await bulkCsv(user, '');
  assert.equal(empty.statusCode, 400);
  const text = await t.app.inject({
    method: 'POST',
    url: '/api/v1/dnc/bulk',
    headers: { ...user.headers, 'content-type': 'text/plain' },
    payload: '+14155552671',
  });
  assert.equal(text.statusCode, 415);
  assert.equal(errorBody(text).error, 'unsupported_media_type');
  assert.equal((await list(user)).json().total, 0);

  for (const payload of [{}, { phone: '' }, { phone: 12 }, { phone: '+14155552671', extra: true }, { phone: 'nope' }]) {
    const response = await add(user, payload);
    assert.equal(response.statusCode, 400, JSON.stringify(payload));
    assert.equal(errorBody(response).error, 'validation_failed');
  }
  assert.equal((await list(user)).json().total, 0);
});

test('a NUL character or a lone surrogate refuses a bulk request, naming the line or the item', async () => {
  const user = await signUp(t.app);
  const csv = await bulkCsv(user, 'phone,reason\n+14155552671,ok\n"+1212555\u00000123",x\n+16465553890,fine\n');
  assert.equal(csv.statusCode, 400);
  assert.equal(errorBody(csv).error, 'invalid_csv');
  assert.deepEqual(errorBody(csv).details, { line: 3, reason: 'nul_character' });
  assert.match(errorBody(csv).message, /Line 3 .*NUL/);
  const reasonNul = await bulkCsv(user, 'phone,reason\n+14155552671,"a\u0000b"\n');
  assert.equal(reasonNul.statusCode, 400);
  assert.equal(errorBody(reasonNul).details.line, 2);

  const json = await bulkJson(user, ['+14155552671', { phone: '+12125550123', reason: 'bad\u0000reason' }]);
  assert.equal(json.statusCode, 400);
  assert.equal(errorBody(json).error, 'validation_failed');
  assert.deepEqual(errorBody(json).details.fields, [
    { field: 'body/1/reason', message: 'must not contain NUL characters' },
  ]);
  assert.equal((await list(user)).json().total, 0, 'all or nothing');

  // JSON may carry a lone surrogate (\ud800), which is not text: refused like a NUL.
  const surrogate = await t.app.inject({
    method: 'POST',
    url: '/api/v1/dnc/bulk',
    headers: { ...user.headers, 'content-type': 'application/json' },
    payload: '[{"phone": "+14155552671", "reason": "asked \\ud800 twice"}]',
  });
  assert.equal(surrogate.statusCode, 400, surrogate.body);
  assert.equal(errorBody(surrogate).error, 'validation_failed');
  assert.equal((await list(user)).json().total, 0);
});

test('DNC entries never cross accounts', async () => {
  const alice = await signUp(t.app);
  const bob = await signUp(t.app);
  await importContacts(bob, 'phone\n+14155552671\n');
  await add(alice, { phone: '+14155552671', reason: 'alice only' });
  await bulkJson(alice, ['+12125550123']);
  assert.equal((await list(bob)).json().total, 0);
  assert.deepEqual(await dncFlags(bob), { '+14155552671': false }, "Alice's list does not flag Bob's contacts");
  const removed = await remove(bob, '+14155552671');
  assert.equal(removed.statusCode, 404);
  assert.equal((await list(alice)).json().total, 2);
  const anonymous = await t.app.inject({ method: 'GET', url: '/api/v1/dnc' });
  assert.equal(anonymous.statusCode, 401);
});
