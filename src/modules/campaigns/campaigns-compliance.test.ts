/**
 * The abandon-rate rule, through the API: every agent pipeline starts 3 s late (SIM_AGENT_LATE_START_RATE=1), so
 * every call a person answers is abandoned; from the third live-answered call the rate (100%) is above 3.5% and the
 * campaign is paused for compliance, with its figures and a campaign.compliance_paused event.
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
    },
  });
});
after(() => kit.close());

test('a campaign whose calls are abandoned is paused for compliance, with its figures and an event', async () => {
  // People who answer (last digit 0) and say they are not interested (second-to-last 3): short calls.
  const phones = Array.from({ length: 8 }, (_, i) => `+1212555${i}030`);
  const account = await dialingAccount(kit.t, phones);
  const { ok } = api(kit.t, account.user);
  const campaign = await ok('POST', '/campaigns', { name: 'Too fast', agentId: account.agentId, contactListIds: [account.listId], maxConcurrency: 1 });
  await ok('POST', `/campaigns/${campaign.id}/start`);

  const stats = await waitForStats(kit.t, account.user, campaign.id, (s) => s.status === 'paused' && s.contacts.inCall === 0);
  assert.equal(stats.counts.liveAnswered, 3);
  assert.equal(stats.counts.abandoned, 3);
  assert.deepEqual(stats.abandonRate.last30Days, { abandoned: 3, liveAnswered: 3, rate: 1 });
  assert.deepEqual(stats.abandonRate.today, { abandoned: 3, liveAnswered: 3, rate: 1 });

  const read = await ok('GET', `/campaigns/${campaign.id}`);
  assert.equal(read.pause.reason, 'compliance');
  assert.deepEqual(read.pause.details, { abandonRate: 1, threshold: 0.035, window: '30d', abandoned: 3, liveAnswered: 3 });

  const events = await ok('GET', '/events?type=campaign.compliance_paused');
  assert.equal(events.total, 1);
  assert.deepEqual(events.events[0].data, { campaignId: campaign.id, abandonRate: 1, threshold: 0.035, window: '30d', abandoned: 3, liveAnswered: 3 });

  // Paused: nothing more is dialled.
  assert.equal((await ok('GET', `/calls?campaignId=${campaign.id}`)).total, 3);
});
