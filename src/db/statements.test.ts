import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  type CompiledQuery,
  type DatabaseConnection,
  Kysely,
  type KyselyPlugin,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
} from 'kysely';
import { compiledStatement } from './statements.js';

interface Tables {
  items: { id: string; account_id: string; status: string; archived_at: Date | null };
}

/** A Kysely without a database: it records each statement it is sent and answers one row. */
function recordingDb() {
  const sent: CompiledQuery[] = [];
  const connection: DatabaseConnection = {
    async executeQuery(query) {
      sent.push(query);
      return { rows: [{ id: 'x' }] as never[] };
    },
    async *streamQuery() {},
  };
  const db = new Kysely<Tables>({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => ({
        init: async () => {},
        acquireConnection: async () => connection,
        beginTransaction: async () => {},
        commitTransaction: async () => {},
        rollbackTransaction: async () => {},
        releaseConnection: async () => {},
        destroy: async () => {},
      }),
      createIntrospector: (kysely) => new PostgresIntrospector(kysely),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
  });
  return { db, sent };
}

interface Args {
  accountId: string;
  status?: string;
  archived?: boolean;
  limit: number;
}

function itemsStatement() {
  let builds = 0;
  const statement = compiledStatement({
    shape: (args: Args) =>
      `${args.status === undefined ? '-' : 's'}${args.archived === undefined ? '-' : args.archived}`,
    build: (db: Kysely<Tables>, args: Args, param) => {
      builds++;
      let query = db
        .selectFrom('items')
        .select('id')
        .where(
          'account_id',
          '=',
          param((a) => a.accountId),
        );
      if (args.status !== undefined)
        query = query.where(
          'status',
          '=',
          param((a) => a.status!),
        );
      if (args.archived !== undefined) query = query.where('archived_at', args.archived ? 'is not' : 'is', null);
      return query.limit(param((a) => a.limit));
    },
  });
  return { statement, builds: () => builds };
}

test('a statement is compiled once per shape, and each call binds its own values', async () => {
  const { db, sent } = recordingDb();
  const { statement, builds } = itemsStatement();

  assert.deepEqual(await statement(db, { accountId: 'a1', status: 'open', limit: 10 }), [{ id: 'x' }]);
  await statement(db, { accountId: 'a2', status: 'closed', limit: 25 });
  assert.equal(builds(), 1);
  assert.equal(sent[0]!.sql, 'select "id" from "items" where "account_id" = $1 and "status" = $2 limit $3');
  assert.equal(sent[1]!.sql, sent[0]!.sql);
  assert.deepEqual(sent[0]!.parameters, ['a1', 'open', 10]);
  assert.deepEqual(sent[1]!.parameters, ['a2', 'closed', 25]);

  // Another shape is another statement; the same shapes again compile nothing.
  await statement(db, { accountId: 'a1', limit: 5 });
  await statement(db, { accountId: 'a1', archived: true, limit: 5 });
  await statement(db, { accountId: 'a1', archived: false, limit: 5 });
  await statement(db, { accountId: 'a3', archived: true, limit: 7 });
  assert.equal(builds(), 4);
  assert.equal(sent[2]!.sql, 'select "id" from "items" where "account_id" = $1 limit $2');
  assert.equal(sent[3]!.sql, 'select "id" from "items" where "account_id" = $1 and "archived_at" is not null limit $2');
  assert.equal(sent[4]!.sql, 'select "id" from "items" where "account_id" = $1 and "archived_at" is null limit $2');
  assert.deepEqual(sent[5]!.parameters, ['a3', 7]);
});

test('a transaction uses the statements compiled for its database', async () => {
  const { db, sent } = recordingDb();
  const { statement, builds } = itemsStatement();
  await statement(db, { accountId: 'a1', limit: 1 });
  await db.transaction().execute((trx) => statement(trx, { accountId: 'a2', limit: 2 }));
  assert.equal(builds(), 1);
  assert.deepEqual(sent.at(-1)!.parameters, ['a2', 2]);
});

test('a value put in the query without param() is refused, not cached', async () => {
  const { db } = recordingDb();
  const statement = compiledStatement({
    shape: () => 'one',
    build: (db: Kysely<Tables>, args: Args, param) =>
      db
        .selectFrom('items')
        .select('id')
        .where(
          'account_id',
          '=',
          param((a) => a.accountId),
        )
        .where('status', '=', args.status!),
  });
  await assert.rejects(statement(db, { accountId: 'a1', status: 'open', limit: 1 }), /\$2 .*not passed through param/);
});

test('through a Kysely with plugins, the query is built and run as usual, so the plugins see it', async () => {
  const { db, sent } = recordingDb();
  const seen: string[] = [];
  const observer: KyselyPlugin = {
    transformQuery: ({ node }) => {
      seen.push(node.kind);
      return node;
    },
    transformResult: async ({ result }) => result,
  };
  const { statement, builds } = itemsStatement();
  await statement(db.withPlugin(observer), { accountId: 'a1', limit: 1 });
  await statement(db.withPlugin(observer), { accountId: 'a2', limit: 2 });
  assert.equal(builds(), 2);
  assert.deepEqual(seen, ['SelectQueryNode', 'SelectQueryNode']);
  assert.deepEqual(
    sent.map((query) => query.parameters),
    [
      ['a1', 1],
      ['a2', 2],
    ],
  );
});
