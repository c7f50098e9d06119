import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as pause } from 'node:timers/promises';
import { sql } from 'kysely';
import { buildTestApp, call, errorBody, signUp, type SignedUp, type TestApp } from '../../../test/helpers.js';
import { importFraction, prefersAsync, READING_SHARE } from './contacts.import-async.js';

let t: TestApp;
// Polled as a dashboard would, with room in the rate limit for a slow machine.
const ENV = { CSV_BODY_LIMIT_BYTES: String(4 * 1024 * 1024), RATE_LIMIT_PER_MINUTE: '100000' };
before(async () => (t = await buildTestApp({ env: ENV })));
after(() => t.close());

function importCsv(user: SignedUp, body: string, query: Record<string, string> = {}, prefer?: string) {
  const qs = new URLSearchParams({ name: 'Leads', ...query });
  const headers: Record<string, string> = { 'content-type': 'text/csv' };
  if (prefer !== undefined) headers.prefer = prefer;
  return call(user, 'POST', `/contact-lists?${qs}`, body, { headers });
}

/** A file of `rows` rows: valid US numbers, every tenth one invalid, every fifth one repeated. */
function csvOf(rows: number) {
  const lines = ['Phone Number,First Name,Plan'];
  for (let i = 0; i < rows; i++) {
    const n = i % 5 === 4 ? i - 1 : i;
    const phone = i % 10 === 9 ? 'not a phone' : `+1415${String(2_000_000 + n).padStart(7, '0')}`;
    lines.push(`${phone},Row ${i},gold`);
  }
  return lines.join('\n');
}

/** Polls the list until its import is no longer processing; every answer seen, in order. */
async function pollUntilDone(user: SignedUp, location: string) {
  const seen: Array<Record<string, any>> = [];
  for (;;) {
    const response = await call(user, 'GET', location);
    assert.equal(response.statusCode, 200, response.body);
    const list = response.json();
    seen.push(list);
    if (list.import.state !== 'processing') return seen;
    // Not a timing condition: progress is written a few times a second, so asking more often shows nothing new.
    await pause(100);
  }
}

async function listCount(accountId: string) {
  const row = await t.infra.database.db
    .selectFrom('contact_lists')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('account_id', '=', accountId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

test('Prefer: respond-async is read as RFC 7240 writes it', () => {
  assert.equal(prefersAsync('respond-async'), true);
  assert.equal(prefersAsync('Respond-Async, wait=10'), true);
  assert.equal(prefersAsync(['return=minimal', 'respond-async; foo=bar']), true);
  assert.equal(prefersAsync('return=minimal'), false);
  assert.equal(prefersAsync('respond-asynchronously'), false);
  assert.equal(prefersAsync(undefined), false);
});

test('the share done: bytes read while reading, then rows merged while saving', () => {
  assert.equal(importFraction({ rows: 10, bytes: 50, saving: null }, 100), READING_SHARE / 2);
  assert.equal(importFraction({ rows: 10, bytes: 100, saving: { merged: 0, valid: 8 } }, 100), READING_SHARE);
  assert.equal(importFraction({ rows: 10, bytes: 100, saving: { merged: 8, valid: 8 } }, 100), 1);
  assert.equal(importFraction({ rows: 0, bytes: 0, saving: null }, 0), 0);
});

test('202 with the list processing, then the same report as the import that waits', async () => {
  const csv = csvOf(30);
  const waited = await importCsv(await signUp(t.app), csv);
  assert.equal(waited.statusCode, 200, waited.body);

  const user = await signUp(t.app);
  const response = await importCsv(user, csv, { name: 'Async leads' }, 'respond-async');
  assert.equal(response.statusCode, 202, response.body);
  assert.equal(response.headers['preference-applied'], 'respond-async');
  const list = response.json();
  assert.equal(response.headers.location, `/api/v1/contact-lists/${list.id}`);
  assert.equal(list.name, 'Async leads');
  assert.ok(['processing', 'completed'].includes(list.import.state));
  assert.equal(list.import.bytesTotal, Buffer.byteLength(csv));

  const seen = await pollUntilDone(user, response.headers.location as string);
  const done = seen.at(-1)!;
  assert.equal(done.import.state, 'completed', JSON.stringify(done.import));
  assert.deepEqual(done.counts, waited.json().counts);
  assert.deepEqual(done.errors, waited.json().errors);
  assert.equal(done.import.rowsProcessed, 30);
  assert.equal(done.import.fraction, 1);
  assert.equal(done.import.bytesRead, Buffer.byteLength(csv));
  assert.equal(done.import.failure, null);
  assert.ok(done.import.finishedAt);

  const members = await call(user, 'GET', `/contact-lists/${list.id}/contacts?limit=100`);
  assert.equal(members.json().total, waited.json().counts.imported);
  const listed = await call(user, 'GET', '/contact-lists');
  assert.equal(listed.json().contactLists[0].import.state, 'completed');
});

test('the import that waits is unchanged, and its list keeps its report', async () => {
  const user = await signUp(t.app);
  const response = await importCsv(user, csvOf(10), {}, 'return=minimal');
  assert.equal(response.statusCode, 200, response.body);
  assert.equal(response.headers['preference-applied'], undefined);
  const { listId, counts, errors } = response.json();
  assert.deepEqual(Object.keys(response.json()).sort(), ['counts', 'errors', 'listId']);
  const list = (await call(user, 'GET', `/contact-lists/${listId}`)).json();
  assert.deepEqual(list.counts, counts);
  assert.deepEqual(list.errors, errors);
  assert.equal(list.import.state, 'completed');
  assert.equal(list.import.rowsProcessed, 10);
});

test('progress moves forward while a larger file is imported', async () => {
  const user = await signUp(t.app);
  const response = await importCsv(user, csvOf(30_000), {}, 'respond-async');
  assert.equal(response.statusCode, 202, response.body);
  const seen = await pollUntilDone(user, response.headers.location as string);
  const rows = seen.map((list) => list.import.rowsProcessed as number);
  const fractions = seen.map((list) => list.import.fraction as number);
  for (let i = 1; i < seen.length; i++) {
    assert.ok(rows[i]! >= rows[i - 1]!, `rows processed went back: ${rows.join(',')}`);
    assert.ok(fractions[i]! >= fractions[i - 1]!, `fraction went back: ${fractions.join(',')}`);
  }
  for (const list of seen) {
    assert.ok(list.import.fraction >= 0 && list.import.fraction <= 1);
    assert.ok(list.import.bytesRead <= list.import.bytesTotal);
  }
  const done = seen.at(-1)!;
  assert.equal(done.import.state, 'completed');
  assert.equal(done.counts.rows, 30_000);
  assert.equal(done.import.rowsProcessed, 30_000);
});

test('a file refused up front is the error answer, and nothing is written', async () => {
  const user = await signUp(t.app);
  const noPhone = await importCsv(user, 'Name,Email\nAda,ada@example.com\n', {}, 'respond-async');
  assert.equal(noPhone.statusCode, 400);
  assert.equal(errorBody(noPhone).error, 'validation_failed');
  assert.equal(noPhone.headers['preference-applied'], undefined);

  const malformed = await importCsv(user, 'phone,name\n+14155550101,"Ada\n+14155550102,Bob\n', {}, 'respond-async');
  assert.equal(malformed.statusCode, 400, malformed.body);
  assert.equal(errorBody(malformed).error, 'invalid_csv');

  const empty = await importCsv(user, '', {}, 'respond-async');
  assert.equal(empty.statusCode, 400);

  const tooLarge = await importCsv(user, `phone\n${'+14155550101\n'.repeat(400_000)}`, {}, 'respond-async');
  assert.equal(tooLarge.statusCode, 413);
  assert.equal(errorBody(tooLarge).error, 'payload_too_large');

  const badCountry = await importCsv(user, csvOf(3), { defaultCountry: 'ZZ' }, 'respond-async');
  assert.equal(badCountry.statusCode, 400);
  assert.equal(badCountry.json().details.fields[0].field, 'querystring/defaultCountry');

  assert.equal(await listCount(user.accountId), 0);
  const contacts = await call(user, 'GET', '/contacts');
  assert.equal(contacts.json().total, 0);
});

test('do-not-call numbers are flagged, as in the import that waits', async () => {
  const user = await signUp(t.app);
  assert.equal((await call(user, 'POST', '/dnc', { phone: '+14152000001' })).statusCode < 300, true);
  const response = await importCsv(user, csvOf(5), {}, 'respond-async');
  assert.equal(response.statusCode, 202, response.body);
  const done = (await pollUntilDone(user, response.headers.location as string)).at(-1)!;
  assert.equal(done.counts.dnc, 1);
  const flagged = await call(user, 'GET', `/contacts?phone=${encodeURIComponent('+14152000001')}`);
  assert.equal(flagged.json().contacts[0].dnc, true);
});

test('another account gets 404 on the list', async () => {
  const owner = await signUp(t.app);
  const response = await importCsv(owner, csvOf(5), {}, 'respond-async');
  assert.equal(response.statusCode, 202, response.body);
  await pollUntilDone(owner, response.headers.location as string);
  const stranger = await signUp(t.app);
  const read = await call(stranger, 'GET', response.headers.location as string);
  assert.equal(read.statusCode, 404);
  assert.equal(errorBody(read).error, 'not_found');
  const members = await call(stranger, 'GET', `${response.headers.location}/contacts`);
  assert.equal(members.statusCode, 404);
  assert.equal((await call(stranger, 'GET', '/contact-lists')).json().total, 0);
});

test('the sweep fails an import whose process stopped, and spares a live one on PostgreSQL', async () => {
  const user = await signUp(t.app);
  const db = t.infra.database.db;
  const importing = (id: string, heartbeat: ReturnType<typeof sql>) =>
    db
      .insertInto('contact_lists')
      .values({
        id,
        account_id: user.accountId,
        name: id.slice(0, 8),
        default_country: 'US',
        duplicate_policy: 'skip',
        row_count: 0,
        imported_count: 0,
        updated_count: 0,
        duplicate_count: 0,
        invalid_count: 0,
        dnc_count: 0,
        import_state: 'processing',
        import_heartbeat_at: heartbeat as never,
      })
      .execute();
  const stale = crypto.randomUUID();
  const fresh = crypto.randomUUID();
  await importing(stale, sql`now() - interval '1 hour'`);
  await importing(fresh, sql`now()`);

  const { failed } = await t.services.contacts.sweepLostImports();
  const lost = (await call(user, 'GET', `/contact-lists/${stale}`)).json();
  assert.equal(lost.import.state, 'failed');
  assert.equal(lost.import.failure.details.reason, 'server_stopped');
  assert.match(lost.import.failure.message, /stopped before it completed/);
  assert.ok(lost.import.finishedAt);

  const live = (await call(user, 'GET', `/contact-lists/${fresh}`)).json();
  if (t.infra.database.kind === 'postgres') {
    // Another instance may be running it: its heartbeat is recent.
    assert.equal(live.import.state, 'processing');
    assert.equal(failed, 1);
  } else {
    // One process owns the embedded database: an import it does not run has no process.
    assert.equal(live.import.state, 'failed');
    assert.equal(failed, 2);
  }
  // A second sweep finds nothing more to do.
  const again = await t.services.contacts.sweepLostImports();
  assert.equal(again.failed, 0);
});

test('a shutdown stops an import in flight cleanly: failed, nothing imported', async () => {
  const own = await buildTestApp({ env: ENV });
  try {
    const user = await signUp(own.app);
    const response = await importCsv(user, csvOf(30_000), {}, 'respond-async');
    assert.equal(response.statusCode, 202, response.body);
    // No grace: whatever was still running is stopped at its next step.
    await own.services.contacts.stopImports(0);
    const list = (await call(user, 'GET', response.headers.location as string)).json();
    if (list.import.state === 'failed') {
      assert.equal(list.import.failure.details.reason, 'server_stopped');
      assert.equal((await call(user, 'GET', '/contacts')).json().total, 0, 'nothing imported');
      assert.equal((await call(user, 'GET', `${response.headers.location}/contacts`)).json().total, 0);
    } else {
      // It completed before the stop reached it.
      assert.equal(list.import.state, 'completed');
    }
  } finally {
    await own.close();
  }
});
