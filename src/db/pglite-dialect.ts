import type { PGlite } from '@electric-sql/pglite';
import {
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  type QueryResult,
} from 'kysely';

/**
 * A Kysely dialect for embedded PGlite.
 *
 * PGlite is a single Postgres backend, so it behaves like a pool of exactly one
 * connection: a transaction must own it from BEGIN to COMMIT, or a query from
 * elsewhere (a job poller, another request) would run inside that transaction.
 * The driver therefore hands the one connection out under a FIFO lock.
 */
export class PGliteDialect implements Dialect {
  constructor(private readonly pglite: PGlite) {}
  createAdapter() {
    return new PostgresAdapter();
  }
  createDriver(): Driver {
    return new PGliteDriver(this.pglite);
  }
  createQueryCompiler() {
    return new PostgresQueryCompiler();
  }
  createIntrospector(db: Kysely<any>) {
    return new PostgresIntrospector(db);
  }
}

class ConnectionLock {
  private tail: Promise<void> = Promise.resolve();
  acquire(): Promise<() => void> {
    let release!: () => void;
    const next = new Promise<void>((resolve) => (release = resolve));
    const ready = this.tail.then(() => release);
    this.tail = this.tail.then(() => next);
    return ready;
  }
}

class PGliteDriver implements Driver {
  private readonly lock = new ConnectionLock();
  private readonly releases = new WeakMap<DatabaseConnection, () => void>();
  private readonly connection: PGliteConnection;

  constructor(private readonly pglite: PGlite) {
    this.connection = new PGliteConnection(pglite);
  }

  async init() {
    await this.pglite.waitReady;
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    const release = await this.lock.acquire();
    // One connection object is reused; a fresh wrapper per lease keeps the release bound to its holder.
    const lease = Object.create(this.connection) as PGliteConnection;
    this.releases.set(lease, release);
    return lease;
  }

  async beginTransaction(conn: DatabaseConnection) {
    await (conn as PGliteConnection).run('BEGIN');
  }
  async commitTransaction(conn: DatabaseConnection) {
    await (conn as PGliteConnection).run('COMMIT');
  }
  async rollbackTransaction(conn: DatabaseConnection) {
    await (conn as PGliteConnection).run('ROLLBACK');
  }

  async releaseConnection(conn: DatabaseConnection) {
    const release = this.releases.get(conn);
    this.releases.delete(conn);
    release?.();
  }

  async destroy() {
    if (!this.pglite.closed) await this.pglite.close();
  }
}

class PGliteConnection implements DatabaseConnection {
  constructor(private readonly pglite: PGlite) {}

  async run(sqlText: string) {
    await this.pglite.exec(sqlText);
  }

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    // Parameterless SQL may hold several statements (migrations, pg-boss plans): that needs the simple protocol.
    if (query.parameters.length === 0) {
      const results = await this.pglite.exec(query.sql);
      const last = results[results.length - 1];
      return { rows: (last?.rows ?? []) as R[], numAffectedRows: affected(last) };
    }
    const result = await this.pglite.query<R>(query.sql, query.parameters as unknown[]);
    return { rows: result.rows, numAffectedRows: affected(result) };
  }

  async *streamQuery<R>(query: CompiledQuery): AsyncIterableIterator<QueryResult<R>> {
    yield await this.executeQuery<R>(query);
  }
}

function affected(result: { affectedRows?: number } | undefined): bigint | undefined {
  return result?.affectedRows === undefined ? undefined : BigInt(result.affectedRows);
}
