/**
 * Calls that really run, end to end on the built-in simulated network: one call per outcome of the sim's table and
 * per persona, checked through the API (status, events, transcript, costs, the recording), with a virtual clock so a
 * minute-long call takes milliseconds.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { decodeWav } from '../../lib/wav.js';
import { errorBody, signUp } from '../../../test/helpers.js';
import { insertCall } from '../../../test/factories/calls.js';
import {
  api,
  callEvents,
  callingAccount,
  micros,
  placeCall,
  SALES_AGENT,
  startCallsApp,
  waitForCall,
  type CallingAccount,
  type CallsKit,
} from '../../../test/calls-kit.js';

let kit: CallsKit;
let account: CallingAccount;
let admin: Awaited<ReturnType<typeof signUp>>;

/** Last digit: the outcome; second-to-last: the persona of a person who answers. */
const PHONES = {
  interested: '+14155550100',
  voicemail: '+14155550115',
  busy: '+14155550126',
  noAnswer: '+14155550137',
  failed: '+14155550148',
  hangsUpEarly: '+14155550159',
  hesitant: '+14155550110',
  callback: '+14155550120',
  notInterested: '+14155550130',
  stopCalling: '+14155550140',
  namedPersona: '+14155550101',
};

before(async () => {
  kit = await startCallsApp();
  admin = await signUp(kit.t.app);
  await kit.t.infra.database.db
    .updateTable('users')
    .set({ is_platform_admin: true })
    .where('id', '=', admin.userId)
    .execute();
  // Prices that make every line of a call count: the built-in engines are repriced, the US rate and a platform fee set.
  const asAdmin = api(kit.t, { headers: { cookie: admin.cookie } });
  const models = async (kind: string) =>
    (await asAdmin.ok('GET', `/admin/models/${kind}?limit=100`)).models as Array<{ id: string; isDefault: boolean }>;
  const defaultOf = async (kind: string) => (await models(kind)).find((m) => m.isDefault)!.id;
  await asAdmin.ok('PATCH', `/admin/models/llm/${await defaultOf('llm')}`, {
    inputPer1kTokensUsd: '0.0015',
    outputPer1kTokensUsd: '0.006',
  });
  await asAdmin.ok('PATCH', `/admin/models/tts/${await defaultOf('tts')}`, { per1kCharactersUsd: '0.015' });
  await asAdmin.ok('PATCH', `/admin/models/stt/${await defaultOf('stt')}`, { perMinuteUsd: '0.0043' });
  await asAdmin.ok('PUT', '/admin/rates/telephony', {
    rates: [
      { country: 'US', inboundPerMinuteUsd: '0.0085', outboundPerMinuteUsd: '0.014' },
      { country: '*', inboundPerMinuteUsd: '0.02', outboundPerMinuteUsd: '0.1' },
    ],
    platformFeePerMinuteUsd: '0.05',
  });
  account = await callingAccount(kit.t, [
    { phone: PHONES.interested, firstName: 'Ada' },
    { phone: PHONES.voicemail, firstName: 'Vera' },
    { phone: PHONES.busy },
    { phone: PHONES.noAnswer },
    { phone: PHONES.failed },
    { phone: PHONES.hangsUpEarly },
    { phone: PHONES.hesitant },
    { phone: PHONES.callback },
    { phone: PHONES.notInterested },
    { phone: PHONES.stopCalling },
    { phone: PHONES.namedPersona, persona: 'Not interested' },
  ]);
});
after(() => kit.close());

const eventTypes = async (callId: string, who = account.user) =>
  (await callEvents(kit.t, who, callId)).map((e) => e.type);

/** The recording through a signed URL, decoded. */
async function recordingOf(callId: string) {
  const { url } = await api(kit.t, account.user).ok('GET', `/calls/${callId}/asset-url?asset=recording`);
  const response = await kit.t.app.inject({ method: 'GET', url: new URL(url).pathname + new URL(url).search });
  assert.equal(response.statusCode, 200, response.body);
  assert.equal(response.headers['content-type'], 'audio/wav');
  return { bytes: response.rawPayload, audio: decodeWav(response.rawPayload) };
}

function assertCostsAddUp(call: { costItems: Array<{ kind: string; amountUsd: string }>; totalCostUsd: string }) {
  const sum = call.costItems.reduce((total, item) => total + micros(item.amountUsd), 0n);
  assert.equal(sum, micros(call.totalCostUsd), 'the total is the exact sum of the items');
}

test('a person who answers and agrees: connected, a real conversation, costs, a two-channel recording', async () => {
  const callId = await placeCall(kit.t, account, PHONES.interested);
  const call = await waitForCall(kit.t, account.user, callId);
  assert.equal(call.status, 'completed');
  assert.equal(call.endReason, 'agent_hangup');
  assert.equal(call.disposition, 'interested');
  assert.equal(call.direction, 'outbound');
  assert.equal(call.fromNumber, account.callerNumber);
  assert.equal(call.toNumber, PHONES.interested);
  assert.equal(call.agentVersion, 1);
  assert.ok(call.answeredAt > call.startedAt && call.endedAt > call.answeredAt);

  const turns = call.transcript as Array<{ speaker: string; text: string; startMs: number; endMs: number }>;
  assert.deepEqual(
    turns.slice(0, 3).map((turn) => turn.speaker),
    ['caller', 'agent', 'caller'],
    'the person picks up and greets; the agent waits for it, then speaks',
  );
  assert.equal(turns[0]!.text, 'Hello?');
  assert.equal(turns[1]!.text, SALES_AGENT.firstMessage);
  assert.match(turns[2]!.text, /Ada/, 'the person answers as the contact');
  assert.ok(
    turns.some((turn) => turn.text.includes('It starts at 49 dollars a month')),
    'an FAQ answered',
  );
  assert.equal(turns.at(-1)!.text, 'Great, I will send you an invite. Goodbye!', 'the closer, said once');
  for (const [i, turn] of turns.entries()) {
    assert.ok(turn.endMs > turn.startMs, 'every turn lasts');
    if (i > 0) assert.ok(turn.startMs >= turns[i - 1]!.endMs, 'turns follow each other');
  }
  assert.ok(Math.abs(call.durationSeconds - turns.at(-1)!.endMs / 1000) <= 1, 'the call lasts as long as its turns');

  assert.deepEqual(await eventTypes(callId), [
    'call.queued',
    'call.dialing',
    'call.ringing',
    'call.connected',
    ...turns.map(() => 'call.turn'),
    'call.disposition_set',
    'call.completed',
  ]);

  assert.deepEqual(call.costItems.map((item: { kind: string }) => item.kind).sort(), [
    'llm',
    'llm',
    'platform',
    'stt',
    'telephony',
    'tts',
  ]);
  const telephony = call.costItems.find((item: { kind: string }) => item.kind === 'telephony');
  assert.equal(telephony.description, 'Outbound minutes (US)');
  assert.equal(Number(telephony.unitPriceUsd), 0.014);
  // durationSeconds at 0.014 a minute, rounded half up to the micro-dollar.
  assert.equal(micros(telephony.amountUsd), (BigInt(call.durationSeconds) * 14_000n + 30n) / 60n);
  assert.ok(
    call.costItems.every((item: { amountUsd: string }) => micros(item.amountUsd) > 0n),
    'every line costs something',
  );
  assertCostsAddUp(call);

  const { audio } = await recordingOf(callId);
  assert.equal(audio.channels, 2);
  assert.equal(audio.sampleRate, 8000);
  const seconds = audio.samples.length / 2 / audio.sampleRate;
  assert.ok(Math.abs(seconds - call.durationSeconds) <= 1, `recording ${seconds} s, call ${call.durationSeconds} s`);
  const energy = (channel: 0 | 1) =>
    audio.samples.reduce((sum, sample, i) => (i % 2 === channel ? sum + Math.abs(sample) : sum), 0);
  assert.ok(energy(0) > 0 && energy(1) > 0, 'both sides speak on their own channel');

  const agent = await api(kit.t, account.user).ok('GET', `/agents/${account.agentId}`);
  assert.equal(agent.lastCallAt, call.endedAt, "the agent's last call");
});

test('an answering machine: the agent leaves its message after the beep', async () => {
  const callId = await placeCall(kit.t, account, PHONES.voicemail);
  const call = await waitForCall(kit.t, account.user, callId);
  assert.equal(call.status, 'completed');
  assert.equal(call.endReason, 'voicemail');
  assert.equal(call.disposition, 'voicemail');
  assert.deepEqual(
    call.transcript.map((turn: { speaker: string }) => turn.speaker),
    ['caller', 'agent'],
  );
  assert.match(call.transcript[0].text, /reached Vera.*leave a message after the beep/);
  assert.equal(call.transcript[1].text, SALES_AGENT.voicemail.message);
  const types = await eventTypes(callId);
  assert.deepEqual(types.slice(0, 5), [
    'call.queued',
    'call.dialing',
    'call.ringing',
    'call.connected',
    'call.voicemail',
  ]);
  assert.equal(types.at(-1), 'call.completed');
  assertCostsAddUp(call);
  const { audio } = await recordingOf(callId);
  assert.ok(Math.abs(audio.samples.length / 2 / 8000 - call.durationSeconds) <= 1);
});

test('an answering machine, for an agent set to hang up: no message', async () => {
  const other = await callingAccount(kit.t, [{ phone: PHONES.voicemail }], {
    ...SALES_AGENT,
    voicemail: { action: 'hang_up' },
  });
  const call = await waitForCall(kit.t, other.user, await placeCall(kit.t, other, PHONES.voicemail));
  assert.equal(call.endReason, 'voicemail');
  assert.deepEqual(
    call.transcript.map((turn: { speaker: string }) => turn.speaker),
    ['caller'],
  );
});

test('busy, no answer and a number not in service end without connecting, cost nothing and have no recording', async () => {
  const expected = [
    {
      phone: PHONES.busy,
      status: 'busy',
      endReason: 'busy',
      events: ['call.queued', 'call.dialing', 'call.disposition_set', 'call.failed'],
    },
    {
      phone: PHONES.noAnswer,
      status: 'no_answer',
      endReason: 'no_answer',
      events: ['call.queued', 'call.dialing', 'call.ringing', 'call.disposition_set', 'call.failed'],
    },
    {
      phone: PHONES.failed,
      status: 'failed',
      endReason: 'failed: The number is not in service.',
      events: ['call.queued', 'call.dialing', 'call.disposition_set', 'call.failed'],
    },
  ];
  const callIds = await Promise.all(expected.map((row) => placeCall(kit.t, account, row.phone)));
  for (const [i, row] of expected.entries()) {
    const call = await waitForCall(kit.t, account.user, callIds[i]!);
    assert.equal(call.status, row.status, row.phone);
    assert.equal(call.endReason, row.endReason);
    assert.equal(call.disposition, row.status);
    assert.equal(call.answeredAt, null);
    assert.equal(call.durationSeconds, null);
    assert.equal(call.recordingStorageKey, null);
    assert.deepEqual(call.transcript, []);
    assert.deepEqual(call.costItems, []);
    assert.equal(call.totalCostUsd, '0.000000');
    assert.deepEqual(await eventTypes(callIds[i]!), row.events);
    const failed = (await callEvents(kit.t, account.user, callIds[i]!)).at(-1)!;
    assert.equal(failed.data.status, row.status);
  }
  const recording = await api(kit.t, account.user).send('GET', `/calls/${callIds[0]}/asset-url?asset=recording`);
  assert.equal(recording.statusCode, 404);
  assert.equal(errorBody(recording).message, 'This call has no recording');
});

test('each ended outbound call counts toward the reputation of the number it went out from', async () => {
  const caller = await callingAccount(kit.t, [{ phone: PHONES.interested }, { phone: PHONES.busy }]);
  const callIds = [await placeCall(kit.t, caller, PHONES.interested), await placeCall(kit.t, caller, PHONES.busy)];
  for (const callId of callIds) await waitForCall(kit.t, caller.user, callId);
  // The numbers module counts calls from their end events, a job after each call: wait for both to be counted.
  const { ok } = api(kit.t, caller.user);
  let reputation = await ok('POST', `/phone-numbers/${caller.numberId}/recheck-reputation`);
  for (let i = 0; i < 200 && reputation.calls24h < 2; i++) {
    await sleep(50);
    reputation = await ok('POST', `/phone-numbers/${caller.numberId}/recheck-reputation`);
  }
  assert.deepEqual([reputation.calls24h, reputation.answeredCalls24h, reputation.answerRate], [2, 1, 0.5]);
});

test('a person who hangs up during the opening line: the call is hung_up, never without a disposition', async () => {
  const call = await waitForCall(kit.t, account.user, await placeCall(kit.t, account, PHONES.hangsUpEarly));
  assert.equal(call.status, 'completed');
  assert.equal(call.endReason, 'caller_hangup');
  assert.equal(call.disposition, 'hung_up');
  assert.deepEqual(
    call.transcript.map((turn: { text: string }) => turn.text),
    ['Hello?', SALES_AGENT.firstMessage],
  );
  assertCostsAddUp(call);
});

test('personas: objections then a transfer, a callback, a refusal, and a persona named by the contact', async () => {
  const transferring = await callingAccount(kit.t, [{ phone: PHONES.hesitant }], {
    ...SALES_AGENT,
    transfer: { number: '+14155550199', whenToTransfer: 'When they ask for a person.' },
  });
  const transferred = await waitForCall(
    kit.t,
    transferring.user,
    await placeCall(kit.t, transferring, PHONES.hesitant),
  );
  assert.equal(transferred.endReason, 'transferred');
  assert.equal(transferred.disposition, 'transferred');
  const transferEvents = (await callEvents(kit.t, transferring.user, transferred.id)).filter(
    (e) => e.type === 'call.transferred',
  );
  assert.deepEqual(
    transferEvents.map((e) => e.data),
    [{ callId: transferred.id, to: '+14155550199' }],
  );
  const said: string[] = transferred.transcript.map((turn: { text: string }) => turn.text);
  assert.ok(
    said.some((text) => text.startsWith('Most teams earn it back in the first month.')),
    'the objection was answered',
  );
  assert.ok(said.includes('Could I speak to a real person about this?'));

  // Without a transfer number the same person is told honestly that someone will call back, and that is recorded.
  const noTransfer = await waitForCall(kit.t, account.user, await placeCall(kit.t, account, PHONES.hesitant));
  assert.notEqual(noTransfer.endReason, 'transferred');
  assert.equal(noTransfer.disposition, 'callback_requested');
  assert.match(noTransfer.transcript.at(-1).text, /will call you back/);

  const callback = await waitForCall(kit.t, account.user, await placeCall(kit.t, account, PHONES.callback));
  assert.equal(callback.disposition, 'callback_requested');
  assert.equal(callback.endReason, 'agent_hangup');

  const refusal = await waitForCall(kit.t, account.user, await placeCall(kit.t, account, PHONES.notInterested));
  assert.equal(refusal.disposition, 'not_interested');

  const named = await waitForCall(kit.t, account.user, await placeCall(kit.t, account, PHONES.namedPersona));
  assert.equal(named.disposition, 'not_interested', 'the Persona column wins over the digits');
});

test('asking to stop calling puts the number on the do-not-call list at once; the next call is refused', async () => {
  const { ok, send } = api(kit.t, account.user);
  const callId = await placeCall(kit.t, account, PHONES.stopCalling);
  const call = await waitForCall(kit.t, account.user, callId);
  assert.equal(call.disposition, 'do_not_call');
  const events = await callEvents(kit.t, account.user, callId);
  const asked = events.findIndex((e) => e.type === 'call.turn' && /stop calling/.test(String(e.data.text)));
  const listed = events.findIndex((e) => e.type === 'call.dnc_added');
  assert.ok(asked > 0 && listed === asked + 1, 'listed right after the words, before the agent answers');
  assert.equal(events[listed + 1]!.type, 'call.disposition_set');
  assert.equal(events.filter((e) => e.type === 'call.dnc_added').length, 1);

  const entries = await ok('GET', `/dnc?q=${encodeURIComponent(PHONES.stopCalling)}`);
  assert.equal(entries.dncEntries.length, 1);
  assert.match(entries.dncEntries[0].reason, /not to be called again/);
  const contact = await ok('GET', `/contacts/${account.contacts.get(PHONES.stopCalling)}`);
  assert.equal(contact.dnc, true);

  const before = (await ok('GET', '/calls?limit=1')).total;
  const refused = await send('POST', `/crm/contacts/${account.contacts.get(PHONES.stopCalling)}/call`, {
    agentId: account.agentId,
  });
  assert.equal(refused.statusCode, 409);
  assert.equal(errorBody(refused).error, 'dnc_listed');
  assert.equal((await ok('GET', '/calls?limit=1')).total, before, 'no call written');
});

test('refusals write nothing: a listed number, an agent that is not active, no number to call from, bad input', async () => {
  const user = await signUp(kit.t.app);
  const { ok, send } = api(kit.t, user);
  const agent = await ok('POST', '/agents', { name: 'Draft' });
  const imported = await kit.t.app.inject({
    method: 'POST',
    url: '/api/v1/contact-lists?name=L&defaultCountry=US',
    headers: { ...user.headers, 'content-type': 'text/csv' },
    payload: 'Phone\n+14155550100\n+14155550101\n',
  });
  const [first, second] = (await ok('GET', `/contacts?listId=${imported.json().listId}`)).contacts;
  const place = (contactId: string, body: object) => send('POST', `/crm/contacts/${contactId}/call`, body);

  const draft = await place(first.id, { agentId: agent.id });
  assert.equal(draft.statusCode, 409);
  assert.match(errorBody(draft).message, /agent is draft/);
  await ok('PATCH', `/agents/${agent.id}`, { status: 'active' });
  const noNumber = await place(first.id, { agentId: agent.id });
  assert.equal(noNumber.statusCode, 409);
  assert.match(errorBody(noNumber).message, /no phone number to call from/);
  await ok('POST', '/dnc', { phone: second.phone });
  await ok('POST', '/phone-numbers', { number: '+14155558888' });
  const listed = await place(second.id, { agentId: agent.id });
  assert.equal(listed.statusCode, 409);
  assert.equal(errorBody(listed).error, 'dnc_listed');
  for (const body of [
    {},
    { agentId: 'nope' },
    { agentId: agent.id, extra: 1 },
    { agentId: agent.id, fromNumberId: 'x' },
  ]) {
    const bad = await place(first.id, body);
    assert.equal(bad.statusCode, 400, JSON.stringify(body));
    assert.equal(errorBody(bad).error, 'validation_failed');
  }
  assert.equal((await ok('GET', '/calls')).total, 0);
  const placed = await place(first.id, { agentId: agent.id });
  assert.equal(placed.statusCode, 200, 'with everything in place the call goes out');
});

test("another account's contact, agent, number or call answers 404 on every route that takes one", async () => {
  const stranger = await callingAccount(kit.t, [{ phone: PHONES.interested }]);
  const { send } = api(kit.t, stranger.user);
  const ownContact = stranger.contacts.get(PHONES.interested)!;
  const othersContact = account.contacts.get(PHONES.interested)!;
  const othersCall = await placeCall(kit.t, account, PHONES.busy);
  const cases: Array<[string, Awaited<ReturnType<typeof send>>]> = [
    ['contact', await send('POST', `/crm/contacts/${othersContact}/call`, { agentId: stranger.agentId })],
    ['agent', await send('POST', `/crm/contacts/${ownContact}/call`, { agentId: account.agentId })],
    [
      'number',
      await send('POST', `/crm/contacts/${ownContact}/call`, {
        agentId: stranger.agentId,
        fromNumberId: account.numberId,
      }),
    ],
    ['asset-url', await send('GET', `/calls/${othersCall}/asset-url?asset=transcript`)],
    ['disposition', await send('PATCH', `/calls/${othersCall}/disposition`, { disposition: 'interested' })],
    ['transcript', await send('GET', `/calls/${othersCall}/transcript.json`)],
  ];
  for (const [what, response] of cases) {
    assert.equal(response.statusCode, 404, `${what}: ${response.body}`);
    assert.equal(errorBody(response).error, 'not_found');
  }
  assert.equal((await api(kit.t, stranger.user).ok('GET', '/calls')).total, 0);
});

test('a call is pinned to the agent version it started with', async () => {
  const pinned = await callingAccount(kit.t, [{ phone: PHONES.notInterested }]);
  const { ok } = api(kit.t, pinned.user);
  const first = await waitForCall(kit.t, pinned.user, await placeCall(kit.t, pinned, PHONES.notInterested));
  assert.equal(first.agentVersion, 1);
  await ok('PATCH', `/agents/${pinned.agentId}`, { firstMessage: 'Hello from version two.' });
  const second = await waitForCall(kit.t, pinned.user, await placeCall(kit.t, pinned, PHONES.notInterested));
  assert.equal(second.agentVersion, 2);
  assert.equal(second.transcript[1].text, 'Hello from version two.', 'after the greeting, the agent opens');
  const again = await ok('GET', `/calls/${first.id}`);
  assert.equal(again.agentVersion, 1);
  assert.equal(again.transcript[1].text, SALES_AGENT.firstMessage);
  // A settings change does not make a version: the next call stays on 2.
  await ok('PATCH', `/agents/${pinned.agentId}`, { name: 'Renamed' });
  assert.equal(
    (await waitForCall(kit.t, pinned.user, await placeCall(kit.t, pinned, PHONES.notInterested))).agentVersion,
    2,
  );
});

test('calls over the account limit wait in the queue and start as slots free; never more live at once', async () => {
  const busy = await callingAccount(
    kit.t,
    [
      PHONES.interested,
      PHONES.callback,
      PHONES.notInterested,
      PHONES.hesitant,
      PHONES.voicemail,
      PHONES.hangsUpEarly,
      PHONES.stopCalling,
    ].map((phone) => ({ phone })),
  );
  const phones = [...busy.contacts.keys()];
  const callIds = await Promise.all(phones.map((phone) => placeCall(kit.t, busy, phone)));
  const calls = await Promise.all(callIds.map((id) => waitForCall(kit.t, busy.user, id)));
  assert.ok(calls.every((call) => call.status === 'completed'));
  // Along the one clock: at no instant were more than 5 (CALLS_MAX_CONCURRENT_PER_ACCOUNT) calls live.
  const edges = calls.flatMap((call) => [
    { at: Date.parse(call.startedAt), change: 1 },
    { at: Date.parse(call.endedAt), change: -1 },
  ]);
  edges.sort((a, b) => a.at - b.at || a.change - b.change);
  let live = 0;
  let peak = 0;
  for (const edge of edges) peak = Math.max(peak, (live += edge.change));
  assert.ok(peak <= 5, `peak ${peak}`);
  const queuedFirst = calls.filter((call) => Date.parse(call.startedAt) > Date.parse(call.createdAt));
  assert.ok(queuedFirst.length >= 2, 'the last two waited for a slot');
});

test("PATCH disposition: an active code of the account replaces the engine's; anything else is 400 and changes nothing", async () => {
  const { ok, send } = api(kit.t, account.user);
  const callId = await placeCall(kit.t, account, PHONES.callback);
  const call = await waitForCall(kit.t, account.user, callId);
  assert.equal(call.disposition, 'callback_requested');
  const changed = await ok('PATCH', `/calls/${callId}/disposition`, { disposition: 'appointment_booked' });
  assert.equal(changed.disposition, 'appointment_booked');
  const last = (await callEvents(kit.t, account.user, callId)).at(-1)!;
  assert.equal(last.type, 'call.disposition_set');
  assert.deepEqual(last.data, {
    callId,
    disposition: 'appointment_booked',
    previous: 'callback_requested',
    source: 'user',
  });
  for (const disposition of ['no_such_code', 'Bad Code', '']) {
    const bad = await send('PATCH', `/calls/${callId}/disposition`, { disposition });
    assert.equal(bad.statusCode, 400, disposition);
    assert.equal(errorBody(bad).error, 'validation_failed');
  }
  assert.equal((await ok('GET', `/calls/${callId}`)).disposition, 'appointment_booked');
  const viewerless = await send('PATCH', `/calls/${callId}/disposition`, {});
  assert.equal(viewerless.statusCode, 400);
});

test('the sweep for lost calls, run while calls are starting, closes a lost call and never one this process is starting', async () => {
  const phones = [PHONES.interested, PHONES.callback, PHONES.notInterested, PHONES.hesitant, PHONES.voicemail];
  const starting = await callingAccount(
    kit.t,
    phones.map((phone) => ({ phone })),
  );
  // Every call is held at its first wait on the network: claimed, dialing, and carried by this process.
  kit.pauses.hold('network');
  let callIds: string[];
  let lostId: string;
  let swept: { closed: number; spared: number };
  try {
    callIds = await Promise.all(phones.map((phone) => placeCall(kit.t, starting, phone)));
    await kit.pauses.paused(callIds.length);
    const held = await Promise.all(callIds.map((id) => waitForCall(kit.t, starting.user, id, () => true)));
    assert.deepEqual(
      held.map((call) => call.status),
      callIds.map(() => 'dialing'),
    );
    // Beside them, a call another process left dialing: nobody here carries it, its last heartbeat an hour old.
    const lost = await insertCall(kit.t.infra.database.db, starting.user.accountId, { status: 'dialing' });
    lostId = lost.id;
    await kit.t.infra.database.db
      .updateTable('calls')
      .set({ heartbeat_at: new Date(Date.now() - 3_600_000), runner_id: 'a-process-that-died' })
      .where('id', '=', lost.id)
      .execute();
    swept = await kit.t.services.calls.sweepLostCalls();
  } finally {
    kit.pauses.release();
  }
  // On the embedded database every live call is a candidate, and those this process carries are spared; on
  // PostgreSQL only calls with a stale heartbeat are candidates, so the held ones are not even looked at.
  assert.equal(swept.spared, kit.t.infra.database.kind === 'pglite' ? callIds.length : 0);
  // Closed by this sweep (or by the scheduled one, should it have run in between).
  const closed = await api(kit.t, starting.user).ok('GET', `/calls/${lostId}`);
  assert.equal(`${closed.status} ${closed.endReason}`, 'failed worker_lost');
  // Each held call went on to a conversation of its own.
  const ended = await Promise.all(callIds.map((id) => waitForCall(kit.t, starting.user, id)));
  for (const call of ended) {
    assert.equal(call.status, 'completed');
    assert.ok(call.answeredAt, 'it was answered');
    assert.notEqual(call.endReason, 'worker_lost');
  }
});
