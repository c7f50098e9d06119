/**
 * The CSV export of a large account beside another account's requests, through the services (no HTTP). On embedded
 * PGlite one connection serves every account, on the main thread: the export must read short batches and let other
 * work in between them, or another account waits for the whole export. Another account's request is started the way
 * an HTTP request is (from an event of the event loop, here a timer) and timed from the moment it was due.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { buildTestServices, newAccount, type TestServices } from '../../../test/service-kit.js';
import { BATCH_ROWS, EXPORT_COLUMNS, nextBatchRows } from './contacts.export.js';

let t: TestServices;
before(async () => (t = await buildTestServices()));
after(() => t.close());

const CONTACTS = 200_000;
const INSERT_BATCH = 20_000;

/** Contacts straight into the table, newest first by number: contact i is `Name i`, i seconds old. */
async function insertContacts(accountId: string, count: number) {
  for (let from = 1; from <= count; from += INSERT_BATCH) {
    await sql`
      INSERT INTO contacts (id, account_id, first_name, last_name, phone_e164, email, attributes, created_at)
      SELECT gen_random_uuid(), ${accountId}::uuid, 'Name', i::text, '+1415' || lpad(i::text, 7, '0'), 'p' || i || '@x.io',
        CASE WHEN i % 1000 = 0 THEN jsonb_build_object('Stage', 'lead') ELSE '{}'::jsonb END,
        now() - make_interval(secs => i)
      FROM generate_series(${from}::int, ${Math.min(from + INSERT_BATCH - 1, count)}::int) i`.execute(t.db);
  }
}

/**
 * Calls `request` again and again, each call started by a timer, until stopped; what it reports is how long each
 * call took from the moment its timer was due, so time the event loop could not spare counts too.
 */
function probe(request: () => Promise<unknown>) {
  const waits: number[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const due = performance.now() + 5;
      await sleep(5);
      await request();
      waits.push(performance.now() - due);
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return waits;
    },
  };
}

test('a batch is sized by how long the last one took, within bounds', () => {
  assert.equal(nextBatchRows(1000, 40), 1000);
  assert.equal(nextBatchRows(1000, 160), 500, 'four times too slow: half the rows');
  assert.equal(nextBatchRows(1000, 10), 2000);
  assert.equal(nextBatchRows(BATCH_ROWS.min, 10_000), BATCH_ROWS.min);
  assert.equal(nextBatchRows(BATCH_ROWS.max, 0), BATCH_ROWS.max);
});

test('an export of 200,000 contacts is complete, and another account is answered between its batches', async (ctx) => {
  const big = await newAccount(t);
  const other = await newAccount(t);
  await insertContacts(big.accountId, CONTACTS);
  const listAgents = () => t.services.agents.list(other.auth, { limit: 25, offset: 0 });

  const idle = probe(listAgents);
  await sleep(500);
  const baseline = await idle.stop();

  const during = probe(listAgents);
  const started = performance.now();
  let header = '';
  let firstRow = '';
  let lastRow = '';
  let rows = 0;
  let pending = '';
  for await (const chunk of await t.services.contacts.exportCsv(big.auth, {})) {
    const lines = (pending + chunk).split('\r\n');
    pending = lines.pop()!;
    for (const line of lines) {
      if (!header) header = line;
      else {
        if (rows === 0) firstRow = line;
        lastRow = line;
        rows++;
      }
    }
  }
  const exportMs = performance.now() - started;
  const waits = await during.stop();

  assert.equal(pending, '', 'the export ends with a line break (CRLF)');
  assert.equal(header, EXPORT_COLUMNS.join(','));
  assert.equal(rows, CONTACTS);
  assert.match(firstRow, /^[0-9a-f-]{36},Name,1,'\+14150000001,p1@x\.io,/, 'newest first');
  assert.match(lastRow, /^[0-9a-f-]{36},Name,200000,'\+14150200000,p200000@x\.io,/);
  assert.ok(waits.length > 0, "the other account's requests were answered");
  const summary = (values: number[]) => {
    const sorted = [...values].sort((x, y) => x - y);
    const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!.toFixed(1);
    return `p50 ${at(0.5)} ms, p99 ${at(0.99)} ms, max ${sorted.at(-1)!.toFixed(1)} ms over ${sorted.length} calls`;
  };
  ctx.diagnostic(
    `export of ${CONTACTS} contacts: ${(exportMs / 1000).toFixed(1)} s; the other account's GET /v1/agents idle: ` +
      `${summary(baseline)}; during the export: ${summary(waits)} ` +
      `(max ${(Math.max(...waits) / Math.max(...baseline)).toFixed(1)}x its idle max)`,
  );
});
