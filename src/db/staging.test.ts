import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { openDatabase } from './client.js';
import { copyIntoTable, phoneColumns, stagingJson, withSession } from './staging.js';

test('phone columns are found by any common header, best first', () => {
  assert.deepEqual(phoneColumns(['Name', 'Mobile Phone', 'Phone Number']), [2, 1]);
  assert.deepEqual(phoneColumns(['Phone 1 - Value', 'TEL']), [0, 1]);
  assert.deepEqual(phoneColumns(['telefon', 'email']), [0]);
  assert.deepEqual(phoneColumns(['name', 'email']), []);
});

test('staging JSON turns a lone surrogate into U+FFFD and refuses a NUL', () => {
  assert.equal(stagingJson([{ a: 'ok \\u0041' }]), '[{"a":"ok \\\\u0041"}]');
  assert.equal(JSON.parse(stagingJson([{ a: 'x\ud800y' }]))[0].a, 'x\ufffdy');
  assert.equal(JSON.parse(stagingJson([{ a: '😀' }]))[0].a, '😀');
  assert.throws(() => stagingJson([{ a: 'x\u0000' }]), /NUL/);
});

test('COPY streams text into a temporary table of the session; a failing source cancels it with its own error', {
  skip: !process.env.DATABASE_URL && 'needs PostgreSQL (DATABASE_URL)',
}, async () => {
  const { db, close } = await openDatabase({ databaseUrl: process.env.DATABASE_URL!, dataDir: ':memory:' });
  try {
    await withSession(db, 'postgres', async (session) => {
      await sql`CREATE TEMP TABLE copied (n integer, t text, j jsonb)`.execute(session);
      async function* pieces() {
        yield '1\ttab\\there\t{"a":"b"}\n';
        yield `2\t${'lone \ud800 surrogate'}\t\\N\n`;
      }
      await copyIntoTable(session, 'copied', ['n', 't', 'j'], pieces());
      const { rows } = await sql<{ n: number; t: string; j: unknown }>`SELECT n, t, j FROM copied ORDER BY n`.execute(
        session,
      );
      assert.deepEqual(rows, [
        { n: 1, t: 'tab\there', j: { a: 'b' } },
        { n: 2, t: 'lone \ufffd surrogate', j: null },
      ]);

      const refused = new Error('the file was refused');
      async function* failing() {
        yield '3\tkept?\t\\N\n';
        throw refused;
      }
      await assert.rejects(copyIntoTable(session, 'copied', ['n', 't', 'j'], failing()), refused);
      // The COPY was cancelled whole, and the session goes on.
      const { rows: after } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM copied`.execute(session);
      assert.deepEqual(after, [{ n: 2 }]);
    });
  } finally {
    await close();
  }
});
