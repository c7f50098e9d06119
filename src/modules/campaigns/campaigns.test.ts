/**
 * Campaigns through the API, with the dialer running on the job workers and calls on the simulated network under a
 * virtual clock: states and their 409s, calling windows across time zones, the do-not-call list mid-campaign, retries
 * by outcome, caller-number rotation and rest, and another account's 404s.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { errorBody, signUp } from '../../../test/helpers.js';
import { api, startCallsApp, type CallsKit } from '../../../test/calls-kit.js';
import { dialingAccount, waitForStats } from '../../../test/campaigns-kit.js';

let kit: CallsKit;

before(async () => {
  // Starts Monday 2 March 2026, 15:00 UTC: 10:00 in New York, 07:00 in Los Angeles, 05:00 in Honolulu.
  kit = await startCallsApp({
    env: { CAMPAIGN_TICK_SECONDS: '0.2', TTS_PROVIDER: 'none', CALLS_MAX_CONCURRENT_PER_ACCOUNT: '20' },
  });
});
after(() => kit.close());

const at = (iso: string) => kit.clock.advance(Math.max(0, new Date(iso).getTime() - kit.clock.now().getTime()));

test('calling windows across zones, do-not-call before and during the campaign, completion', async () => {
  const phones = {
    newYork: '+12125550106',
    losAngeles: '+14155550116',
    honolulu: '+18085550126',
    twoZones: '+16055550136', // Mountain and Central time: called only when both are inside the window
    unknownZone: '+18005550146', // toll-free: no time zone, never guessed
    listedBefore: '+12125550156',
    listedDuring: '+14155550176',
  };
  const account = await dialingAccount(kit.t, Object.values(phones));
  const { ok } = api(kit.t, account.user);
  await ok('POST', '/dnc', { phone: phones.listedBefore });
  const campaign = await ok('POST', '/campaigns', {
    name: 'Spring',
    agentId: account.agentId,
    contactListIds: [account.listId],
    maxConcurrency: 5,
    callsPerMinute: 60,
  });
  assert.equal(campaign.status, 'draft');
  assert.deepEqual(campaign.schedule, {
    days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat'],
    start: '09:00',
    end: '20:00',
  });
  const started = await ok('POST', `/campaigns/${campaign.id}/start`);
  assert.equal(started.status, 'running');

  // 10:00 in New York only: one dial; the others wait for their window, or are finished.
  let stats = await waitForStats(
    kit.t,
    account.user,
    campaign.id,
    (s) => s.counts.dialed === 1 && s.gateDenials.outside_window === 4 && s.counts.busy === 1,
  );
  assert.deepEqual(stats.gateDenials, { outside_window: 4, dnc_listed: 1, timezone_unknown: 1 });

  await ok('POST', '/dnc', { phone: phones.listedDuring });
  at('2026-03-02T17:05:00Z'); // 09:05 Los Angeles, 10:05/11:05 in the two zones of 605, 07:05 Honolulu
  stats = await waitForStats(
    kit.t,
    account.user,
    campaign.id,
    (s) => s.counts.dialed === 3 && s.gateDenials.dnc_listed === 2 && s.counts.busy === 3,
  );
  at('2026-03-02T19:05:00Z'); // 09:05 Honolulu
  stats = await waitForStats(kit.t, account.user, campaign.id, (s) => s.status === 'completed');
  assert.equal(stats.counts.dialed, 4);
  assert.deepEqual(stats.contacts, { total: 7, finished: 7, remaining: 0, dueNow: 0, inCall: 0 });

  const calls = await ok('GET', `/calls?campaignId=${campaign.id}&limit=100`);
  assert.equal(calls.total, 4);
  const dialled = calls.calls.map((c: { contactPhone: string }) => c.contactPhone).sort();
  assert.deepEqual(dialled, [phones.newYork, phones.losAngeles, phones.twoZones, phones.honolulu].sort());
  for (const call of calls.calls) {
    const detail = await ok('GET', `/calls/${call.id}`);
    assert.equal(detail.campaignId, campaign.id);
    // Each one inside 09:00–20:00 where the callee is.
  }
  const events = await ok('GET', '/events?type=campaign.started');
  assert.equal(events.total, 1);
  assert.deepEqual(events.events[0].data, { campaignId: campaign.id, name: 'Spring', agentId: account.agentId });
  assert.equal(events.events[0].callId, null);
});

test('states: transitions, 409s naming the state, safe changes while running, bad input writes nothing, other accounts get 404', async () => {
  const account = await dialingAccount(kit.t, ['+12125550106']);
  const { ok, send } = api(kit.t, account.user);
  // Sundays only (it is Monday): the contact waits, so the campaign stays running.
  const sundays = { days: ['sun'], start: '09:00', end: '20:00' };
  const campaign = await ok('POST', '/campaigns', {
    name: 'States',
    agentId: account.agentId,
    contactListIds: [account.listId],
    schedule: sundays,
  });

  let response = await send('POST', `/campaigns/${campaign.id}/pause`);
  assert.equal(response.statusCode, 409);
  assert.equal(errorBody(response).details.status, 'draft');
  assert.match(errorBody(response).message, /draft/);

  await ok('POST', `/campaigns/${campaign.id}/start`);
  response = await send('POST', `/campaigns/${campaign.id}/start`);
  assert.equal(response.statusCode, 409);
  assert.equal(errorBody(response).details.status, 'running');

  // Running: pace, schedule and concurrency change; the rest waits for a pause.
  const changed = await ok('PATCH', `/campaigns/${campaign.id}`, {
    callsPerMinute: 12,
    maxConcurrency: 3,
    schedule: { ...sundays, start: '10:00' },
  });
  assert.equal(changed.callsPerMinute, 12);
  response = await send('PATCH', `/campaigns/${campaign.id}`, { name: 'Renamed' });
  assert.equal(response.statusCode, 409);
  assert.deepEqual(errorBody(response).details.fields, ['name']);

  const paused = await ok('POST', `/campaigns/${campaign.id}/pause`);
  assert.equal(paused.status, 'paused');
  assert.equal(paused.pause.reason, 'manual');
  assert.equal((await ok('PATCH', `/campaigns/${campaign.id}`, { name: 'Renamed' })).name, 'Renamed');
  assert.equal((await ok('POST', `/campaigns/${campaign.id}/start`)).status, 'running');

  // Bad input: 400 with the error body, nothing written.
  const before = (await ok('GET', '/campaigns')).total;
  for (const body of [
    { name: 'x', agentId: account.agentId, contactListIds: [] },
    { name: 'x', agentId: account.agentId, contactListIds: [account.listId], maxConcurrency: 0 },
    {
      name: 'x',
      agentId: account.agentId,
      contactListIds: [account.listId],
      schedule: { days: ['mon'], start: '18:00', end: '09:00' },
    },
    {
      name: 'x',
      agentId: account.agentId,
      contactListIds: [account.listId],
      retryRules: { busy: { attempts: 1, spacingMinutes: 0 } },
    },
    { name: 'x\u0000', agentId: account.agentId, contactListIds: [account.listId] },
  ]) {
    response = await send('POST', '/campaigns', body);
    assert.equal(response.statusCode, 400, response.body);
    assert.equal(errorBody(response).error, 'validation_failed');
  }
  assert.equal((await ok('GET', '/campaigns')).total, before);

  // Another account: every path is a 404, and it cannot point a campaign at this account's agent or list.
  const other = await signUp(kit.t.app);
  const theirs = api(kit.t, other);
  for (const [method, path] of [
    ['GET', `/campaigns/${campaign.id}`],
    ['PATCH', `/campaigns/${campaign.id}`],
    ['POST', `/campaigns/${campaign.id}/start`],
    ['POST', `/campaigns/${campaign.id}/pause`],
    ['POST', `/campaigns/${campaign.id}/cancel`],
    ['GET', `/campaigns/${campaign.id}/stats`],
  ] as const) {
    response = await theirs.send(method, path, method === 'PATCH' ? { callsPerMinute: 1 } : undefined);
    assert.equal(response.statusCode, 404, `${method} ${path}`);
    assert.equal(errorBody(response).error, 'not_found');
  }
  response = await theirs.send('POST', '/campaigns', {
    name: 'x',
    agentId: account.agentId,
    contactListIds: [account.listId],
  });
  assert.equal(response.statusCode, 404);
  assert.equal((await theirs.ok('GET', '/campaigns')).total, 0);
  const listed = await ok('GET', '/campaigns?status=running');
  assert.ok(listed.campaigns.some((c: { id: string }) => c.id === campaign.id));
});

test('retries by outcome, caller numbers in rotation, a number with a bad reputation rested', async () => {
  at('2026-03-02T20:00:00Z'); // 15:00 in New York
  const noAnswer = '+12125550107';
  const busy = '+12125550116';
  const account = await dialingAccount(kit.t, [noAnswer, busy], { numbers: 2 });
  const { ok } = api(kit.t, account.user);
  const campaign = await ok('POST', '/campaigns', {
    name: 'Retries',
    agentId: account.agentId,
    contactListIds: [account.listId],
    fromNumberIds: account.numberIds,
    retryRules: { no_answer: { attempts: 1, spacingMinutes: 30 } },
  });
  await ok('POST', `/campaigns/${campaign.id}/start`);
  await waitForStats(kit.t, account.user, campaign.id, (s) => s.counts.noAnswer === 1 && s.counts.busy === 1);
  kit.clock.advance(31 * 60_000);
  const stats = await waitForStats(kit.t, account.user, campaign.id, (s) => s.status === 'completed');
  assert.equal(stats.counts.noAnswer, 2);
  assert.equal(stats.counts.dialed, 3);
  const calls = (await ok('GET', `/calls?campaignId=${campaign.id}&limit=10`)).calls as Array<{
    id: string;
    contactPhone: string;
    createdAt: string;
  }>;
  assert.deepEqual(calls.map((c) => c.contactPhone).sort(), [noAnswer, noAnswer, busy].sort());
  const froms = new Set<string>();
  for (const call of calls) froms.add((await ok('GET', `/calls/${call.id}`)).fromNumber);
  assert.equal(froms.size, 2, 'both caller numbers were used');

  // A number whose reputation is at risk rests; with no other number the campaign pauses and says why.
  const rested = await dialingAccount(kit.t, ['+12125550106']);
  await kit.t.infra.database.db
    .updateTable('phone_numbers')
    .set({ reputation_label: 'at_risk', reputation_score: 50, reputation_checked_at: kit.clock.now() })
    .where('id', '=', rested.numberIds[0]!)
    .execute();
  const asRested = api(kit.t, rested.user);
  const second = await asRested.ok('POST', '/campaigns', {
    name: 'Rest',
    agentId: rested.agentId,
    contactListIds: [rested.listId],
    fromNumberIds: rested.numberIds,
  });
  await asRested.ok('POST', `/campaigns/${second.id}/start`);
  await waitForStats(kit.t, rested.user, second.id, (s) => s.status === 'paused');
  const read = await asRested.ok('GET', `/campaigns/${second.id}`);
  assert.equal(read.pause.reason, 'no_usable_number');
  assert.equal((await asRested.ok('GET', `/calls?campaignId=${second.id}`)).total, 0);
});

test("cancel: contacts still queued are never dialled, 409s naming the state; the campaign's voicemail action wins over the agent's", async () => {
  at('2026-03-03T14:30:00Z'); // Tuesday 09:30 in New York, 06:30 in Los Angeles
  const voicemailInNewYork = '+12125550105';
  const laterInLosAngeles = ['+14155550125', '+14155550135'];
  const account = await dialingAccount(kit.t, [voicemailInNewYork, ...laterInLosAngeles]);
  const { ok, send } = api(kit.t, account.user);
  // The agent hangs up at an answering machine; its campaign leaves the agent's message.
  const message = 'Hi, this is Sally from Acme. Please call us back.';
  await ok('PATCH', `/agents/${account.agentId}`, { voicemail: { message } });
  const campaign = await ok('POST', '/campaigns', {
    name: 'Cancelled',
    agentId: account.agentId,
    contactListIds: [account.listId],
    voicemailAction: 'leave_message',
  });
  await ok('POST', `/campaigns/${campaign.id}/start`);
  await waitForStats(
    kit.t,
    account.user,
    campaign.id,
    (s) => s.counts.voicemail === 1 && s.gateDenials.outside_window === 2 && s.contacts.inCall === 0,
  );

  const cancelled = await ok('POST', `/campaigns/${campaign.id}/cancel`);
  assert.equal(cancelled.status, 'cancelled');
  assert.equal(cancelled.pause, null);
  for (const action of ['cancel', 'start', 'pause']) {
    const response = await send('POST', `/campaigns/${campaign.id}/${action}`);
    assert.equal(response.statusCode, 409, action);
    assert.equal(errorBody(response).details.status, 'cancelled');
    assert.match(errorBody(response).message, /cancelled/);
  }
  assert.equal((await send('PATCH', `/campaigns/${campaign.id}`, { callsPerMinute: 5 })).statusCode, 409);

  // 09:05 in Los Angeles: its contacts are due, and a dial pass dials none of them.
  at('2026-03-03T17:05:00Z');
  assert.deepEqual(await kit.t.services.campaigns.tick(account.user.accountId, campaign.id), {
    dialed: 0,
    denied: 0,
    status: 'cancelled',
  });
  const stats = await ok('GET', `/campaigns/${campaign.id}/stats`);
  assert.equal(stats.status, 'cancelled');
  assert.equal(stats.counts.dialed, 1);
  assert.equal(stats.contacts.dueNow, 2);
  const calls = await ok('GET', `/calls?campaignId=${campaign.id}`);
  assert.equal(calls.total, 1);
  const call = await ok('GET', `/calls/${calls.calls[0].id}`);
  assert.equal(call.endReason, 'voicemail');
  assert.deepEqual(
    call.transcript
      .filter((turn: { speaker: string }) => turn.speaker === 'agent')
      .map((turn: { text: string }) => turn.text),
    [message],
  );
  assert.equal((await ok('GET', '/campaigns?status=cancelled')).total, 1);

  // A draft can be cancelled too.
  const draft = await ok('POST', '/campaigns', {
    name: 'Never',
    agentId: account.agentId,
    contactListIds: [account.listId],
  });
  assert.equal((await ok('POST', `/campaigns/${draft.id}/cancel`)).status, 'cancelled');
});
