/**
 * Free-text search through the services (no HTTP): which texts the trigram index can look up (checked against the
 * database's own pg_trgm), and how far a search counts its matches. The HTTP contract is in contacts.test.ts and
 * contacts.import-limits.test.ts.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { buildTestServices, newAccount, type TestServices } from '../../../test/service-kit.js';
import { contactSearchPattern, contactSearchText } from './contacts.repo.js';
import { SEARCH_COUNT_AHEAD, searchHasTrigram } from './contacts.search.js';

let t: TestServices;
before(async () => (t = await buildTestServices()));
after(() => t.close());

async function insertContacts(accountId: string, count: number, name: (i: number) => string, phonePrefix: string) {
  await sql`
    INSERT INTO contacts (id, account_id, first_name, phone_e164, created_at)
    SELECT gen_random_uuid(), ${accountId}::uuid, ${name(0)} || i, ${phonePrefix} || lpad(i::text, 5, '0'),
      now() - make_interval(secs => i)
    FROM generate_series(1, ${count}::int) i`.execute(t.db);
}

/** How many contacts the trigram index hands on for the search of `text` (every contact when it finds no trigram). */
async function indexCandidates(text: string) {
  return t.db.transaction().execute(async (trx) => {
    await sql`SET LOCAL enable_seqscan = off`.execute(trx);
    const { rows } = await sql<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>`
      EXPLAIN (ANALYZE, FORMAT JSON) SELECT id FROM contacts WHERE ${contactSearchText} LIKE ${contactSearchPattern(text)}`.execute(
      trx,
    );
    const scan = findNode(rows[0]!['QUERY PLAN'][0]!.Plan, 'Bitmap Index Scan');
    assert.ok(scan, 'the search goes through the index');
    return scan['Actual Rows'];
  });
}

interface PlanNode {
  'Node Type': string;
  'Actual Rows': number;
  Plans?: PlanNode[];
}

function findNode(node: PlanNode, type: string): PlanNode | undefined {
  if (node['Node Type'] === type) return node;
  for (const child of node.Plans ?? []) {
    const found = findNode(child, type);
    if (found) return found;
  }
  return undefined;
}

test('a text is searchable exactly when pg_trgm finds a trigram in it, so no search reads every contact', async () => {
  const account = await newAccount(t);
  // Words none of the texts below share a trigram with.
  await insertContacts(account.accountId, 40, () => 'Zed', '+1212555');
  const { n: all } = await t.db
    .selectFrom('contacts')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  const cases: Array<[string, boolean]> = [
    ['abc', true],
    ['zoë', true],
    ['50%', true],
    ['wu li', true],
    ['a b', true],
    ['.ab', true],
    ['ab.', true],
    ['. a', true],
    ['ë.x', true],
    ['415-55', true],
    ['ab', false],
    ['a.', false],
    ['a..', false],
    ['%_%', false],
    ['...', false],
    ['-- ', false],
  ];
  for (const [text, searchable] of cases) {
    assert.equal(searchHasTrigram(text), searchable, JSON.stringify(text));
    const candidates = await indexCandidates(text);
    assert.equal(candidates < Number(all), searchable, `${JSON.stringify(text)}: ${candidates} of ${all} contacts`);
  }
});

test('a search without anything to look up is refused, before any query', async () => {
  const account = await newAccount(t);
  for (const q of ['%_%', 'a..', '...', '_%_%_']) {
    await assert.rejects(
      t.services.contacts.listContacts(account.auth, { q, limit: 25, offset: 0 }),
      (error: Error) => {
        assert.match(error.message, /too few letters or digits to look up/);
        return true;
      },
    );
    await assert.rejects(t.services.contacts.exportCsv(account.auth, { q }), /too few letters or digits/);
  }
});

test('a search counts its matches up to 1,000 past the offset; a short page or a count within reach is exact', async () => {
  const account = await newAccount(t);
  const other = await newAccount(t);
  const matches = SEARCH_COUNT_AHEAD + 200;
  await insertContacts(account.accountId, matches, () => 'Nemo', '+1415555');
  await insertContacts(other.accountId, 50, () => 'Nemo', '+1415555');
  const search = (q: string, limit: number, offset: number) =>
    t.services.contacts.listContacts(account.auth, { q, limit, offset });

  const first = await search('nemo', 25, 0);
  assert.equal(first.contacts.length, 25);
  assert.deepEqual([first.total, first.totalExact], [SEARCH_COUNT_AHEAD, false]);
  assert.equal(first.contacts[0]!.firstName, 'Nemo1', 'newest first');

  // From offset 500 the count reaches every match: exact again.
  const deeper = await search('nemo', 25, 500);
  assert.deepEqual([deeper.total, deeper.totalExact], [matches, true]);

  // Past the last match: counted, exact.
  const past = await search('nemo', 25, matches + 10);
  assert.deepEqual([past.contacts.length, past.total, past.totalExact], [0, matches, true]);

  // 'nemo11' is Nemo11, Nemo110..Nemo119 and Nemo1100..Nemo1199: a page that is not full gives the count.
  const few = await search('nemo11', 500, 0);
  assert.deepEqual([few.contacts.length, few.total, few.totalExact], [111, 111, true]);
  const fewLater = await search('nemo11', 100, 100);
  assert.deepEqual([fewLater.contacts.length, fewLater.total, fewLater.totalExact], [11, 111, true]);

  // Without q every list counts exactly.
  const all = await t.services.contacts.listContacts(account.auth, { limit: 1, offset: 0 });
  assert.deepEqual([all.total, all.totalExact], [matches, true]);

  // While more are left, total stays past the page, so `offset + limit < total` pages to the end.
  let offset = 0;
  let seen = 0;
  for (;;) {
    const page = await search('nemo', 500, offset);
    seen += page.contacts.length;
    if (offset + page.limit >= page.total) break;
    offset += page.limit;
  }
  assert.equal(seen, matches);
});
