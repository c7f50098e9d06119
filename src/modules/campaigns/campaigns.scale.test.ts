/**
 * Two dialers at once on PostgreSQL (two job-worker sets, as two worker processes would run) over a 2,000-contact
 * campaign of busy numbers (the fastest outcome of the simulated network; CAMPAIGN_SCALE_CONTACTS to change the
 * size): every contact is dialled exactly once, including contacts left claimed by a dialer that died before
 * dialling. Skipped on the embedded database, which one process owns.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { startJobWorkers, type JobWorkers } from '../../background.js';
import { startCallsApp, type CallsKit } from '../../../test/calls-kit.js';
import {
  assertEachContactCalledOnce,
  dialingAccount,
  startCampaign,
  waitForStats,
} from '../../../test/campaigns-kit.js';

const onPostgres = Boolean(process.env.DATABASE_URL);
const CONTACTS = Number(process.env.CAMPAIGN_SCALE_CONTACTS ?? 2000);
let kit: CallsKit;
let second: JobWorkers;

before(async () => {
  if (!onPostgres) return;
  kit = await startCallsApp({
    env: {
      CAMPAIGN_TICK_SECONDS: '0.2',
      // Every number is busy: no live answers, so the pace governor has nothing to govern and would hold its start pace.
      CAMPAIGN_PACE_GOVERNOR: 'false',
      TTS_PROVIDER: 'none',
      CALLS_MAX_CONCURRENT_PER_ACCOUNT: '60',
      CALLS_PER_WORKER: '30',
      CAMPAIGN_DIAL_BATCH: '30',
    },
  });
  second = await startJobWorkers({
    db: kit.t.infra.database.db,
    services: kit.t.services,
    log: pino({ level: 'silent' }),
    pollingIntervalSeconds: 0.5,
  });
});
after(async () => {
  if (!onPostgres) return;
  await second.stop(10_000);
  await kit.close();
});

test('two dialers: each contact of a large campaign dialled exactly once, none lost after a dialer died mid-claim', {
  skip: !onPostgres && 'PostgreSQL only',
}, async () => {
  kit.clock.advance(new Date('2026-03-02T16:00:00Z').getTime() - kit.clock.now().getTime()); // 11:00 New York
  const phones: string[] = [];
  for (let i = 0; i < CONTACTS; i++)
    phones.push(
      `+1${['212', '646', '347', '718'][Math.floor(i / 1000)]}555${String((i % 1000) * 10 + 6).padStart(4, '0')}`,
    );
  const account = await dialingAccount(kit.t, phones);
  assert.equal(account.contacts.size, CONTACTS);
  const { campaign } = await startCampaign(kit.t, account, {
    name: 'Big',
    maxConcurrency: 50,
    callsPerMinute: 10_000,
  });

  // A dialer that died between its claim and its dials leaves 25 contacts claimed, long ago.
  const db = kit.t.infra.database.db;
  await db
    .updateTable('campaign_contacts')
    .set({ state: 'claimed', claimed_at: new Date(kit.clock.now().getTime() - 10 * 60_000) })
    .where('campaign_id', '=', campaign.id)
    .where('contact_id', 'in', [...account.contacts.values()].slice(0, 25))
    .where('state', '=', 'pending')
    .execute();

  const stats = await waitForStats(
    kit.t,
    account.user,
    campaign.id,
    (s) => s.status === 'completed',
    'the large campaign',
    570_000, // inside the runner's limit for this file (scripts/run-tests.mjs)
  );
  assert.equal(stats.counts.dialed, CONTACTS);
  assert.equal(stats.counts.busy, CONTACTS);

  await assertEachContactCalledOnce(db, campaign.id, CONTACTS);
  const attempts = await db
    .selectFrom('campaign_attempts')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('campaign_id', '=', campaign.id)
    .executeTakeFirstOrThrow();
  assert.equal(Number(attempts.n), CONTACTS);
});
