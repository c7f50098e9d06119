/**
 * Campaigns: the pre-dial gate, the dialer's claim, and the concurrency the dialer achieves.
 *
 *   npx tsx bench/campaigns.ts                       (PGlite)
 *   DATABASE_URL=postgres://… npx tsx bench/campaigns.ts
 *
 * 1. Gate: GATE_CONTACTS contacts (NY, LA, Honolulu, two-zone and toll-free numbers, some on the do-not-call list,
 *    some with attempts today). The dialer's way: gather the facts of a batch of 20 (contacts, do-not-call, live
 *    calls, attempt history: the dialer's own queries) and decide each with gate(); and the same with the do-not-call
 *    list read one number at a time (the way before the batch read). Baseline: one SQL statement that applies the
 *    same filters the database can (do-not-call anti-join, deleted contacts, 24-hour attempts) over the same
 *    contacts, without time zones. Reported: contacts decided per second, and the ratios.
 * 2. Claim: QUEUED contacts queued in one campaign; claimDue(20) then putting them back, CLAIMS times: p50/p99.
 * 3. Concurrency: a campaign of CALLS people who answer (short conversations, no speech synthesis) at
 *    maxConcurrency TARGET; the calls in flight sampled every 20 ms: mean and peak against the target.
 *
 * Env: GATE_CONTACTS (5000), QUEUED (100000; 1000000 on PostgreSQL if you have the time), CLAIMS (300), CALLS (200),
 * TARGET (20), SKIP_CONCURRENCY=1 (parts 1 and 2 only), ONLY_CONCURRENCY=1 (part 3 only).
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import os from 'node:os';
import { sql } from 'kysely';
import { pino } from 'pino';
import { api, startCallsApp } from '../test/calls-kit.js';
import { buildTestApp } from '../test/helpers.js';
import { startJobWorkers } from '../src/background.js';
import { dialingAccount, waitForStats } from '../test/campaigns-kit.js';
import { campaignQueries } from '../src/modules/campaigns/campaigns.repo.js';
import { gate, type GateFacts } from '../src/modules/campaigns/campaigns.gate.js';
import { DEFAULT_SCHEDULE } from '../src/modules/campaigns/campaigns.window.js';

const GATE_CONTACTS = Number(process.env.GATE_CONTACTS ?? 5000);
const QUEUED = Number(process.env.QUEUED ?? 100_000);
const CLAIMS = Number(process.env.CLAIMS ?? 300);
const CALLS = Number(process.env.CALLS ?? 200);
const TARGET = Number(process.env.TARGET ?? 20);

const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

async function main() {
  console.log(`storage: ${process.env.DATABASE_URL ? 'PostgreSQL' : 'PGlite'}; load average at start: ${load()}`);
  const kit = await startCallsApp({
    env: {
      CAMPAIGN_TICK_SECONDS: '1',
      TTS_PROVIDER: 'none',
      CALLS_MAX_CONCURRENT_PER_ACCOUNT: String(TARGET * 2),
      CALLS_PER_WORKER: String(TARGET * 2),
      LOG_LEVEL: 'silent',
    },
  });
  const db = kit.t.infra.database.db;
  const services = kit.t.services;
  try {
    kit.clock.advance(new Date('2026-03-02T18:00:00Z').getTime() - kit.clock.now().getTime());

    // 1. Gate.
    const areas = ['212', '415', '808', '605', '800'];
    const phones = Array.from(
      { length: GATE_CONTACTS },
      (_, i) => `+1${areas[i % areas.length]}555${String(i % 10_000).padStart(4, '0')}`,
    );
    const account = await dialingAccount(kit.t, [...new Set(phones)]);
    const accountId = account.user.accountId;
    const ids = [...account.contacts.values()];
    await api(kit.t, account.user).ok(
      'POST',
      '/dnc/bulk',
      [...account.contacts.keys()].filter((_, i) => i % 17 === 0).map((phone) => ({ phone })),
    );
    const now = kit.clock.now();
    const rules = { schedule: DEFAULT_SCHEDULE, maxAttemptsPerContact: 3, config: services.config.campaigns };
    const q = campaignQueries(db);
    /**
     * The dialer's gate over all the contacts in batches of 20: its queries for a batch's facts, then gate() for each.
     * perContactDnc: the do-not-call list read one number at a time (the dialer's way before the batch read).
     */
    async function gateAll(perContactDnc: boolean) {
      let allowed = 0;
      for (let i = 0; i < ids.length; i += 20) {
        const batch = ids.slice(i, i + 20);
        const rows = await services.contacts.forDialer(accountId, batch);
        const [listed, inCall, history] = await Promise.all([
          perContactDnc
            ? Promise.resolve(new Set<string>())
            : services.dnc.listedAmong(
                accountId,
                rows.map((r) => r.phone),
              ),
          services.calls.contactsInCall(accountId, batch),
          q.contactHistory(
            accountId,
            batch,
            new Date(now.getTime() - 86_400_000),
            new Date(now.getTime() - 72 * 3_600_000),
          ),
        ]);
        const byId = new Map(rows.map((r) => [r.id, r]));
        const past = new Map(history.map((h) => [h.contact_id, h]));
        for (const id of batch) {
          const contact = byId.get(id) ?? null;
          const dncListed = perContactDnc
            ? contact !== null && (await services.dnc.isListed(accountId, contact.phone))
            : contact !== null && listed.has(contact.phone);
          const facts: GateFacts = {
            contact,
            dncListed,
            inCall: inCall.has(id),
            dialsLast24h: Number(past.get(id)?.recent ?? 0),
            recentlyAbandoned: Number(past.get(id)?.abandoned ?? 0) > 0,
            attemptNumber: 1,
          };
          if (gate(facts, rules, now).allow) allowed++;
        }
      }
      return allowed;
    }
    let started = performance.now();
    const allowedOneByOne = await gateAll(true);
    const oneByOneMs = performance.now() - started;
    started = performance.now();
    const allowed = await gateAll(false);
    if (allowed !== allowedOneByOne) throw new Error(`the two ways disagree: ${allowed} vs ${allowedOneByOne}`);
    const gateMs = performance.now() - started;
    started = performance.now();
    const { rows: sqlRows } = await sql<{ n: string }>`
      SELECT count(*) AS n FROM contacts c
      WHERE c.account_id = ${accountId} AND c.id = ANY(${ids}::uuid[]) AND NOT c.dnc
        AND NOT EXISTS (SELECT 1 FROM dnc_entries d WHERE d.account_id = c.account_id AND d.phone_e164 = c.phone_e164)
        AND (SELECT count(*) FROM campaign_attempts a WHERE a.account_id = c.account_id AND a.contact_id = c.id
             AND a.status <> 'denied' AND a.decided_at >= ${new Date(now.getTime() - 86_400_000)}) < 3`.execute(db);
    const sqlMs = performance.now() - started;
    const perSecond = (ms: number) => (ids.length / (ms / 1000)).toFixed(0);
    console.log(
      `gate: ${ids.length} contacts, ${allowed} allowed; dialer's gate ${perSecond(gateMs)} contacts/s (${gateMs.toFixed(0)} ms, ratio to SQL ${(gateMs / sqlMs).toFixed(1)}x); ` +
        `with one do-not-call lookup per contact ${perSecond(oneByOneMs)} contacts/s (${oneByOneMs.toFixed(0)} ms, ratio to SQL ${(oneByOneMs / sqlMs).toFixed(1)}x); ` +
        `one SQL statement ${perSecond(sqlMs)} contacts/s (${sqlMs.toFixed(0)} ms, ${sqlRows[0]!.n} pass its filters)`,
    );

    // 2. Claim latency at QUEUED contacts.
    const claimAccount = await dialingAccount(kit.t, ['+12125550106']);
    const asClaim = api(kit.t, claimAccount.user);
    const campaign = await asClaim.ok('POST', '/campaigns', {
      name: 'Claims',
      agentId: claimAccount.agentId,
      contactListIds: [claimAccount.listId],
    });
    started = performance.now();
    await sql`INSERT INTO campaign_contacts (campaign_id, account_id, contact_id, next_attempt_at)
      SELECT ${campaign.id}::uuid, ${claimAccount.user.accountId}::uuid, gen_random_uuid(), ${now}::timestamptz - (g * interval '1 millisecond')
      FROM generate_series(1, ${QUEUED}) AS g`.execute(db);
    await sql`ANALYZE campaign_contacts`.execute(db);
    console.log(`queued ${QUEUED} contacts in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    const latencies: number[] = [];
    for (let i = 0; i < CLAIMS; i++) {
      const t0 = performance.now();
      const claimed = await q.claimDue(claimAccount.user.accountId, campaign.id, now, 20);
      latencies.push(performance.now() - t0);
      // Dialled: they leave the queue (as the dialer's transaction moves them to in_call).
      await db
        .updateTable('campaign_contacts')
        .set({ state: 'in_call' })
        .where('campaign_id', '=', campaign.id)
        .where(
          'contact_id',
          'in',
          claimed.map((c) => c.contact_id),
        )
        .execute();
    }
    latencies.sort((a, b) => a - b);
    console.log(
      `claim of 20 at ${QUEUED} queued: p50 ${pct(latencies, 50).toFixed(2)} ms, p99 ${pct(latencies, 99).toFixed(2)} ms (${CLAIMS} claims)`,
    );
  } finally {
    await kit.close();
    console.log(`load average at end: ${load()}`);
  }
}

/**
 * 3. On the real clock: the virtual clock of the first parts adds up the sleeps of calls running side by side, so it
 * cannot time several live calls at once (their agents would look late, and the calls abandoned).
 */
async function concurrency() {
  const t = await buildTestApp({
    env: {
      CAMPAIGN_TICK_SECONDS: '1',
      TTS_PROVIDER: 'none',
      CALLS_MAX_CONCURRENT_PER_ACCOUNT: String(TARGET * 2),
      CALLS_PER_WORKER: String(TARGET * 2),
      RATE_LIMIT_PER_MINUTE: '100000',
    },
  });
  const workers = await startJobWorkers({
    db: t.infra.database.db,
    services: t.services,
    log: pino({ level: 'silent' }),
    pollingIntervalSeconds: 0.5,
  });
  const q = campaignQueries(t.infra.database.db);
  let started: number;
  try {
    const kit = { t };
    const everyDay = { days: ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'], start: '08:00', end: '21:00' };
    // 3. Achieved concurrency.
    // People who answer (last digit 0), with the personas of the second-to-last digit.
    const people = Array.from({ length: CALLS }, (_, i) => `+1212555${String(i % 1000).padStart(3, '0')}0`);
    const callAccount = await dialingAccount(kit.t, people);
    const asCalls = api(kit.t, callAccount.user);
    const run = await asCalls.ok('POST', '/campaigns', {
      name: 'Concurrency',
      agentId: callAccount.agentId,
      contactListIds: [callAccount.listId],
      maxConcurrency: TARGET,
      callsPerMinute: 10_000,
      schedule: everyDay,
    });
    await asCalls.ok('POST', `/campaigns/${run.id}/start`);
    const samples: number[] = [];
    started = performance.now();
    let done = false;
    const sampler = (async () => {
      while (!done) {
        const row = await q.inFlight(callAccount.user.accountId, run.id);
        samples.push(row);
        await sleep(20);
      }
    })();
    try {
      await waitForStats(
        kit.t,
        callAccount.user,
        run.id,
        (s) => s.status === 'completed' || s.contacts.finished >= CALLS,
        'the concurrency campaign',
        3_600_000,
      );
    } finally {
      // The sampler stops before the database closes, whatever happened.
      done = true;
      await sampler;
    }
    const seconds = (performance.now() - started) / 1000;
    const busy = samples.slice(Math.floor(samples.length * 0.1), Math.floor(samples.length * 0.8));
    const mean = busy.reduce((a, b) => a + b, 0) / Math.max(1, busy.length);
    console.log(
      `concurrency: ${CALLS} answered calls at target ${TARGET}: mean in flight ${mean.toFixed(1)} (${(mean / TARGET).toFixed(2)} of target, 10th–80th percentile of the run), peak ${Math.max(...samples)}, ${seconds.toFixed(1)} s`,
    );
  } finally {
    await workers.stop(10_000);
    await t.close();
  }
}

if (process.env.ONLY_CONCURRENCY !== '1') await main();
if (process.env.SKIP_CONCURRENCY !== '1') await concurrency();
console.log(`load average at end: ${load()}`);
