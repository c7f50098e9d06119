import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { sql } from 'kysely';
import { buildTestApp, call, errorBody, signUp, type SignedUp, type TestApp } from '../../../test/helpers.js';

let t: TestApp;
before(async () => (t = await buildTestApp({ env: { CSV_BODY_LIMIT_BYTES: '65536' } })));
after(() => t.close());

const fixture = (name: string) => readFileSync(new URL(`../../../test/fixtures/csv/${name}`, import.meta.url));

function importCsv(
  user: SignedUp,
  body: string | Buffer,
  query: Record<string, string> = {},
  contentType = 'text/csv',
) {
  const qs = new URLSearchParams({ name: 'Leads', ...query });
  return call(user, 'POST', `/contact-lists?${qs}`, body, { headers: { 'content-type': contentType } });
}

async function contactsOf(user: SignedUp, query = '') {
  const response = await call(user, 'GET', `/contacts?limit=500${query}`);
  assert.equal(response.statusCode, 200, response.body);
  return response.json().contacts as Array<Record<string, any>>;
}

const byPhone = (contacts: Array<Record<string, any>>, phone: string) => contacts.find((c) => c.phone === phone);

async function countRows(table: 'contacts' | 'contact_lists' | 'contact_list_members', accountId: string) {
  const row = await t.infra.database.db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('account_id', '=', accountId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

test('a HubSpot-style export: headers matched, phones normalized, bad rows reported, duplicates counted, extras kept', async () => {
  const user = await signUp(t.app);
  const response = await importCsv(user, fixture('hubspot-export.csv'), { name: 'HubSpot leads' });
  assert.equal(response.statusCode, 200, response.body);
  const body = response.json();
  assert.deepEqual(body.counts, { rows: 6, imported: 3, updated: 0, duplicates: 1, invalid: 2, dnc: 0 });
  assert.deepEqual(body.errors, [
    { row: 4, phone: 'not a number', reason: 'not_a_number', message: 'Not a phone number' },
    { row: 7, phone: '', reason: 'missing', message: 'No phone number' },
  ]);

  const contacts = await contactsOf(user);
  assert.equal(contacts.length, 3);
  const ada = byPhone(contacts, '+12125550123')!;
  assert.equal(ada.firstName, 'Ada');
  assert.equal(ada.lastName, 'Lovelace', 'with "skip" the first row for a number wins');
  assert.equal(ada.email, 'ada@example.com');
  assert.equal(ada.company, 'Analytical Engines');
  assert.equal(ada.timezone, 'America/New_York');
  assert.deepEqual(ada.attributes, { 'Record ID': '5101', 'Lifecycle Stage': 'lead', 'Contact owner': 'Sam Seller' });
  assert.equal(ada.dnc, false);
  const grace = byPhone(contacts, '+14155552671')!;
  assert.equal(grace.timezone, 'America/Los_Angeles', 'the mobile column is used when the phone column is empty');

  const list = await t.app.inject({
    method: 'GET',
    url: `/api/v1/contact-lists/${body.listId}`,
    headers: user.headers,
  });
  assert.equal(list.statusCode, 200);
  assert.equal(list.json().name, 'HubSpot leads');
  assert.equal(list.json().defaultCountry, 'US');
  assert.equal(list.json().duplicatePolicy, 'skip');
  assert.deepEqual(list.json().counts, body.counts);
});

test('a Salesforce-style export: CRLF, quoted fields with commas, quotes and newlines', async () => {
  const user = await signUp(t.app);
  const response = await importCsv(user, fixture('salesforce-export.csv'));
  assert.equal(response.statusCode, 200, response.body);
  assert.deepEqual(response.json().counts, { rows: 3, imported: 3, updated: 0, duplicates: 0, invalid: 0, dnc: 0 });
  const contacts = await contactsOf(user);
  const linus = byPhone(contacts, '+16263956811')!;
  assert.equal(linus.company, 'Caltech, Inc.');
  assert.equal(linus.attributes['Mailing Street'], '1200 E California Blvd\r\nPasadena, CA');
  assert.equal(linus.attributes.Description, 'Said "hello", twice');
  assert.equal(linus.attributes.Title, 'Chemist');
  assert.equal(byPhone(contacts, '+33142685300')!.lastName, 'Curie');
  assert.ok(byPhone(contacts, '+4533123456'));
});

test('a Google Contacts export with a UTF-8 BOM and international numbers', async () => {
  const user = await signUp(t.app);
  const response = await importCsv(user, fixture('google-contacts.csv'));
  assert.equal(response.statusCode, 200, response.body);
  assert.equal(response.json().counts.imported, 3);
  const contacts = await contactsOf(user);
  const yuki = byPhone(contacts, '+819012345678')!;
  assert.equal(yuki.firstName, 'Yuki');
  assert.equal(yuki.email, 'yuki@example.jp');
  assert.equal(yuki.company, 'Sony');
  assert.equal(yuki.attributes.Name, 'Yuki Tanaka', 'the BOM is not part of the first header');
  assert.equal(byPhone(contacts, '+5511912345678')!.firstName, 'João');
});

test("';' delimiters, national numbers read in defaultCountry, and the account's country by default", async () => {
  const user = await signUp(t.app);
  const response = await importCsv(user, fixture('semicolon-de.csv'), { defaultCountry: 'de' });
  assert.equal(response.statusCode, 200, response.body);
  assert.deepEqual(response.json().counts, { rows: 3, imported: 3, updated: 0, duplicates: 0, invalid: 0, dnc: 0 });
  const contacts = await contactsOf(user);
  const juergen = byPhone(contacts, '+4930901820')!;
  assert.equal(juergen.firstName, 'Jürgen');
  assert.equal(juergen.company, 'Müller GmbH');
  assert.equal(juergen.attributes.Notiz, 'Rückruf; bitte vormittags');
  assert.ok(byPhone(contacts, '+4915123456789'));

  // Without defaultCountry, the account's (US) applies: German national numbers are then invalid.
  const other = await signUp(t.app);
  const asUs = await importCsv(other, fixture('semicolon-de.csv'));
  assert.equal(asUs.json().counts.invalid, 2);
  assert.equal(asUs.json().counts.imported, 1);
});

test('international formats: +, 00, a missing "+", and reasons for each bad number', async () => {
  const user = await signUp(t.app);
  const response = await importCsv(user, fixture('international.csv'));
  assert.equal(response.statusCode, 200, response.body);
  const body = response.json();
  assert.deepEqual(body.counts, { rows: 9, imported: 6, updated: 0, duplicates: 0, invalid: 3, dnc: 0 });
  assert.deepEqual(
    body.errors.map((e: { row: number; reason: string }) => [e.row, e.reason]),
    [
      [8, 'invalid_country'],
      [9, 'too_short'],
      [10, 'not_a_number'],
    ],
  );
  const phones = (await contactsOf(user)).map((c) => c.phone).sort();
  assert.deepEqual(phones, [
    '+442079460958',
    '+447911123456',
    '+4915123456789',
    '+5511912345678',
    '+61298765432',
    '+81312345678',
  ]);
  const oliver = byPhone(await contactsOf(user), '+442079460958')!;
  assert.equal(oliver.firstName, 'Oliver');
  assert.equal(oliver.lastName, 'Smith', 'a full-name column is split when there are no first/last columns');
});

test('UTF-16 (Excel "Unicode text") with tab delimiters is read too', async () => {
  const user = await signUp(t.app);
  const text = 'Name\tMobile\tE-mail\r\nZoë Ångström\t+46 70 123 45 67\tzoe@example.se\r\n';
  const body = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]);
  const response = await importCsv(user, body);
  assert.equal(response.statusCode, 200, response.body);
  const [zoe] = await contactsOf(user);
  assert.equal(zoe!.phone, '+46701234567');
  assert.equal(zoe!.firstName, 'Zoë');
  assert.equal(zoe!.lastName, 'Ångström');
  assert.equal(zoe!.email, 'zoe@example.se');
});

test('only the first 100 row errors are listed; every invalid row is counted', async () => {
  const user = await signUp(t.app);
  const rows = Array.from({ length: 250 }, (_, i) => (i % 2 ? `+1415555${String(i).padStart(4, '0')}` : `bad-${i}`));
  const response = await importCsv(user, `phone\n${rows.join('\n')}\n`);
  const body = response.json();
  assert.equal(body.counts.invalid, 125);
  assert.equal(body.counts.imported, 125);
  assert.equal(body.errors.length, 100);
  assert.deepEqual(
    body.errors.slice(0, 2).map((e: { row: number }) => e.row),
    [2, 4],
  );
});

test('columns headed __proto__ and constructor are kept as attributes, shown and exported like any other', async () => {
  const user = await signUp(t.app);
  const response = await importCsv(user, 'phone,__proto__,constructor,Stage\n+14155552671,x,y,lead\n');
  assert.equal(response.statusCode, 200, response.body);
  const [contact] = await contactsOf(user);
  assert.deepEqual(contact!.attributes, JSON.parse('{"__proto__":"x","constructor":"y","Stage":"lead"}'));
  const exported = await call(user, 'GET', '/exports/contacts.csv');
  assert.match(exported.body, /"\{""Stage"":""lead"",""__proto__"":""x"",""constructor"":""y""\}"/);
});

test('duplicates against existing contacts: "skip" keeps them and adds them to the list; "update" overwrites non-empty fields', async () => {
  const user = await signUp(t.app);
  await importCsv(user, 'phone,first_name,last_name,company,stage\n+14155552671,Grace,Hopper,Navy,lead\n');
  const skipped = await importCsv(
    user,
    'phone,first_name,last_name,company\n(415) 555-2671,Amazing,,\n+12125550123,Ada,,\n',
    { name: 'Second' },
  );
  assert.deepEqual(skipped.json().counts, { rows: 2, imported: 1, updated: 0, duplicates: 1, invalid: 0, dnc: 0 });
  assert.equal(byPhone(await contactsOf(user), '+14155552671')!.firstName, 'Grace');
  const members = await t.app.inject({
    method: 'GET',
    url: `/api/v1/contact-lists/${skipped.json().listId}/contacts`,
    headers: user.headers,
  });
  assert.deepEqual(
    members
      .json()
      .contacts.map((c: { phone: string }) => c.phone)
      .sort(),
    ['+12125550123', '+14155552671'],
  );

  const updated = await importCsv(
    user,
    'phone,first_name,last_name,company,stage,owner\n+1 415 555 2671,Amazing,,,customer,\n+1 415 555 2671,,,Navy Reserve,,Sam\n',
    { name: 'Third', duplicatePolicy: 'update' },
  );
  assert.deepEqual(updated.json().counts, { rows: 2, imported: 0, updated: 1, duplicates: 1, invalid: 0, dnc: 0 });
  const grace = byPhone(await contactsOf(user), '+14155552671')!;
  assert.equal(grace.firstName, 'Amazing');
  assert.equal(grace.lastName, 'Hopper', 'an empty imported field does not erase');
  assert.equal(grace.company, 'Navy Reserve', 'later rows of the file win');
  assert.deepEqual(grace.attributes, { stage: 'customer', owner: 'Sam' });
  assert.equal(await countRows('contacts', user.accountId), 2);
});

test('numbers on the do-not-call list are imported but flagged', async () => {
  const user = await signUp(t.app);
  const dnc = await t.app.inject({
    method: 'POST',
    url: '/api/v1/dnc',
    headers: user.headers,
    payload: { phone: '(212) 555-0123' },
  });
  assert.equal(dnc.statusCode, 200);
  const response = await importCsv(user, fixture('hubspot-export.csv'));
  assert.equal(response.json().counts.dnc, 1);
  assert.equal(response.json().counts.imported, 3);
  const contacts = await contactsOf(user);
  assert.equal(byPhone(contacts, '+12125550123')!.dnc, true);
  assert.equal(byPhone(contacts, '+14155552671')!.dnc, false);
});

test('malformed CSV is a 400 naming the line, and leaves nothing behind', async () => {
  const user = await signUp(t.app);
  const response = await importCsv(user, fixture('broken-quotes.csv'));
  assert.equal(response.statusCode, 400);
  const error = errorBody(response);
  assert.equal(error.error, 'invalid_csv');
  assert.equal(error.details.line, 4);
  assert.match(error.message, /line 4/);
  assert.equal(await countRows('contact_lists', user.accountId), 0);
  assert.equal(await countRows('contacts', user.accountId), 0);
});

test('an empty file, a file without a phone column, and a non-CSV body are refused without writing', async () => {
  const user = await signUp(t.app);
  const empty = await importCsv(user, fixture('empty.csv'));
  assert.equal(empty.statusCode, 400);
  assert.equal(errorBody(empty).error, 'validation_failed');
  assert.match(errorBody(empty).message, /empty/);

  const blankLines = await importCsv(user, '\r\n\r\n');
  assert.equal(blankLines.statusCode, 400);

  const noPhone = await importCsv(user, 'name,email\nAda,ada@example.com\n');
  assert.equal(noPhone.statusCode, 400);
  assert.match(errorBody(noPhone).message, /phone column/);
  assert.deepEqual(errorBody(noPhone).details.headers, ['name', 'email']);

  const json = await t.app.inject({
    method: 'POST',
    url: '/api/v1/contact-lists?name=x',
    headers: user.headers,
    payload: { phone: '+14155552671' },
  });
  assert.equal(json.statusCode, 415);
  assert.equal(errorBody(json).error, 'unsupported_media_type');

  assert.equal(await countRows('contact_lists', user.accountId), 0);

  const headerOnly = await importCsv(user, 'phone,name\n');
  assert.equal(headerOnly.statusCode, 200);
  assert.deepEqual(headerOnly.json().counts, { rows: 0, imported: 0, updated: 0, duplicates: 0, invalid: 0, dnc: 0 });
});

test('bad query parameters are validation errors', async () => {
  const user = await signUp(t.app);
  for (const query of <Array<Record<string, string>>>[
    { name: '' },
    { defaultCountry: 'USA' },
    { defaultCountry: 'ZZ' },
    { duplicatePolicy: 'merge' },
    { bogus: '1' },
  ]) {
    const response = await importCsv(user, 'phone\n+14155552671\n', query);
    assert.equal(response.statusCode, 400, JSON.stringify(query));
    assert.equal(errorBody(response).error, 'validation_failed');
  }
  const noName = await t.app.inject({
    method: 'POST',
    url: '/api/v1/contact-lists',
    headers: { ...user.headers, 'content-type': 'text/csv' },
    payload: 'phone\n+14155552671\n',
  });
  assert.equal(noName.statusCode, 400);
  assert.equal(await countRows('contact_lists', user.accountId), 0);
});

test('a body past the configured limit is a 413 and writes nothing', async () => {
  const user = await signUp(t.app);
  const rows = Array.from({ length: 3000 }, (_, i) => `+1415555${String(i).padStart(4, '0')},Name ${i}`).join('\n');
  const big = `phone,name\n${rows}\n`;
  assert.ok(big.length > 65536);
  const response = await importCsv(user, big);
  assert.equal(response.statusCode, 413);
  assert.equal(errorBody(response).error, 'payload_too_large');
  assert.equal(await countRows('contact_lists', user.accountId), 0);
  assert.equal(await countRows('contacts', user.accountId), 0);
});

test('a body streamed without Content-Length is cut off at the limit too', async () => {
  const user = await signUp(t.app);
  const { Readable } = await import('node:stream');
  async function* chunks() {
    yield 'phone,name\n';
    for (let i = 0; i < 4000; i++) yield `+1415555${String(i % 10000).padStart(4, '0')},Someone\n`;
  }
  const response = await t.app.inject({
    method: 'POST',
    url: '/api/v1/contact-lists?name=stream',
    headers: { ...user.headers, 'content-type': 'text/csv' },
    payload: Readable.from(chunks()),
  });
  assert.equal(response.statusCode, 413);
  assert.equal(await countRows('contacts', user.accountId), 0);
});

test('imports need a member role and a signed-in caller', async () => {
  const anonymous = await t.app.inject({
    method: 'POST',
    url: '/api/v1/contact-lists?name=x',
    headers: { 'content-type': 'text/csv' },
    payload: 'phone\n+14155552671\n',
  });
  assert.equal(anonymous.statusCode, 401);
  assert.equal(errorBody(anonymous).error, 'unauthorized');
});

test('on the embedded database, an import of many contacts leaves statistics for the planner', {
  skip: Boolean(process.env.DATABASE_URL) && 'PostgreSQL analyzes tables by itself',
}, async () => {
  const user = await signUp(t.app);
  const phones = Array.from({ length: 300 }, (_, i) => `+1415555${2000 + i}`);
  const response = await importCsv(user, `phone\n${phones.join('\n')}\n`);
  assert.equal(response.json().counts.imported, 300, response.body);
  const { rows } = await sql<{ reltuples: number }>`
      SELECT reltuples FROM pg_class WHERE oid = 'contacts'::regclass`.execute(t.infra.database.db);
  assert.ok(Number(rows[0]!.reltuples) >= 300, `the planner counts ${rows[0]!.reltuples} contacts`);
});
