import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { parse } from 'csv-parse/sync';
import { buildTestApp, call, errorBody, signUp, type SignedUp, type TestApp } from '../../../test/helpers.js';

let t: TestApp;
// Strictly increasing time, so "newest first" never depends on two imports landing in the same millisecond.
let last = 0;
const clock = { now: () => new Date((last = Math.max(Date.now(), last + 1))) };
before(async () => (t = await buildTestApp({ clock })));
after(() => t.close());

async function importCsv(user: SignedUp, body: string, name = 'Leads') {
  const response = await call(user, 'POST', `/contact-lists?name=${encodeURIComponent(name)}`, body, {
    headers: { 'content-type': 'text/csv' },
  });
  assert.equal(response.statusCode, 200, response.body);
  return response.json() as { listId: string; counts: Record<string, number> };
}

const get = (user: SignedUp, url: string) => call(user, 'GET', url);
const patch = (user: SignedUp, id: string, payload: unknown) =>
  call(user, 'PATCH', `/contacts/${id}`, payload as object);
const phones = (body: { contacts: Array<{ phone: string }> }) => body.contacts.map((c) => c.phone).sort();

const LEADS = [
  'First Name,Last Name,Email,Phone,Company,Time Zone',
  'Ada,Lovelace,ada@example.com,(212) 555-0123,Analytical Engines,Europe/London',
  'Grace,Hopper,grace@navy.example,+1 415 555 2671,Navy,Not/AZone',
  'Alan,Turing,alan@example.com,+44 20 7946 0958,Bletchley,',
].join('\n');

test('lists are listed newest first, paginated, with their counts', async () => {
  const user = await signUp(t.app);
  const first = await importCsv(user, LEADS, 'First');
  const second = await importCsv(user, 'phone\n+16465553890\nbad\n', 'Second');
  const page = await get(user, '/contact-lists?limit=1');
  assert.equal(page.statusCode, 200);
  assert.equal(page.json().total, 2);
  assert.equal(page.json().limit, 1);
  assert.equal(page.json().offset, 0);
  assert.deepEqual(
    page.json().contactLists.map((l: { id: string }) => l.id),
    [second.listId],
  );
  assert.deepEqual(page.json().contactLists[0].counts, {
    rows: 2,
    imported: 1,
    updated: 0,
    duplicates: 0,
    invalid: 1,
    dnc: 0,
  });
  const next = await get(user, '/contact-lists?limit=1&offset=1');
  assert.deepEqual(
    next.json().contactLists.map((l: { id: string }) => l.id),
    [first.listId],
  );
  assert.equal((await get(user, '/contact-lists?limit=0')).statusCode, 400);
  assert.equal((await get(user, '/contact-lists?limit=501')).statusCode, 400);
});

test('contacts of a list, and the filters: list, free text, phone in any format, DNC status', async () => {
  const user = await signUp(t.app);
  const leads = await importCsv(user, LEADS);
  const other = await importCsv(user, 'phone,name\n+16465553890,Katherine Johnson\n+12125550123,Ada again\n', 'Other');

  const members = await get(user, `/contact-lists/${leads.listId}/contacts`);
  assert.equal(members.statusCode, 200);
  assert.equal(members.json().total, 3);
  assert.deepEqual(phones(members.json()), ['+12125550123', '+14155552671', '+442079460958']);

  const all = await get(user, '/contacts');
  assert.equal(all.json().total, 4);
  assert.equal(all.json().totalExact, true);
  const searched = (await get(user, '/contacts?q=example&limit=1')).json();
  assert.deepEqual([searched.contacts.length, searched.total, searched.totalExact], [1, 3, true]);
  assert.deepEqual(phones((await get(user, `/contacts?listId=${other.listId}`)).json()), [
    '+12125550123',
    '+16465553890',
  ]);
  assert.deepEqual(phones((await get(user, '/contacts?q=hopper')).json()), ['+14155552671']);
  assert.deepEqual(phones((await get(user, '/contacts?q=ada%20lovelace')).json()), ['+12125550123']);
  assert.deepEqual(phones((await get(user, '/contacts?q=NAVY.EXAMPLE')).json()), ['+14155552671']);
  assert.deepEqual(phones((await get(user, '/contacts?q=7946')).json()), ['+442079460958']);
  assert.deepEqual(phones((await get(user, '/contacts?q=100%25')).json()), [], 'LIKE wildcards are taken literally');
  assert.deepEqual(phones((await get(user, `/contacts?phone=${encodeURIComponent('(415) 555-2671')}`)).json()), [
    '+14155552671',
  ]);
  assert.deepEqual(phones((await get(user, `/contacts?listId=${leads.listId}&q=alan`)).json()), ['+442079460958']);

  await t.app.inject({
    method: 'POST',
    url: '/api/v1/dnc',
    headers: user.headers,
    payload: { phone: '+442079460958' },
  });
  assert.deepEqual(phones((await get(user, '/contacts?dnc=true')).json()), ['+442079460958']);
  assert.equal((await get(user, '/contacts?dnc=false')).json().total, 3);

  const badPhone = await get(user, '/contacts?phone=12');
  assert.equal(badPhone.statusCode, 400);
  assert.equal(Array.isArray(errorBody(badPhone).details.fields), true);
  assert.equal((await get(user, '/contacts?dnc=maybe')).statusCode, 400);
  assert.equal((await get(user, '/contacts?listId=nope')).statusCode, 400);
});

test('a contact in full: fields, attributes, an unknown time zone kept as an attribute, and its lists', async () => {
  const user = await signUp(t.app);
  const leads = await importCsv(user, LEADS);
  const grace = (await get(user, '/contacts?q=grace')).json().contacts[0];
  assert.equal(grace.timezone, null);
  assert.deepEqual(grace.attributes, { 'Time Zone': 'Not/AZone' });
  const detail = await get(user, `/contacts/${grace.id}`);
  assert.equal(detail.statusCode, 200);
  assert.deepEqual(detail.json().lists, [{ id: leads.listId, name: 'Leads' }]);
  assert.equal(detail.json().company, 'Navy');
  assert.match(detail.json().createdAt, /Z$/);
});

test('PATCH validates, re-normalizes a new phone, takes its DNC status, and merges attributes', async () => {
  const user = await signUp(t.app);
  await importCsv(user, LEADS);
  const ada = (await get(user, '/contacts?q=ada')).json().contacts[0];
  await t.app.inject({
    method: 'POST',
    url: '/api/v1/dnc',
    headers: user.headers,
    payload: { phone: '+1 646 555 3890' },
  });

  const changed = await patch(user, ada.id, {
    firstName: 'Augusta Ada',
    phone: '646.555.3890',
    email: 'ADA@Lovelace.example',
    timezone: 'europe/london',
    attributes: { source: 'conference', 'Time Zone': null },
  });
  assert.equal(changed.statusCode, 200, changed.body);
  const body = changed.json();
  assert.equal(body.firstName, 'Augusta Ada');
  assert.equal(body.lastName, 'Lovelace', 'fields not sent are untouched');
  assert.equal(body.phone, '+16465553890');
  assert.equal(body.dnc, true);
  assert.equal(body.email, 'ada@lovelace.example');
  assert.equal(body.timezone, 'Europe/London');
  assert.deepEqual(body.attributes, { source: 'conference' });
  assert.ok(body.updatedAt > ada.updatedAt);

  const cleared = await patch(user, ada.id, { company: null, phone: '+12125550123' });
  assert.equal(cleared.json().company, null);
  assert.equal(cleared.json().dnc, false);

  const grace = (await get(user, '/contacts?q=grace')).json().contacts[0];
  const taken = await patch(user, grace.id, { phone: '(212) 555-0123' });
  assert.equal(taken.statusCode, 409);
  assert.equal(errorBody(taken).error, 'conflict');

  for (const payload of [
    {},
    { phone: '12' },
    { phone: 5 },
    { email: 'not-an-email' },
    { timezone: 'Mars/Base' },
    { nickname: 'x' },
    { attributes: { a: 5 } },
  ]) {
    const response = await patch(user, grace.id, payload);
    assert.equal(response.statusCode, 400, JSON.stringify(payload));
    assert.equal(errorBody(response).error, 'validation_failed');
  }
  const after = (await get(user, `/contacts/${grace.id}`)).json();
  assert.equal(after.phone, '+14155552671');
  assert.equal(after.updatedAt, grace.updatedAt, 'refused updates write nothing');
});

test('the export streams CSV with the same filters, neutralizes formulas, and round-trips through an import', async () => {
  const user = await signUp(t.app);
  const leads = await importCsv(
    user,
    'phone,first_name,last_name,company,notes\n+14155552671,=cmd|\' /C calc\'!A0,Hopper,@SUM(A1),"-2+3"\n+12125550123,Ada,Lovelace,"Engines, Ltd",\n',
  );
  await importCsv(user, 'phone\n+16465553890\n', 'Other');
  const response = await get(user, `/exports/contacts.csv?listId=${leads.listId}`);
  assert.equal(response.statusCode, 200);
  assert.match(String(response.headers['content-type']), /^text\/csv/);
  assert.match(String(response.headers['content-disposition']), /attachment; filename="contacts.csv"/);
  const rows = parse(response.body, { columns: true }) as Array<Record<string, string>>;
  assert.equal(rows.length, 2);
  const grace = rows.find((r) => r.last_name === 'Hopper')!;
  assert.equal(grace.first_name, "'=cmd|' /C calc'!A0");
  assert.equal(grace.company, "'@SUM(A1)");
  assert.equal(grace.phone, "'+14155552671", 'a leading + is neutralized too');
  assert.deepEqual(JSON.parse(grace.attributes!), { notes: '-2+3' });
  assert.equal(rows.find((r) => r.last_name === 'Lovelace')!.company, 'Engines, Ltd');
  assert.equal(grace.dnc, 'false');

  const other = await signUp(t.app);
  const again = await t.app.inject({
    method: 'POST',
    url: '/api/v1/contact-lists?name=Roundtrip',
    headers: { ...other.headers, 'content-type': 'text/csv' },
    payload: response.body,
  });
  assert.deepEqual(again.json().counts, { rows: 2, imported: 2, updated: 0, duplicates: 0, invalid: 0, dnc: 0 });

  const filtered = await get(user, '/exports/contacts.csv?q=lovelace');
  assert.equal((parse(filtered.body, { columns: true }) as unknown[]).length, 1);
  assert.equal((await get(user, '/exports/contacts.csv?dnc=true')).body.trim().split('\n').length, 1, 'header only');
});

test('the export pages through more contacts than one batch without repeating or losing any', async () => {
  const user = await signUp(t.app);
  const lines = Array.from({ length: 12_000 }, (_, i) => `+1415${String(2000000 + i)},Person ${i}`);
  const imported = await importCsv(user, `phone,name\n${lines.join('\n')}\n`);
  assert.equal(imported.counts.imported, 12_000);
  const response = await get(user, '/exports/contacts.csv');
  const rows = parse(response.body, { columns: true }) as Array<Record<string, string>>;
  assert.equal(rows.length, 12_000);
  assert.equal(new Set(rows.map((r) => r.id)).size, 12_000);

  // A filter matching few of them, in runs far apart (11, 110-119, 1100-1199, 11000-11999): batches that scan
  // no match at all still move on, and none is read twice.
  const filtered = parse((await get(user, '/exports/contacts.csv?q=person%2011')).body, { columns: true }) as Array<
    Record<string, string>
  >;
  assert.equal(filtered.length, 1 + 10 + 100 + 1000);
  assert.equal(new Set(filtered.map((r) => r.id)).size, filtered.length);
  assert.ok(filtered.every((r) => /^11/.test(r.last_name!)));
});

test("another account's lists and contacts answer 404 and never show up", async () => {
  const alice = await signUp(t.app);
  const bob = await signUp(t.app);
  const list = await importCsv(alice, LEADS);
  const contact = (await get(alice, '/contacts')).json().contacts[0];

  for (const url of [
    `/contact-lists/${list.listId}`,
    `/contact-lists/${list.listId}/contacts`,
    `/contacts/${contact.id}`,
    `/exports/contacts.csv?listId=${list.listId}`,
  ]) {
    const response = await get(bob, url);
    assert.equal(response.statusCode, 404, url);
    assert.equal(errorBody(response).error, 'not_found');
  }
  const patched = await patch(bob, contact.id, { firstName: 'Mallory' });
  assert.equal(patched.statusCode, 404);
  assert.equal((await get(bob, '/contact-lists')).json().total, 0);
  assert.equal((await get(bob, '/contacts')).json().total, 0);
  assert.equal((await get(bob, `/contacts?listId=${list.listId}`)).json().total, 0);
  assert.equal((await get(bob, '/contacts?q=ada')).json().total, 0);
  assert.equal((await get(bob, '/exports/contacts.csv')).body.trim().split('\n').length, 1);

  // The same number in two accounts is two contacts; Bob's import does not touch Alice's.
  await importCsv(bob, 'phone,first_name\n(212) 555-0123,Bob-side\n');
  assert.equal((await get(alice, `/contacts/${contact.id}`)).json().firstName, contact.firstName);
  assert.equal((await get(alice, '/contacts')).json().total, 3);
});

test('contacts need authentication', async () => {
  for (const url of ['/api/v1/contacts', '/api/v1/contact-lists', '/api/v1/exports/contacts.csv']) {
    const response = await t.app.inject({ method: 'GET', url });
    assert.equal(response.statusCode, 401, url);
  }
});

test('deleting an account removes its contacts, lists, memberships and DNC entries, and nothing else', async () => {
  const alice = await signUp(t.app);
  const bob = await signUp(t.app);
  await importCsv(alice, LEADS);
  await importCsv(bob, LEADS);
  for (const user of [alice, bob]) {
    const added = await t.app.inject({
      method: 'POST',
      url: '/api/v1/dnc',
      headers: user.headers,
      payload: { phone: '+16465553890' },
    });
    assert.equal(added.statusCode, 200, added.body);
  }
  const { db } = t.infra.database;
  const left = async (accountId: string) => {
    const counts: Record<string, number> = {};
    for (const table of ['contacts', 'contact_lists', 'contact_list_members', 'dnc_entries'] as const) {
      const row = await db
        .selectFrom(table)
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('account_id', '=', accountId)
        .executeTakeFirstOrThrow();
      counts[table] = Number(row.n);
    }
    return counts;
  };
  const bobBefore = await left(bob.accountId);

  await db.deleteFrom('accounts').where('id', '=', alice.accountId).execute();
  assert.deepEqual(await left(alice.accountId), {
    contacts: 0,
    contact_lists: 0,
    contact_list_members: 0,
    dnc_entries: 0,
  });
  assert.deepEqual(await left(bob.accountId), bobBefore);
  assert.equal(bobBefore.contacts, 3);
});
