/**
 * Statements compiled once per shape. Kysely builds and compiles a query on every call; for a hot read (a list
 * page, its count) that is most of what the process spends on it besides the database. Here the query is built
 * and compiled the first time a shape is seen (which filters are set, which variant), and later calls of that
 * shape only bind their values to the cached SQL.
 *
 *   const page = compiledStatement({
 *     shape: (args: { accountId: string; status?: string }) => (args.status === undefined ? 'all' : 'status'),
 *     build: (db, args, param) => {
 *       let query = db.selectFrom('calls').selectAll().where('account_id', '=', param((a) => a.accountId));
 *       if (args.status !== undefined) query = query.where('status', '=', param((a) => a.status!));
 *       return query;
 *     },
 *   });
 *   const rows = await page(db, { accountId, status });
 *
 * `build` may read `args` only for what `shape` names; every value it puts in the query goes through `param`, which
 * answers a stand-in and reads the value from each later call's arguments. A value passed without `param` would be
 * cached with the SQL, so compiling refuses it.
 */
import { type CompiledQuery, CompiledQuery as Compiled, type Kysely } from 'kysely';

/** Reads one value of a call's arguments; answers a stand-in typed as the value. */
export type Param<A> = <T>(read: (args: A) => T) => T;

/** What `build` answers: a Kysely query (a select, update, ...). */
interface Query<R> {
  compile(): CompiledQuery<R>;
  execute(): Promise<R[]>;
}

interface Prepared<A> {
  sql: string;
  readers: Array<(args: A) => unknown>;
}

/** A value that stands in for a parameter while the statement is compiled: found again by identity. */
class StandIn {
  constructor(readonly read: (args: never) => unknown) {}
}

/** Compiles `build` for one shape: the SQL, and for each parameter the reader of its value. */
function prepare<A, R>(db: Kysely<any>, args: A, build: (db: any, args: A, param: Param<A>) => Query<R>): Prepared<A> {
  const standIn: Param<A> = (read) => new StandIn(read as (args: never) => unknown) as never;
  const compiled = build(db, args, standIn).compile();
  const readers = compiled.parameters.map((value, index) => {
    if (!(value instanceof StandIn))
      throw new Error(
        `parameter $${index + 1} of a compiled statement was not passed through param(): ${compiled.sql}`,
      );
    return value.read as (args: A) => unknown;
  });
  return { sql: compiled.sql, readers };
}

/**
 * A statement run as `statement(db, args)`: the rows of the query `build` makes for `args`. Compiled once per shape
 * and dialect; through a Kysely with plugins (which rewrite or observe each query) it is built and run as usual.
 */
export function compiledStatement<DB, A, R>(definition: {
  /** What the SQL depends on besides values; without it the statement has one shape. */
  shape?: (args: A) => string;
  build: (db: Kysely<DB>, args: A, param: Param<A>) => Query<R>;
}) {
  const { shape, build } = definition;
  // Per dialect adapter: one for a database and every transaction on it.
  const byAdapter = new WeakMap<object, Map<string, Prepared<A>>>();
  return async function run(db: Kysely<DB>, args: A): Promise<R[]> {
    const executor = db.getExecutor();
    if (executor.plugins.length > 0) return build(db, args, (read) => read(args)).execute();
    let prepared = byAdapter.get(executor.adapter);
    if (!prepared) byAdapter.set(executor.adapter, (prepared = new Map()));
    const key = shape ? shape(args) : '';
    let statement = prepared.get(key);
    if (!statement) prepared.set(key, (statement = prepare(db, args, build)));
    const parameters = statement.readers.map((read) => read(args));
    const result = await db.executeQuery<R>(Compiled.raw(statement.sql, parameters));
    return result.rows;
  };
}
