/**
 * The abandon-rate rule, through the API: every agent pipeline starts 3 s late (SIM_AGENT_LATE_START_RATE=1), so
 * every call a person answers is abandoned; from the third live-answered call the rate (100%) is above 3.5% and the
 * campaign is paused for compliance, with its figures and a campaign.compliance_paused event. The governor: calls that
 * end well raise the pace to maxConcurrency, each abandoned one halves it.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { api, startCallsApp, type CallsKit } from '../../../test/calls-kit.js';
import { dialingAccount, waitForStats } from '../../../test/campaigns-kit.js';

let kit: CallsKit;

before(async () => {
  kit = await startCallsApp({
    env: {
      CAMPAIGN_TICK_SECONDS: '1',
      TTS_PROVIDER: 'none',
      SIM_AGENT_LATE_START_RATE: '1',
      SIM_AGENT_LATE_START_MS: '3000',
      CAMPAIGN_ABANDON_MIN_LIVE_ANSWERED: '3',
      // One call at a time: the virtual clock adds up the waits of overlapping calls, which would make them look late.
      CALLS_MAX_CONCURRENT_PER_ACCOUNT: '1',
    },
  });
});
after(() => kit.close());

test('a campaign whose calls are abandoned is paused for compliance, with its figures and an event', async () => {
  // People who answer (last digit 0) and say they are not interested (second-to-last 3): short calls.
  const phones = Array.from({ length: 8 }, (_, i) => `+1212555${i}030`);
  const account = await dialingAccount(kit.t, phones);
  const { ok } = api(kit.t, account.user);
  const campaign = await ok('POST', '/campaigns', {
    name: 'Too fast',
    agentId: account.agentId,
    contactListIds: [account.listId],
    maxConcurrency: 1,
  });
  await ok('POST', `/campaigns/${campaign.id}/start`);

  const stats = await waitForStats(
    kit.t,
    account.user,
    campaign.id,
    (s) => s.status === 'paused' && s.contacts.inCall === 0,
  );
  assert.equal(stats.counts.liveAnswered, 3);
  assert.equal(stats.counts.abandoned, 3);
  assert.deepEqual(stats.abandonRate.last30Days, { abandoned: 3, liveAnswered: 3, rate: 1 });
  assert.deepEqual(stats.abandonRate.today, { abandoned: 3, liveAnswered: 3, rate: 1 });

  const read = await ok('GET', `/campaigns/${campaign.id}`);
  assert.equal(read.pause.reason, 'compliance');
  assert.deepEqual(read.pause.details, {
    abandonRate: 1,
    threshold: 0.035,
    window: '30d',
    abandoned: 3,
    liveAnswered: 3,
  });

  const events = await ok('GET', '/events?type=campaign.compliance_paused');
  assert.equal(events.total, 1);
  assert.deepEqual(events.events[0].data, {
    campaignId: campaign.id,
    abandonRate: 1,
    threshold: 0.035,
    window: '30d',
    abandoned: 3,
    liveAnswered: 3,
  });

  // Paused: nothing more is dialled.
  assert.equal((await ok('GET', `/calls?campaignId=${campaign.id}`)).total, 3);
});

test('the governor: calls ending well raise the pace to maxConcurrency, each abandoned call halves it', async () => {
  const at = (iso: string) => kit.clock.advance(Math.max(0, new Date(iso).getTime() - kit.clock.now().getTime()));
  at('2026-03-02T15:30:00Z'); // 10:30 in New York, 07:30 in Los Angeles
  // Busy numbers in New York (called now, nobody answers so nothing is abandoned), then people in Los Angeles who
  // answer once its window opens, every one of them abandoned.
  const busyInNewYork = Array.from({ length: 10 }, (_, i) => `+1212555${i}016`);
  const answeringInLosAngeles = Array.from({ length: 5 }, (_, i) => `+1415555${i}030`);
  const account = await dialingAccount(kit.t, [...busyInNewYork, ...answeringInLosAngeles]);
  const { ok } = api(kit.t, account.user);
  const campaign = await ok('POST', '/campaigns', {
    name: 'Governed',
    agentId: account.agentId,
    contactListIds: [account.listId],
    maxConcurrency: 10,
  });
  assert.equal((await ok('POST', `/campaigns/${campaign.id}/start`)).status, 'running');

  // Starts at 2 calls under way of 10; each of the 10 busy calls raises that by one, up to 10.
  let stats = await waitForStats(
    kit.t,
    account.user,
    campaign.id,
    (s) => s.counts.busy === 10 && s.contacts.inCall === 0,
  );
  assert.equal(stats.abandonRate.paceFactor, 1);
  assert.equal(stats.abandonRate.last30Days.rate, 0);

  at('2026-03-02T17:05:00Z'); // 09:05 in Los Angeles
  // 10 -> 5 -> 2.5 -> 1.25 calls under way over three abandoned calls; the third pauses the campaign (above 3.5%).
  stats = await waitForStats(kit.t, account.user, campaign.id, (s) => s.status === 'paused' && s.contacts.inCall === 0);
  assert.equal(stats.counts.abandoned, 3);
  assert.equal(stats.abandonRate.paceFactor, 0.125);
  assert.equal((await ok('GET', `/campaigns/${campaign.id}`)).pause.reason, 'compliance');
});
