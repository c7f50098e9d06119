/**
 * The calls benchmarks' data: a database of their own on a PostgreSQL server, and one account's agents, contacts
 * and a year of calls made by generate_series with a fixed seed (so runs are comparable). Used by
 * bench/calls-list.ts and bench/dashboard-calls.ts.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export const AGENTS = 20;
export const CONTACTS = 100_000;

/** A database of its own on the server, named apart from the test databases; `drop` removes it. */
export async function createBenchDatabase(serverUrl: string, label = 'calls') {
  const name = `parley_bench_${label}_${randomBytes(4).toString('hex')}`;
  const admin = async (statement: string) => {
    const client = new pg.Client({ connectionString: serverUrl });
    await client.connect();
    try {
      await client.query(statement);
    } finally {
      await client.end();
    }
  };
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

/**
 * AGENTS agents, CONTACTS contacts and `calls` calls over the last year in one account, then VACUUM ANALYZE.
 * Status mix: 45% completed, 27% no_answer, 12% busy, 8% failed, 4% queued, 2% dialing, 1% ringing, 1% connected;
 * ~56% of completed calls (~25% of all) have a recording; a third belong to one of five campaigns.
 */
export async function seedCalls(db: pg.Client, accountId: string, calls: number) {
  await db.query(`SELECT setseed(0.42)`);
  await db.query(
    `INSERT INTO agents (id, account_id, name) SELECT gen_random_uuid(), $1, 'Agent ' || i FROM generate_series(1, ${AGENTS}) i`,
    [accountId],
  );
  await db.query(
    `INSERT INTO contacts (id, account_id, first_name, last_name, phone_e164)
     SELECT gen_random_uuid(), $1, 'First' || i, 'Last' || i, '+1415' || lpad(i::text, 7, '0') FROM generate_series(1, ${CONTACTS}) i`,
    [accountId],
  );
  await db.query(
    `WITH agent_ids AS (SELECT array_agg(id ORDER BY id) AS ids FROM agents WHERE account_id = $1),
          contact_ids AS (SELECT array_agg(id ORDER BY id) AS ids FROM contacts WHERE account_id = $1),
          campaign_ids AS (SELECT array_agg(gen_random_uuid()) AS ids FROM generate_series(1, 5)),
          draws AS (
            SELECT i, floor(random() * 100)::int AS bucket, random() AS r,
                   now() - make_interval(secs => i * (31536000.0 / ${calls})) AS created_at
            FROM generate_series(1, ${calls}::bigint) i
          ),
          shaped AS (
            SELECT d.*,
              CASE WHEN bucket < 45 THEN 'completed' WHEN bucket < 72 THEN 'no_answer' WHEN bucket < 84 THEN 'busy'
                   WHEN bucket < 92 THEN 'failed' WHEN bucket < 96 THEN 'queued' WHEN bucket < 98 THEN 'dialing'
                   WHEN bucket < 99 THEN 'ringing' ELSE 'connected' END AS status,
              CASE WHEN i % 10 = 0 THEN 'inbound' ELSE 'outbound' END AS direction
            FROM draws d
          )
     INSERT INTO calls (id, account_id, agent_id, agent_version, contact_id, campaign_id, direction, status, disposition,
                        from_number, to_number, started_at, answered_at, ended_at, duration_seconds, total_cost_usd,
                        recording_storage_key, end_reason, created_at, updated_at)
     SELECT gen_random_uuid(), $1, agent_ids.ids[1 + i % ${AGENTS}], 1, contact_ids.ids[1 + (i * 7919) % ${CONTACTS}],
            CASE WHEN i % 3 = 0 THEN campaign_ids.ids[1 + i % 5] END, direction, status,
            CASE WHEN status = 'completed' THEN (ARRAY['interested', 'not_interested', 'callback', 'booked'])[1 + i % 4] END,
            CASE WHEN direction = 'inbound' THEN '+1415' || lpad((1 + (i * 7919) % ${CONTACTS})::text, 7, '0') ELSE '+14155550000' END,
            CASE WHEN direction = 'outbound' THEN '+1415' || lpad((1 + (i * 7919) % ${CONTACTS})::text, 7, '0') ELSE '+14155550000' END,
            CASE WHEN status <> 'queued' THEN created_at + interval '1 second' END,
            CASE WHEN status IN ('completed', 'connected') THEN created_at + interval '6 seconds' END,
            CASE WHEN status IN ('completed', 'no_answer', 'busy', 'failed') THEN created_at + interval '1 minute' END,
            CASE WHEN status = 'completed' THEN 30 + (i % 300) WHEN status IN ('no_answer', 'busy', 'failed') THEN 0 END,
            CASE WHEN status = 'completed' THEN round((0.01 + (i % 300) * 0.0004)::numeric, 6) ELSE 0 END,
            CASE WHEN status = 'completed' AND r < 0.56 THEN 'recordings/' || $1 || '/' || i || '.wav' END,
            CASE WHEN status = 'completed' THEN 'caller_hangup' WHEN status IN ('no_answer', 'busy', 'failed') THEN status END,
            created_at, created_at
     FROM shaped, agent_ids, contact_ids, campaign_ids`,
    [accountId],
  );
  await db.query(`VACUUM ANALYZE calls`);
  await db.query(`VACUUM ANALYZE contacts`);
  await db.query(`VACUUM ANALYZE agents`);
}
