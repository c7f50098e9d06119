/**
 * The platform administrator's call tools, through HTTP: every account's calls, the pickers, a call's detail and
 * timeline, control of a live call (also from another instance on PostgreSQL), test calls, and the hang-up of live
 * calls when the server closes. A call is reached while live by holding its conversation where it waits on the clock
 * (see CallPauses), and moved on one wait at a time, not by racing the clock.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  buildTestApp,
  createTestDatabase,
  errorBody,
  signUp,
  type SignedUp,
  type TestApp,
  type TestDatabase,
} from '../../../test/helpers.js';
import {
  api,
  callEvents,
  callingAccount,
  placeCall,
  startCallsApp,
  waitForCall,
  type CallingAccount,
  type CallsKit,
} from '../../../test/calls-kit.js';

let kit: CallsKit;
let database: TestDatabase | undefined;
let admin: { headers: Record<string, string> };
let adminUser: SignedUp;
let a: CallingAccount;
let b: CallingAccount;
// One Redis prefix for both instances of the cross-instance test: they are one deployment.
const redisKeyPrefix = `parley-test:admin-${randomBytes(4).toString('hex')}:`;

before(async () => {
  // On PostgreSQL a second instance opens the same database (see the cross-instance test).
  database = process.env.DATABASE_URL ? await createTestDatabase({ from: 'template' }) : undefined;
  kit = await startCallsApp({
    database,
    redisKeyPrefix,
    env: { TTS_PROVIDER: 'none', CALLS_MAX_DURATION_SECONDS: '120' },
  });
  adminUser = await signUp(kit.t.app);
  await kit.t.infra.database.db
    .updateTable('users')
    .set({ is_platform_admin: true })
    .where('id', '=', adminUser.userId)
    .execute();
  admin = { headers: { cookie: adminUser.cookie } };
  a = await callingAccount(kit.t, [{ phone: '+14155550106' }, { phone: '+14155550110' }, { phone: '+14155550100' }]);
  b = await callingAccount(kit.t, [{ phone: '+14155550108' }], {
    name: 'Bob Bot',
    status: 'active',
    firstMessage: 'Hello from Bob.',
  });
});
after(async () => {
  await kit.close();
  await database?.drop();
});

const send = (who: { headers: Record<string, string> }, method: 'GET' | 'POST', url: string, payload?: unknown) =>
  kit.t.app.inject({
    method,
    url: `/api/v1${url}`,
    headers: who.headers,
    ...(payload === undefined ? {} : { payload: payload as object }),
  });

async function ok(method: 'GET' | 'POST', url: string, payload?: unknown) {
  const response = await send(admin, method, url, payload);
  assert.equal(response.statusCode, 200, `${method} ${url}: ${response.body}`);
  return response.json();
}

/** Places a call and holds its conversation at its first wait: the call is connected until the test lets it go. */
async function placeHeldCall(account: CallingAccount, phone: string) {
  kit.pauses.hold('conversation');
  const callId = await placeCall(kit.t, account, phone);
  await kit.pauses.paused();
  const live = await waitForCall(kit.t, account.user, callId, (call) => call.status !== 'queued');
  assert.equal(live.status, 'connected', 'held while live');
  return callId;
}

/** Moves the held conversation on, one wait at a time, until `done` holds for the admin's detail of the call. */
async function stepUntil(
  callId: string,
  done: (call: { transcript: Array<{ speaker: string; text: string }> }) => boolean,
) {
  for (;;) {
    const call = await ok('GET', `/admin/calls/${callId}`);
    if (done(call)) return call;
    if (call.endedAt) assert.fail('the call ended first');
    await kit.pauses.step();
  }
}

const saidByAgent = (text: string) => (call: { transcript: Array<{ speaker: string; text: string }> }) =>
  call.transcript.some((turn) => turn.speaker === 'agent' && turn.text === text);

test("every admin route answers 403 to an ordinary session and to API keys, the admin's own included", async () => {
  const adminKey = { headers: { authorization: `Bearer ${adminUser.apiKey}` } };
  const someId = '00000000-0000-4000-8000-000000000001';
  const routes: Array<['GET' | 'POST', string, unknown?]> = [
    ['GET', '/admin/calls'],
    ['GET', '/admin/calls/_/agents'],
    ['GET', '/admin/calls/_/accounts'],
    ['GET', `/admin/calls/${someId}`],
    ['GET', `/admin/calls/${someId}/events`],
    ['GET', `/admin/calls/${someId}/capture.pcap.gz`],
    ['POST', `/admin/calls/${someId}/inject`, { text: 'Hello' }],
    ['POST', `/admin/calls/${someId}/hangup`],
    ['POST', '/admin/test-call', { agentId: a.agentId, toNumber: '+14155550100' }],
  ];
  for (const [method, url, body] of routes) {
    for (const who of [{ headers: { cookie: a.user.cookie } }, a.user, adminKey]) {
      const response = await send(who, method, url, body);
      assert.equal(response.statusCode, 403, `${method} ${url}`);
      assert.equal(errorBody(response).error, 'forbidden');
    }
  }
});

test('the admin lists the calls of every account, filtered and paged', async () => {
  const busy = await placeCall(kit.t, a, '+14155550106');
  const failed = await placeCall(kit.t, b, '+14155550108');
  await waitForCall(kit.t, a.user, busy);
  await waitForCall(kit.t, b.user, failed);

  const all = await ok('GET', '/admin/calls?limit=500');
  const ids = all.calls.map((call: { id: string }) => call.id);
  assert.ok(ids.includes(busy) && ids.includes(failed), 'both accounts');
  const ofB = await ok('GET', `/admin/calls?accountId=${b.user.accountId}`);
  assert.deepEqual(
    ofB.calls.map((call: { id: string }) => call.id),
    [failed],
  );
  assert.equal(ofB.total, 1);
  const item = ofB.calls[0];
  assert.equal(item.accountId, b.user.accountId);
  assert.match(item.accountName, /account/);
  assert.equal(item.agentName, 'Bob Bot');
  assert.equal(item.status, 'failed');
  assert.equal(item.toNumber, '+14155550108');
  assert.equal(item.fromNumber, b.callerNumber);

  assert.deepEqual(
    (await ok('GET', `/admin/calls?agentId=${a.agentId}&status=busy`)).calls.map((c: { id: string }) => c.id),
    [busy],
  );
  assert.equal((await ok('GET', `/admin/calls?accountId=${a.user.accountId}&direction=inbound`)).total, 0);
  assert.deepEqual(
    (await ok('GET', `/admin/calls?q=550108&accountId=${b.user.accountId}`)).calls.map((c: { id: string }) => c.id),
    [failed],
  );
  assert.equal(
    (await ok('GET', `/admin/calls?q=${encodeURIComponent(b.callerNumber)}`)).total,
    1,
    'the caller number matches too',
  );

  const createdAt = new Date(item.createdAt);
  const after = new Date(createdAt.getTime() + 1).toISOString();
  assert.equal(
    (await ok('GET', `/admin/calls?accountId=${b.user.accountId}&dateFrom=${encodeURIComponent(item.createdAt)}`))
      .total,
    1,
  );
  assert.equal(
    (await ok('GET', `/admin/calls?accountId=${b.user.accountId}&dateTo=${encodeURIComponent(item.createdAt)}`)).total,
    0,
    'dateTo is exclusive',
  );
  assert.equal(
    (await ok('GET', `/admin/calls?accountId=${b.user.accountId}&dateFrom=${encodeURIComponent(after)}`)).total,
    0,
  );

  const first = await ok('GET', '/admin/calls?limit=1');
  const second = await ok('GET', '/admin/calls?limit=1&offset=1');
  assert.equal(first.total, all.total);
  assert.equal(first.calls.length, 1);
  assert.notEqual(first.calls[0].id, second.calls[0].id);

  for (const bad of [
    'q=41',
    'q=abc',
    'status=lost',
    'accountId=nope',
    'limit=0',
    `dateFrom=${encodeURIComponent(after)}&dateTo=${encodeURIComponent(item.createdAt)}`,
  ]) {
    const response = await send(admin, 'GET', `/admin/calls?${bad}`);
    assert.equal(response.statusCode, 400, bad);
    assert.equal(errorBody(response).error, 'validation_failed');
  }
});

test('the pickers find agents and accounts by name, across accounts', async () => {
  const bob = await ok('GET', '/admin/calls/_/agents?q=bob%20b');
  assert.deepEqual(bob.agents, [
    {
      id: b.agentId,
      name: 'Bob Bot',
      accountId: b.user.accountId,
      accountName: bob.agents[0].accountName,
      deleted: false,
    },
  ]);
  const ofA = await ok('GET', `/admin/calls/_/agents?accountId=${a.user.accountId}`);
  assert.deepEqual(
    ofA.agents.map((agent: { id: string }) => agent.id),
    [a.agentId],
  );
  const paged = await ok('GET', '/admin/calls/_/agents?limit=1');
  assert.ok(paged.total >= 2);
  assert.equal(paged.agents.length, 1);

  const accounts = await ok('GET', '/admin/calls/_/accounts?limit=500');
  const accountB = accounts.accounts.find((account: { id: string }) => account.id === b.user.accountId);
  assert.equal(accountB.name, bob.agents[0].accountName);
  const found = await ok('GET', `/admin/calls/_/accounts?q=${encodeURIComponent(b.user.email.slice(0, 12))}`);
  assert.deepEqual(found.accounts, [accountB]);
  assert.equal(
    (await send(admin, 'GET', '/admin/calls/_/accounts?q=ab')).statusCode,
    400,
    'search text has 3 characters or more',
  );
});

test("the admin reads any account's call, its timeline, and no capture for a simulated call", async () => {
  const [item] = (await ok('GET', `/admin/calls?accountId=${b.user.accountId}`)).calls;
  const detail = await ok('GET', `/admin/calls/${item.id}`);
  const own = await api(kit.t, b.user).ok('GET', `/calls/${item.id}`);
  assert.deepEqual(detail, { ...own, accountId: b.user.accountId, accountName: item.accountName });
  const events = await ok('GET', `/admin/calls/${item.id}/events`);
  assert.deepEqual(events.events, (await callEvents(kit.t, b.user, item.id)).slice(0, 25));
  assert.equal(events.events[0].type, 'call.queued');

  const capture = await send(admin, 'GET', `/admin/calls/${item.id}/capture.pcap.gz`);
  assert.equal(capture.statusCode, 404);
  assert.equal(errorBody(capture).error, 'no_capture');
  assert.equal(
    errorBody(capture).message,
    "This call has no packet capture: this deployment's voice provider, the simulated network, records no packets",
  );

  const missing = '00000000-0000-4000-8000-00000000dead';
  for (const url of [
    `/admin/calls/${missing}`,
    `/admin/calls/${missing}/events`,
    `/admin/calls/${missing}/capture.pcap.gz`,
  ]) {
    const response = await send(admin, 'GET', url);
    assert.equal(response.statusCode, 404, url);
    assert.equal(errorBody(response).error, 'not_found');
  }
  for (const method of ['inject', 'hangup'] as const) {
    const response = await send(
      admin,
      'POST',
      `/admin/calls/${missing}/${method}`,
      method === 'inject' ? { text: 'Hi' } : undefined,
    );
    assert.equal(response.statusCode, 404);
  }
});

test('the admin has the agent of a live call say words, then hangs it up; an ended call answers 409', async () => {
  let callId: string;
  try {
    callId = await placeHeldCall(a, '+14155550110');
    for (const text of ['   ', '']) {
      const blank = await send(admin, 'POST', `/admin/calls/${callId}/inject`, { text });
      assert.equal(blank.statusCode, 400);
      assert.equal(errorBody(blank).error, 'validation_failed');
    }
    const injected = await ok('POST', `/admin/calls/${callId}/inject`, { text: 'A supervisor has joined the call.' });
    assert.deepEqual(injected, { callId, status: 'connected', requested: true });
    await stepUntil(callId, saidByAgent('A supervisor has joined the call.'));

    const hungUp = await ok('POST', `/admin/calls/${callId}/hangup`);
    assert.deepEqual(hungUp, { callId, status: 'connected', requested: true });
    const ended = await waitForCall(kit.t, a.user, callId);
    assert.equal(ended.status, 'completed');
    assert.equal(ended.endReason, 'operator_hangup');
  } finally {
    kit.pauses.release();
  }

  const again = await send(admin, 'POST', `/admin/calls/${callId}/hangup`);
  assert.equal(again.statusCode, 409);
  assert.match(errorBody(again).message, /already ended/);
  const late = await send(admin, 'POST', `/admin/calls/${callId}/inject`, { text: 'Still there?' });
  assert.equal(late.statusCode, 409);
  assert.match(errorBody(late).message, /connected call/);
});

test("a test call uses the agent of any account, goes out from its number, and is in that account's audit log", async () => {
  // The account's second number is the one assigned to the agent: the test call goes out from it.
  const own = api(kit.t, b.user);
  const assigned = await own.ok('POST', '/phone-numbers', { number: '+14155553999' });
  await own.ok('PATCH', `/phone-numbers/${assigned.id}`, { agentId: b.agentId });

  const placed = await ok('POST', '/admin/test-call', { agentId: b.agentId, toNumber: '+14155550106' });
  assert.equal(placed.status, 'queued');
  assert.equal(placed.accountId, b.user.accountId);
  assert.equal(placed.fromNumber, '+14155553999');
  const call = await waitForCall(kit.t, b.user, placed.callId);
  assert.equal(call.agentId, b.agentId);
  assert.equal(call.fromNumber, '+14155553999');
  assert.equal(call.toNumber, '+14155550106');
  assert.equal(call.contactId, null);
  assert.equal(call.status, 'busy');

  let audited: { type: string; actor: { userId: string | null }; subject: { id: string } } | undefined;
  for (let i = 0; i < 200 && !audited; i++) {
    const log = await own.ok('GET', '/audit-events?type=call.test_placed');
    audited = log.auditEvents.find((event: { subject: { id: string } }) => event.subject.id === placed.callId);
    if (!audited) await sleep(50);
  }
  assert.ok(audited, 'the audit log records the test call');
  assert.equal(audited.actor.userId, adminUser.userId);
});

test('a test call is refused, with nothing written, for an unknown or inactive agent, a DNC number, or an account without numbers', async () => {
  const before = (await ok('GET', '/admin/calls?limit=1')).total;
  const refuse = async (body: unknown, status: number, error: string) => {
    const response = await send(admin, 'POST', '/admin/test-call', body);
    assert.equal(response.statusCode, status, response.body);
    assert.equal(errorBody(response).error, error);
  };
  await refuse({ agentId: '00000000-0000-4000-8000-00000000dead', toNumber: '+14155550100' }, 404, 'not_found');
  await refuse({ agentId: a.agentId, toNumber: '4155550100' }, 400, 'validation_failed');
  await refuse({ agentId: a.agentId }, 400, 'validation_failed');
  await refuse({ agentId: a.agentId, toNumber: '+14155550100', extra: 1 }, 400, 'validation_failed');

  const paused = await api(kit.t, a.user).ok('POST', '/agents', { name: 'Paused Pat', status: 'paused' });
  await refuse({ agentId: paused.id, toNumber: '+14155550100' }, 409, 'conflict');

  await api(kit.t, a.user).ok('POST', '/dnc', { phone: '+14155550199' });
  await refuse({ agentId: a.agentId, toNumber: '+14155550199' }, 409, 'dnc_listed');

  const numberless = await signUp(kit.t.app);
  const agent = await api(kit.t, numberless).ok('POST', '/agents', { name: 'Lonely', status: 'active' });
  const response = await send(admin, 'POST', '/admin/test-call', { agentId: agent.id, toNumber: '+14155550100' });
  assert.equal(response.statusCode, 409);
  assert.match(errorBody(response).message, /no phone number to call from/);

  assert.equal((await ok('GET', '/admin/calls?limit=1')).total, before, 'no call was written');
});

test('inject and hang up reach a call run by another instance of the deployment (PostgreSQL)', {
  skip: !process.env.DATABASE_URL && 'needs DATABASE_URL: the embedded database has one instance',
}, async () => {
  // A second instance on the same database (and Redis prefix), running no workers: the call runs on the first.
  const other: TestApp = await buildTestApp({
    database,
    redisKeyPrefix,
    clock: kit.clock,
    env: { TTS_PROVIDER: 'none' },
  });
  try {
    assert.notEqual(other.services.calls, kit.t.services.calls);
    const callId = await placeHeldCall(a, '+14155550110');
    const viaOther = (method: 'inject' | 'hangup', payload?: unknown) =>
      other.app.inject({
        method: 'POST',
        url: `/api/v1/admin/calls/${callId}/${method}`,
        headers: admin.headers,
        ...(payload ? { payload: payload as object } : {}),
      });
    const injected = await viaOther('inject', { text: 'Words sent from the other instance.' });
    assert.equal(injected.statusCode, 200, injected.body);
    await stepUntil(callId, saidByAgent('Words sent from the other instance.'));
    const hungUp = await viaOther('hangup');
    assert.equal(hungUp.statusCode, 200, hungUp.body);
    const ended = await waitForCall(kit.t, a.user, callId);
    assert.equal(ended.endReason, 'operator_hangup');
  } finally {
    kit.pauses.release();
    await other.close();
  }
});

// Last: it closes the server.
test('closing the server hangs up its live calls as server_shutdown, with their costs to that moment', async () => {
  const callId = await placeHeldCall(a, '+14155550100');
  // Some seconds into the conversation: both sides have spoken.
  await stepUntil(callId, (call) => call.transcript.length >= 2);
  await kit.t.app.close();
  const call = await kit.t.services.calls.detail(a.user.accountId, callId);
  assert.equal(call.status, 'completed');
  assert.equal(call.endReason, 'server_shutdown');
  assert.ok(call.endedAt);
  assert.ok(call.durationSeconds! > 0);
  assert.ok(
    call.costItems.some((item) => item.kind === 'telephony'),
    `telephony minutes are charged: ${JSON.stringify(call)}`,
  );
  const events = await kit.t.services.calls.eventsOfCall(a.user.accountId, callId, { limit: 500, offset: 0 });
  assert.equal(events.events.at(-1)!.type, 'call.completed');
});
