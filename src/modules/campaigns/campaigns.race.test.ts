/**
 * Dial passes run by hand under a virtual clock: no job workers run here, so the calls placed stay under way and the
 * clock moves only when the test moves it. Two dial passes of one campaign at the same moment (as two workers' jobs
 * would run them) never place more than maxConcurrency calls between them: each pass re-checks the calls under way
 * with the campaign's row locked. The projected completion follows the pace observed.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from '../../../test/helpers.js';
import { api } from '../../../test/calls-kit.js';
import { dialingAccount, startCampaign } from '../../../test/campaigns-kit.js';
import { createVirtualClock } from '../../lib/clock.js';

let t: TestApp;
// Monday 2 March 2026, 15:00 UTC: 10:00 in New York.
const clock = createVirtualClock({ start: new Date('2026-03-02T15:00:00.000Z') });

before(async () => {
  t = await buildTestApp({
    clock,
    env: { RATE_LIMIT_PER_MINUTE: '100000', CALLS_MAX_CONCURRENT_PER_ACCOUNT: '100', CAMPAIGN_DIAL_BATCH: '4' },
  });
});
after(() => t.close());

test('two dial passes at once stay within maxConcurrency', async () => {
  const phones = Array.from({ length: 12 }, (_, i) => `+1212555${String(i * 10 + 1000).padStart(4, '0')}`);
  // The governor starts a campaign at 2 calls under way (at most maxConcurrency).
  for (const [maxConcurrency, allowed] of [
    [1, 1],
    [2, 2],
    [5, 2],
  ] as const) {
    const account = await dialingAccount(t, phones);
    const { ok } = api(t, account.user);
    const { campaign } = await startCampaign(t, account, {
      name: 'Race',
      maxConcurrency,
      callsPerMinute: 1000,
    });
    const passes = await Promise.all(
      [0, 1, 2].map(() => t.services.campaigns.tick(account.user.accountId, campaign.id)),
    );
    const dialed = passes.reduce((sum, pass) => sum + pass.dialed, 0);
    assert.equal(dialed, allowed, `maxConcurrency ${maxConcurrency}: ${JSON.stringify(passes)}`);
    const stats = await ok('GET', `/campaigns/${campaign.id}/stats`);
    assert.equal(stats.counts.dialed, allowed);
    assert.equal(stats.contacts.inCall, allowed);
    // Contacts claimed by a pass that found no room went back to the queue.
    assert.equal(stats.contacts.dueNow, phones.length - allowed);
    assert.equal((await ok('GET', `/calls?campaignId=${campaign.id}`)).total, allowed);
  }
});

test('projected completion: at the pace observed since the start, then over the last hour', async () => {
  const phones = Array.from({ length: 10 }, (_, i) => `+1212555${String(i * 10 + 2000).padStart(4, '0')}`);
  const account = await dialingAccount(t, phones);
  const { ok } = api(t, account.user);
  const { campaign } = await startCampaign(t, account, {
    name: 'Pace',
    maxConcurrency: 5,
    callsPerMinute: 60,
  });
  const startedAt = clock.now().getTime();
  const projected = async () => {
    const stats = await ok('GET', `/campaigns/${campaign.id}/stats`);
    assert.equal(stats.contacts.remaining, 10);
    return stats.projectedCompletionAt;
  };
  const at = (ms: number) => new Date(startedAt + ms).toISOString();
  const MINUTE = 60_000;

  // No dial yet: the configured pace, 10 a minute (twice maxConcurrency, under callsPerMinute).
  assert.equal(await projected(), at(MINUTE));

  // A minute in, one pass dials 2 (the governor's first round); nine minutes later nothing more was dialled: 2 dials in
  // 10 minutes since the start, so the 10 contacts left take 50 minutes.
  clock.advance(MINUTE);
  assert.equal((await t.services.campaigns.tick(account.user.accountId, campaign.id)).dialed, 2);
  clock.advance(9 * MINUTE);
  assert.equal(await projected(), at(10 * MINUTE + 50 * MINUTE));

  // Twenty minutes in: 2 dials in 20 minutes, 100 minutes left.
  clock.advance(10 * MINUTE);
  assert.equal(await projected(), at(20 * MINUTE + 100 * MINUTE));

  // Over an hour in, those dials are older than the last hour: no pace observed, so the configured one again.
  clock.advance(45 * MINUTE);
  assert.equal(await projected(), at(65 * MINUTE + MINUTE));
});
