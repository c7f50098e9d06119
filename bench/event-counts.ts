/**
 * Call-event counters under concurrent turns, on PostgreSQL: what one counter row per (account, type) costs
 * against rows per connection (the design the migrations use now).
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npx tsx bench/event-counts.ts
 *
 * A scratch database gets two copies of a minimal event table, each with a statement trigger that keeps per-type
 * counts: "one row" (the former design: every insert adds to the same (account, type) row and holds its lock until
 * commit) and "per connection" (the current one: the row is chosen by the writer's backend pid, 16 per key).
 * CLIENTS connections each run transactions shaped like a call's turn (insert one call.turn event of the same
 * account, then WORK_MS of other work inside the transaction, then commit) for WINDOW_S seconds; windows alternate
 * A B B A, ROUNDS times, so the machine's load falls on both alike. Printed per variant: transactions/s, latency
 * p50/p99, and the ratio, with the load average.
 */
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import pg from 'pg';

const CLIENTS = Number(process.env.CLIENTS ?? 32);
const WORK_MS = Number(process.env.WORK_MS ?? 2);
const WINDOW_S = Number(process.env.WINDOW_S ?? 5);
const ROUNDS = Number(process.env.ROUNDS ?? 2);
const ACCOUNT = '00000000-0000-4000-8000-000000000001';

const baseUrl = process.env.DATABASE_URL;
if (!baseUrl) throw new Error('set DATABASE_URL to a PostgreSQL server (a scratch database is made there)');
const scratch = `bench_event_counts_${process.pid}`;
const admin = new pg.Client({ connectionString: baseUrl });
await admin.connect();
await admin.query(`CREATE DATABASE ${scratch}`);
const url = new URL(baseUrl);
url.pathname = `/${scratch}`;
const pool = new pg.Pool({ connectionString: url.toString(), max: CLIENTS });

type Variant = 'one row' | 'per connection';
const tableOf: Record<Variant, string> = { 'one row': 'events_single', 'per connection': 'events_sharded' };

try {
  await pool.query(`
    CREATE TABLE events_single (id bigserial PRIMARY KEY, account_id uuid NOT NULL, type text NOT NULL);
    CREATE TABLE counts_single (account_id uuid, type text, events bigint NOT NULL, PRIMARY KEY (account_id, type));
    CREATE FUNCTION count_single() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
      INSERT INTO counts_single AS c SELECT account_id, type, count(*) FROM inserted GROUP BY 1, 2
        ON CONFLICT (account_id, type) DO UPDATE SET events = c.events + EXCLUDED.events;
      RETURN NULL; END $$;
    CREATE TRIGGER t AFTER INSERT ON events_single REFERENCING NEW TABLE AS inserted
      FOR EACH STATEMENT EXECUTE FUNCTION count_single();

    CREATE TABLE events_sharded (id bigserial PRIMARY KEY, account_id uuid NOT NULL, type text NOT NULL);
    CREATE TABLE counts_sharded (account_id uuid, type text, shard smallint, events bigint NOT NULL,
      PRIMARY KEY (account_id, type, shard));
    CREATE FUNCTION count_sharded() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
      INSERT INTO counts_sharded AS c
        SELECT account_id, type, (pg_backend_pid() % 16)::smallint, count(*) FROM inserted GROUP BY 1, 2
        ON CONFLICT (account_id, type, shard) DO UPDATE SET events = c.events + EXCLUDED.events;
      RETURN NULL; END $$;
    CREATE TRIGGER t AFTER INSERT ON events_sharded REFERENCING NEW TABLE AS inserted
      FOR EACH STATEMENT EXECUTE FUNCTION count_sharded();
  `);
  // Every connection open before timing starts.
  const warm = await Promise.all(Array.from({ length: CLIENTS }, () => pool.connect()));
  for (const client of warm) client.release();

  const results: Record<Variant, { transactions: number; seconds: number; latencies: number[] }> = {
    'one row': { transactions: 0, seconds: 0, latencies: [] },
    'per connection': { transactions: 0, seconds: 0, latencies: [] },
  };

  async function window(variant: Variant) {
    const table = tableOf[variant];
    const until = performance.now() + WINDOW_S * 1000;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        const client = await pool.connect();
        try {
          while (performance.now() < until) {
            const begun = performance.now();
            await client.query('BEGIN');
            await client.query(`INSERT INTO ${table} (account_id, type) VALUES ($1, 'call.turn')`, [ACCOUNT]);
            await client.query(`SELECT pg_sleep(${WORK_MS / 1000})`);
            await client.query('COMMIT');
            results[variant].latencies.push(performance.now() - begun);
            results[variant].transactions++;
          }
        } finally {
          client.release();
        }
      }),
    );
    results[variant].seconds += (performance.now() - started) / 1000;
  }

  const load = loadavg()[0]!.toFixed(1);
  for (let round = 0; round < ROUNDS; round++) {
    for (const variant of ['one row', 'per connection', 'per connection', 'one row'] as const) await window(variant);
  }

  // Both ways count every event exactly.
  for (const variant of ['one row', 'per connection'] as const) {
    const suffix = variant === 'one row' ? 'single' : 'sharded';
    const { rows } = await pool.query(
      `SELECT (SELECT coalesce(sum(events), 0) FROM counts_${suffix})::int8 AS counted,
              (SELECT count(*) FROM events_${suffix})::int8 AS stored`,
    );
    if (String(rows[0].counted) !== String(rows[0].stored)) throw new Error(`${variant}: counts disagree`);
  }

  const quantile = (values: number[], q: number) => {
    const sorted = [...values].sort((a, b) => a - b);
    return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
  };
  const rate = (variant: Variant) => results[variant].transactions / results[variant].seconds;
  console.log(
    `\nturn-shaped transactions, ${CLIENTS} connections, ${WORK_MS} ms of work each, ${ROUNDS}×ABBA windows of ` +
      `${WINDOW_S} s; load average ${load} at start, ${loadavg()[0]!.toFixed(1)} at end\n`,
  );
  console.log('| counter rows | transactions/s | p50 | p99 |');
  console.log('|---|---|---|---|');
  for (const variant of ['one row', 'per connection'] as const) {
    const { latencies } = results[variant];
    console.log(
      `| ${variant} | ${rate(variant).toFixed(0)} | ${quantile(latencies, 0.5).toFixed(1)} ms | ${quantile(latencies, 0.99).toFixed(1)} ms |`,
    );
  }
  console.log(`\nper connection ÷ one row: ${(rate('per connection') / rate('one row')).toFixed(2)}× the transactions`);
} finally {
  await pool.end();
  await admin.query(`DROP DATABASE IF EXISTS ${scratch}`);
  await admin.end();
}
