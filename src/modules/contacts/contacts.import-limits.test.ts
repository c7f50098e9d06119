/**
 * What no tenant may do with an import, a search or a list: store contacts too big to list, send a file too wide,
 * reach the database with a NUL, make concurrent imports fail, or leave half an import behind.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { parse } from 'csv-parse/sync';
import { buildTestApp, errorBody, signUp, type SignedUp, type TestApp } from '../../../test/helpers.js';
import { contactSearchPattern, contactSearchText } from './contacts.repo.js';

let t: TestApp;
before(async () => (t = await buildTestApp({ env: { CSV_BODY_LIMIT_BYTES: String(8 * 1024 * 1024) } })));
after(() => t.close());

const usingPostgres = Boolean(process.env.DATABASE_URL);

function importCsv(user: SignedUp, body: string | Buffer, query: Record<string, string> = {}) {
  const qs = new URLSearchParams({ name: 'Leads', ...query });
  return t.app.inject({
    method: 'POST',
    url: `/api/v1/contact-lists?${qs}`,
    headers: { ...user.headers, 'content-type': 'text/csv' },
    payload: body,
  });
}

const get = (user: SignedUp, url: string) =>
  t.app.inject({ method: 'GET', url: `/api/v1${url}`, headers: user.headers });

async function contactsOf(user: SignedUp) {
  const response = await get(user, '/contacts?limit=500');
  assert.equal(response.statusCode, 200, response.body);
  return response.json().contacts as Array<Record<string, any>>;
}

async function countRows(table: 'contacts' | 'contact_lists' | 'contact_list_members', accountId: string) {
  const row = await t.infra.database.db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('account_id', '=', accountId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Valid, distinct US numbers: +1 415 200 0000 and up. */
const phoneNumber = (i: number) => `+1415${2_000_000 + i}`;

test('a row whose other columns exceed what a contact holds is reported invalid, and the rest are imported', async () => {
  const user = await signUp(t.app);
  const columns = Array.from({ length: 201 }, (_, i) => `c${i}`);
  const row = (phone: string, values: string[]) => [phone, ...values, ...Array(201 - values.length).fill('')].join(',');
  const csv = [
    ['phone', ...columns].join(','),
    row('+14155552671', Array(201).fill('x')), // 201 attributes: one too many
    row('+12125550123', Array(200).fill('y')), // exactly 200: fine
    row('+16465553890', ['a'.repeat(32_000), 'b'.repeat(32_000), 'c'.repeat(2_000)]), // 66,000 characters: too many
    row('+13105550100', ['small']),
  ].join('\n');
  const response = await importCsv(user, csv);
  assert.equal(response.statusCode, 200, response.body);
  const body = response.json();
  assert.deepEqual(body.counts, { rows: 4, imported: 2, updated: 0, duplicates: 0, invalid: 2, dnc: 0 });
  assert.deepEqual(
    body.errors.map((e: { row: number; reason: string }) => [e.row, e.reason]),
    [
      [2, 'too_many_attributes'],
      [4, 'attributes_too_large'],
    ],
  );
  assert.match(body.errors[0].message, /200/);
  const contacts = await contactsOf(user);
  assert.equal(Object.keys(contacts.find((c) => c.phone === '+12125550123')!.attributes).length, 200);
  assert.deepEqual(contacts.find((c) => c.phone === '+13105550100')!.attributes, { c0: 'small' });
});

test('a file wider than 1,000 columns, or with a field past 32,768 characters, is refused with the line and the limit', async () => {
  const user = await signUp(t.app);
  const wideHeader = await importCsv(
    user,
    `phone,${Array.from({ length: 1000 }, (_, i) => `c${i}`).join(',')}\n+14155552671\n`,
  );
  assert.equal(wideHeader.statusCode, 400);
  assert.equal(errorBody(wideHeader).error, 'invalid_csv');
  assert.deepEqual(errorBody(wideHeader).details, { line: 1, reason: 'too_many_columns', limit: 1000 });
  assert.match(errorBody(wideHeader).message, /1000 fields/);

  const wideRow = await importCsv(user, `phone,name\n+14155552671,Ada\n+12125550123${','.repeat(1000)}\n`);
  assert.equal(wideRow.statusCode, 400);
  assert.deepEqual(errorBody(wideRow).details, { line: 3, reason: 'too_many_columns', limit: 1000 });

  const longField = await importCsv(user, `phone,notes\n+14155552671,"${'n'.repeat(32_769)}"\n`);
  assert.equal(longField.statusCode, 400);
  assert.deepEqual(errorBody(longField).details, { line: 2, reason: 'field_too_large', limit: 32_768 });
  assert.match(errorBody(longField).message, /32768 characters/);

  assert.equal(await countRows('contact_lists', user.accountId), 0);
  assert.equal(await countRows('contacts', user.accountId), 0);
});

test('a NUL character makes its row invalid with a reason of its own; in the header it refuses the file', async () => {
  const user = await signUp(t.app);
  const response = await importCsv(
    user,
    'phone,name,notes\n+14155552671,Ada,ok\n+12125550123,"Gr\0ace",x\n+16465553890,Katherine,\0\n+13105550100,Alan,\n',
  );
  assert.equal(response.statusCode, 200, response.body);
  assert.deepEqual(response.json().counts, { rows: 4, imported: 2, updated: 0, duplicates: 0, invalid: 2, dnc: 0 });
  assert.deepEqual(
    response.json().errors.map((e: { row: number; reason: string }) => [e.row, e.reason]),
    [
      [3, 'nul_character'],
      [4, 'nul_character'],
    ],
  );
  assert.deepEqual((await contactsOf(user)).map((c) => c.phone).sort(), ['+13105550100', '+14155552671']);

  const other = await signUp(t.app);
  const header = await importCsv(other, 'phone,na\0me\n+14155552671,Ada\n');
  assert.equal(header.statusCode, 400);
  assert.equal(errorBody(header).error, 'invalid_csv');
  assert.deepEqual(errorBody(header).details, { line: 1, reason: 'nul_character' });
  assert.equal(await countRows('contact_lists', other.accountId), 0);
});

test('250,000 ragged rows are read in one pass on both CSV endpoints', async () => {
  const user = await signUp(t.app);
  const ragged = `Phone\n${',\n'.repeat(250_000)}+14155552671,extra,cells\n`;
  const imported = await importCsv(user, ragged);
  assert.equal(imported.statusCode, 200, imported.body);
  assert.deepEqual(imported.json().counts, { rows: 1, imported: 1, updated: 0, duplicates: 0, invalid: 0, dnc: 0 });
  const dnc = await t.app.inject({
    method: 'POST',
    url: '/api/v1/dnc/bulk',
    headers: { ...user.headers, 'content-type': 'text/csv' },
    payload: ragged,
  });
  assert.equal(dnc.statusCode, 200, dnc.body);
  assert.equal(dnc.json().added, 1);
});

test('a page of contacts is bounded by the size of their attributes, whatever was stored; the export carries them all', async () => {
  const user = await signUp(t.app);
  // Contacts stored before imports limited attributes: 2.3 MB of attributes each, written straight to the database.
  await sql`
    INSERT INTO contacts (id, account_id, phone_e164, first_name, attributes)
    SELECT gen_random_uuid(), ${user.accountId}::uuid, '+1415200' || lpad(n::text, 4, '0'), 'Legacy ' || n,
      (SELECT jsonb_object_agg('k' || k, repeat('v', 100)) FROM generate_series(1, 20000) k)
    FROM generate_series(1, 8) n`.execute(t.infra.database.db);
  await importCsv(user, 'phone,name,stage\n+12125550123,Ada,lead\n');

  const page = await get(user, '/contacts?limit=500');
  assert.equal(page.statusCode, 400);
  assert.equal(errorBody(page).error, 'validation_failed');
  assert.match(
    errorBody(page).message,
    /querystring\/limit .* more than the 16\.0 MB one page may hold; ask for fewer \(limit=\d+\)/,
  );
  const fits = Number(/limit=(\d+)/.exec(errorBody(page).message)![1]);
  const smaller = await get(user, `/contacts?limit=${fits}`);
  assert.equal(smaller.statusCode, 200);
  assert.equal(smaller.json().contacts.length, fits);
  assert.equal(smaller.json().total, 9);

  const exported = await get(user, '/exports/contacts.csv');
  assert.equal(exported.statusCode, 200);
  const rows = parse(exported.body, { columns: true }) as Array<Record<string, string>>;
  assert.equal(rows.length, 9);
  assert.equal(new Set(rows.map((r) => r.id)).size, 9);
  assert.equal(Object.keys(JSON.parse(rows.find((r) => r.first_name === 'Legacy 3')!.attributes!)).length, 20_000);

  // With a filter too: each batch is cut by size, and the next starts after the last contact it carried.
  const filtered = parse((await get(user, '/exports/contacts.csv?q=legacy')).body, { columns: true }) as Array<
    Record<string, string>
  >;
  assert.deepEqual(
    filtered.map((r) => r.first_name).sort(),
    [1, 2, 3, 4, 5, 6, 7, 8].map((n) => `Legacy ${n}`),
  );
});

test('PATCH may not grow a contact past its attribute limits', async () => {
  const user = await signUp(t.app);
  const header = Array.from({ length: 150 }, (_, i) => `a${i}`);
  await importCsv(user, `phone,${header.join(',')}\n+14155552671,${Array(150).fill('v').join(',')}\n`);
  const [contact] = await contactsOf(user);
  const patchAttributes = (attributes: Record<string, string | null>) =>
    t.app.inject({
      method: 'PATCH',
      url: `/api/v1/contacts/${contact!.id}`,
      headers: user.headers,
      payload: { attributes },
    });
  const more = Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`b${i}`, 'w']));
  const refused = await patchAttributes(more);
  assert.equal(refused.statusCode, 400);
  assert.deepEqual(errorBody(refused).details.fields, [
    {
      field: 'body/attributes',
      message: 'would give the contact 210 attributes, more than the 200 it may hold (remove some with null)',
    },
  ]);
  // Removing as many as are added fits.
  const swap = { ...more, ...Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`a${i}`, null])) };
  const accepted = await patchAttributes(swap);
  assert.equal(accepted.statusCode, 200, accepted.body);
  assert.equal(Object.keys(accepted.json().attributes).length, 150);
});

test("with duplicatePolicy=update, a merge past a contact's limits fails the whole import and leaves nothing behind", async () => {
  const user = await signUp(t.app);
  const header = Array.from({ length: 150 }, (_, i) => `a${i}`);
  // Two existing contacts: one early in number order (merged in the first step), one last (merged in the last).
  const seeded = await importCsv(
    user,
    `phone,first_name,${header.join(',')}\n+12125550123,Ada,${Array(150).fill('v').join(',')}\n+19725550100,Zed,${Array(150).fill('v').join(',')}\n`,
  );
  assert.equal(seeded.statusCode, 200, seeded.body);
  const before = await contactsOf(user);

  // 12,000 new numbers (several merge steps), Ada renamed, and 60 new attributes for Zed: 210 in all.
  const extra = Array.from({ length: 60 }, (_, i) => `b${i}`);
  const lines = [`phone,first_name,${extra.join(',')}`, `+12125550123,Augusta,${Array(60).fill('').join(',')}`];
  for (let i = 0; i < 12_000; i++) lines.push(`${phoneNumber(i)},New ${i},${Array(60).fill('').join(',')}`);
  lines.push(`+19725550100,,${Array(60).fill('w').join(',')}`);
  const response = await importCsv(user, `${lines.join('\n')}\n`, { duplicatePolicy: 'update', name: 'Too much' });
  assert.equal(response.statusCode, 400, response.body.slice(0, 300));
  assert.equal(errorBody(response).error, 'validation_failed');
  assert.match(errorBody(response).message, /\+19725550100 .*more than 200 attributes/);

  assert.equal(await countRows('contact_lists', user.accountId), 1, 'no new list');
  assert.equal(await countRows('contacts', user.accountId), 2, 'no new contacts');
  assert.equal(await countRows('contact_list_members', user.accountId), 2, 'no new memberships');
  assert.deepEqual(await contactsOf(user), before, 'the contacts merged before the failure are as they were');
});

test('parallel imports of the same file into one account all succeed (PostgreSQL)', {
  skip: !usingPostgres && 'DATABASE_URL is not set',
}, async () => {
  const user = await signUp(t.app);
  const rows = Array.from({ length: 50_000 }, (_, i) => `${phoneNumber(i)},Person ${i}`);
  const csv = `phone,name\n${rows.join('\n')}\n`;
  const responses = await Promise.all([
    importCsv(user, csv, { name: 'First' }),
    importCsv(user, csv, { name: 'Second' }),
    importCsv(user, csv, { name: 'Third', duplicatePolicy: 'update' }),
    t.app.inject({
      method: 'POST',
      url: '/api/v1/dnc/bulk',
      headers: { ...user.headers, 'content-type': 'text/csv' },
      payload: csv,
    }),
  ]);
  for (const response of responses) assert.equal(response.statusCode, 200, response.body.slice(0, 300));
  const imported = responses.slice(0, 3).map((r) => r.json().counts);
  assert.equal(
    imported.reduce((sum, c) => sum + c.imported, 0),
    50_000,
    'each number created once',
  );
  for (const counts of imported) assert.equal(counts.imported + counts.updated + counts.duplicates, 50_000);
  assert.equal(await countRows('contacts', user.accountId), 50_000);
  assert.equal(await countRows('contact_list_members', user.accountId), 150_000);
  const flagged = await t.infra.database.db
    .selectFrom('contacts')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('account_id', '=', user.accountId)
    .where('dnc', '=', true)
    .executeTakeFirstOrThrow();
  assert.equal(Number(flagged.n), 50_000, 'every contact flagged, whichever ran first');
});

test('search: 3 to 100 characters, no control characters, LIKE wildcards taken literally, through the trigram index', async () => {
  const user = await signUp(t.app);
  await importCsv(
    user,
    'phone,first_name,last_name\n+14155552671,50%,off\n+12125550123,500,plus\n+16465553890,Wu,Li\n',
  );
  const search = (q: string) => get(user, `/contacts?q=${encodeURIComponent(q)}`);
  const found = await search('50%');
  assert.equal(found.statusCode, 200);
  assert.deepEqual(
    found.json().contacts.map((c: { firstName: string }) => c.firstName),
    ['50%'],
  );
  assert.deepEqual(
    (await search('wu li')).json().contacts.map((c: { phone: string }) => c.phone),
    ['+16465553890'],
  );

  for (const [q, pattern] of [
    ['ab', /fewer than 3 characters/],
    ['  ab  ', /at least 3 characters, not counting spaces/],
    ['x'.repeat(101), /more than 100 characters/],
    ['ada\tlovelace', /control characters/],
    ['ada\0', /NUL characters/],
    ['%_%', /too few letters or digits to look up/],
    ['a..', /too few letters or digits to look up/],
  ] as const) {
    const response = await search(q);
    assert.equal(response.statusCode, 400, JSON.stringify(q));
    assert.equal(errorBody(response).error, 'validation_failed');
    assert.match(errorBody(response).message, pattern);
  }
  const exported = await get(user, '/exports/contacts.csv?q=ab');
  assert.equal(exported.statusCode, 400);
  assert.equal((await get(user, '/exports/contacts.csv?q=%25_%25')).statusCode, 400);

  // The expression the API searches is the one the trigram index holds (on a table this small the planner would
  // rather scan, so it is told not to).
  const plan = await t.infra.database.db.transaction().execute(async (trx) => {
    await sql`SET LOCAL enable_seqscan = off`.execute(trx);
    const { rows } = await sql<{ 'QUERY PLAN': string }>`
      EXPLAIN SELECT id FROM contacts WHERE ${contactSearchText} LIKE ${contactSearchPattern('Lovelace')}`.execute(trx);
    return rows.map((r) => r['QUERY PLAN']).join('\n');
  });
  assert.match(plan, /contacts_search_text_idx/);
});

test('the export neutralizes formulas behind leading Unicode whitespace', async () => {
  const user = await signUp(t.app);
  // Quoted cells keep their leading spaces: a no-break space and an ideographic space.
  await importCsv(user, 'phone,first_name,last_name\n+14155552671,"\u00a0=HYPERLINK(""http://x"")","\u3000+1+1"\n');
  const exported = await get(user, '/exports/contacts.csv');
  const [row] = parse(exported.body, { columns: true }) as Array<Record<string, string>>;
  assert.equal(row!.first_name, '\'\u00a0=HYPERLINK("http://x")');
  assert.equal(row!.last_name, "'\u3000+1+1");
});
