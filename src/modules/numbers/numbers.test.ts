import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { buildTestApp, errorBody, signUp, type SignedUp, type TestApp } from '../../../test/helpers.js';
import { startJobWorkers } from '../../jobs/workers.js';

let t: TestApp;
// Each reading of the clock is a millisecond later than the last, so "newest first" never ties.
let ticks = 0;
before(async () => (t = await buildTestApp({ clock: { now: () => new Date(Date.now() + ticks++) } })));
after(() => t.close());

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';
const call = (who: SignedUp, method: Method, url: string, payload?: unknown) =>
  t.app.inject({
    method,
    url: `/api/v1${url}`,
    headers: who.headers,
    ...(payload === undefined ? {} : { payload: payload as object }),
  });

async function ok(who: SignedUp, method: Method, url: string, payload?: unknown) {
  const response = await call(who, method, url, payload);
  assert.equal(response.statusCode, 200, `${method} ${url}: ${response.body}`);
  return response.json();
}

const addNumber = (who: SignedUp, number: string) => ok(who, 'POST', '/phone-numbers', { number });
const createAgent = (who: SignedUp, name = 'Receptionist') => ok(who, 'POST', '/agents', { name });
const agentOf = async (who: SignedUp, id: string) =>
  (await ok(who, 'GET', `/agents/${id}`)) as { inboundDid: string | null };
const numberRows = (accountId: string) =>
  t.infra.database.db.selectFrom('phone_numbers').selectAll().where('account_id', '=', accountId).execute();
const eventTypes = async (accountId: string) =>
  (
    await t.infra.database.db
      .selectFrom('domain_events')
      .select(['type', 'data'])
      .where('account_id', '=', accountId)
      .orderBy('occurred_at')
      .execute()
  ).filter((e) => e.type.startsWith('phone_number.'));

test('adding a number the account owns: normalized to E.164, listed with its country and area code', async () => {
  const user = await signUp(t.app);
  const added = await addNumber(user, '(415) 555-2671');
  assert.deepEqual(
    { ...added, id: undefined, createdAt: undefined, updatedAt: undefined },
    {
      id: undefined,
      number: '+14155552671',
      country: 'US',
      areaCode: '415',
      capabilities: ['voice'],
      agentId: null,
      source: 'byo',
      monthlyFeeUsd: '0.00',
      reputation: null,
      createdAt: undefined,
      updatedAt: undefined,
    },
  );
  const london = await addNumber(user, '+44 20 7946 0958');
  assert.equal(london.number, '+442079460958');
  assert.equal(london.country, 'GB');
  assert.equal(london.areaCode, null, 'outside +1 the area code of a brought number is not known');

  const list = await ok(user, 'GET', '/phone-numbers');
  assert.equal(list.total, 2);
  assert.deepEqual(
    list.phoneNumbers.map((n: { number: string }) => n.number),
    ['+442079460958', '+14155552671'],
  );
  const page = await ok(user, 'GET', '/phone-numbers?limit=1&offset=1');
  assert.deepEqual([page.phoneNumbers.length, page.total, page.limit, page.offset], [1, 2, 1, 1]);
  assert.equal(page.phoneNumbers[0].number, '+14155552671');
  assert.deepEqual(
    (await eventTypes(user.accountId)).map((e) => e.type),
    ['phone_number.added', 'phone_number.added'],
  );
});

test('bad numbers are a 400 naming the field, and write nothing', async () => {
  const user = await signUp(t.app);
  const bad: unknown[] = [
    { number: '+1415555' },
    { number: '+999123456789' },
    { number: 'not a phone' },
    { number: '+1 415 555\u00002671' },
    { number: 'tel:+14155552671' },
    { number: '+1 (415) 555-2671 x12' },
    { number: '' },
    { number: '+8008001234' },
    { number: 14155552671 },
    { number: '+14155552671', agentId: null },
    {},
  ];
  for (const payload of bad) {
    const response = await call(user, 'POST', '/phone-numbers', payload);
    assert.equal(response.statusCode, 400, `${JSON.stringify(payload)}: ${response.body}`);
    const body = errorBody(response);
    assert.equal(body.error, 'validation_failed');
    assert.ok((body.details.fields as Array<{ field: string }>)[0]!.field.startsWith('body'), JSON.stringify(body));
  }
  const tooShort = errorBody(await call(user, 'POST', '/phone-numbers', { number: '+1415555' }));
  assert.match(tooShort.message, /body\/number is not a valid phone number/);
  const global = errorBody(await call(user, 'POST', '/phone-numbers', { number: '+80012345678' }));
  assert.match(global.message, /belongs to no country/);
  assert.deepEqual(await numberRows(user.accountId), []);
  assert.deepEqual(await eventTypes(user.accountId), []);
});

test('a number belongs to one account on the whole platform: a second one adding it gets 409', async () => {
  const alice = await signUp(t.app);
  const bob = await signUp(t.app);
  const added = await addNumber(alice, '+12125550147');
  const again = await call(alice, 'POST', '/phone-numbers', { number: '212-555-0147' });
  assert.equal(again.statusCode, 409);
  assert.deepEqual(errorBody(again), {
    error: 'conflict',
    message: "+12125550147 is already one of this account's numbers",
    details: { number: '+12125550147', id: added.id },
  });
  const theirs = await call(bob, 'POST', '/phone-numbers', { number: '+1 212 555 0147' });
  assert.equal(theirs.statusCode, 409);
  assert.deepEqual(errorBody(theirs), {
    error: 'conflict',
    message: '+12125550147 is already registered to another account',
    details: { number: '+12125550147' },
  });
  assert.equal((await numberRows(bob.accountId)).length, 0);
  assert.equal((await ok(bob, 'GET', '/phone-numbers')).total, 0);
});

test("assigning routes the number to the agent; the agent's inboundDid follows", async () => {
  const user = await signUp(t.app);
  const number = await addNumber(user, '+14155550111');
  const agent = await createAgent(user);
  const assigned = await ok(user, 'PATCH', `/phone-numbers/${number.id}`, { agentId: agent.id });
  assert.equal(assigned.agentId, agent.id);
  assert.equal((await agentOf(user, agent.id)).inboundDid, '+14155550111');
  const listed = (await ok(user, 'GET', '/agents')).agents[0];
  assert.equal(listed.inboundDid, '+14155550111');

  const same = await ok(user, 'PATCH', `/phone-numbers/${number.id}`, { agentId: agent.id });
  assert.equal(same.updatedAt, assigned.updatedAt, 'assigning the same agent again changes nothing');

  const cleared = await ok(user, 'PATCH', `/phone-numbers/${number.id}`, { agentId: null });
  assert.equal(cleared.agentId, null);
  assert.equal((await agentOf(user, agent.id)).inboundDid, null);

  const events = await eventTypes(user.accountId);
  assert.deepEqual(
    events.map((e) => [e.type, e.data.agentId ?? null, e.data.previousAgentId ?? null]),
    [
      ['phone_number.added', null, null],
      ['phone_number.assigned', agent.id, null],
      ['phone_number.assigned', null, agent.id],
    ],
  );
});

test('an agent has one inbound number: assigning it a second moves it; moving a number moves its agent', async () => {
  const user = await signUp(t.app);
  const first = await addNumber(user, '+14155550121');
  const second = await addNumber(user, '+14155550122');
  const sally = await createAgent(user, 'Sally');
  const tom = await createAgent(user, 'Tom');

  await ok(user, 'PATCH', `/phone-numbers/${first.id}`, { agentId: sally.id });
  await ok(user, 'PATCH', `/phone-numbers/${second.id}`, { agentId: sally.id });
  const byNumber = async () =>
    Object.fromEntries(
      (await ok(user, 'GET', '/phone-numbers')).phoneNumbers.map((n: { number: string; agentId: string | null }) => [
        n.number,
        n.agentId,
      ]),
    );
  assert.deepEqual(await byNumber(), { '+14155550121': null, '+14155550122': sally.id });
  assert.equal((await agentOf(user, sally.id)).inboundDid, '+14155550122');
  const unassigned = await ok(user, 'GET', '/phone-numbers/unassigned');
  assert.deepEqual([unassigned.total, unassigned.phoneNumbers[0].number], [1, '+14155550121']);

  // Sally's number goes to Tom: Sally has none left.
  await ok(user, 'PATCH', `/phone-numbers/${second.id}`, { agentId: tom.id });
  assert.deepEqual(await byNumber(), { '+14155550121': null, '+14155550122': tom.id });
  assert.equal((await agentOf(user, sally.id)).inboundDid, null);
  assert.equal((await agentOf(user, tom.id)).inboundDid, '+14155550122');

  // Tom takes the first number: his second one is freed.
  await ok(user, 'PATCH', `/phone-numbers/${first.id}`, { agentId: tom.id });
  assert.deepEqual(await byNumber(), { '+14155550121': tom.id, '+14155550122': null });
  assert.equal((await agentOf(user, tom.id)).inboundDid, '+14155550121');
  assert.equal((await ok(user, 'GET', '/phone-numbers/unassigned')).phoneNumbers[0].number, '+14155550122');
});

test('assignment refuses bad bodies and unknown agents, and changes nothing', async () => {
  const user = await signUp(t.app);
  const number = await addNumber(user, '+14155550131');
  const agent = await createAgent(user);
  await ok(user, 'PATCH', `/phone-numbers/${number.id}`, { agentId: agent.id });
  for (const payload of [{}, { agentId: 'nope' }, { agentId: 5 }, { agentId: agent.id, number: '+1' }]) {
    const response = await call(user, 'PATCH', `/phone-numbers/${number.id}`, payload);
    assert.equal(response.statusCode, 400, `${JSON.stringify(payload)}: ${response.body}`);
    assert.equal(errorBody(response).error, 'validation_failed');
  }
  const missing = await call(user, 'PATCH', `/phone-numbers/${number.id}`, {
    agentId: '00000000-0000-4000-8000-000000000009',
  });
  assert.equal(missing.statusCode, 404);
  assert.equal(errorBody(missing).message, 'Agent not found');
  assert.equal((await agentOf(user, agent.id)).inboundDid, '+14155550131', 'the failed move left the old agent routed');
  assert.equal((await numberRows(user.accountId))[0]!.agent_id, agent.id);
  assert.equal((await call(user, 'PATCH', '/phone-numbers/not-a-uuid', { agentId: null })).statusCode, 400);
});

test("deleting a number releases its agent's inboundDid; the number can then be added again", async () => {
  const alice = await signUp(t.app);
  const bob = await signUp(t.app);
  const number = await addNumber(alice, '+14155550141');
  const agent = await createAgent(alice);
  await ok(alice, 'PATCH', `/phone-numbers/${number.id}`, { agentId: agent.id });
  assert.deepEqual(await ok(alice, 'DELETE', `/phone-numbers/${number.id}`), { id: number.id, deleted: true });
  assert.equal((await agentOf(alice, agent.id)).inboundDid, null);
  assert.equal((await ok(alice, 'GET', '/phone-numbers')).total, 0);
  assert.equal((await call(alice, 'DELETE', `/phone-numbers/${number.id}`)).statusCode, 404);
  const released = (await eventTypes(alice.accountId)).at(-1)!;
  assert.deepEqual(released, {
    type: 'phone_number.released',
    data: { number: '+14155550141', source: 'byo', agentId: agent.id },
  });
  // Released, it is free for anyone.
  assert.equal((await addNumber(bob, '+14155550141')).number, '+14155550141');
});

test('the inbound route names the agent that takes calls to a number of the account', async () => {
  const user = await signUp(t.app);
  const other = await signUp(t.app);
  const number = await addNumber(user, '+14155550151');
  const route = (who: SignedUp, to: string) => call(who, 'GET', `/inbound/route?to=${encodeURIComponent(to)}`);

  const unrouted = await route(user, '+14155550151');
  assert.equal(unrouted.statusCode, 404);
  assert.match(errorBody(unrouted).message, /No agent takes calls to \+14155550151/);

  const agent = await createAgent(user, 'Front desk');
  await ok(user, 'PATCH', `/phone-numbers/${number.id}`, { agentId: agent.id });
  for (const to of ['+14155550151', '(415) 555-0151', '415.555.0151']) {
    const found = await route(user, to);
    assert.equal(found.statusCode, 200, `${to}: ${found.body}`);
    assert.deepEqual(found.json(), {
      number: '+14155550151',
      phoneNumberId: number.id,
      agentId: agent.id,
      agentName: 'Front desk',
      agentStatus: 'draft',
      accountId: user.accountId,
    });
  }
  // Only within the caller's account: another account's number is not found.
  const elsewhere = await route(other, '+14155550151');
  assert.equal(elsewhere.statusCode, 404);
  assert.equal(errorBody(elsewhere).message, "+14155550151 is not one of this account's numbers");
  assert.equal((await route(user, '+14155550199')).statusCode, 404);
  for (const bad of ['', 'abc', '+1415', '\u0000+14155550151'])
    assert.equal((await route(user, bad)).statusCode, 400, JSON.stringify(bad));
  assert.equal((await call(user, 'GET', '/inbound/route')).statusCode, 400);

  // What the call engine uses: the same lookup across accounts, by E.164 alone.
  assert.deepEqual(await t.services.numbers.routeInbound('+14155550151'), {
    accountId: user.accountId,
    phoneNumberId: number.id,
    number: '+14155550151',
    agentId: agent.id,
    agentName: 'Front desk',
    agentStatus: 'draft',
  });
  assert.equal(await t.services.numbers.routeInbound('+14155550199'), null);
});

test("another account's number answers 404 on every id route and is never changed", async () => {
  const alice = await signUp(t.app);
  const bob = await signUp(t.app);
  const number = await addNumber(alice, '+14155550161');
  const bobsAgent = await createAgent(bob);
  for (const [method, url, payload] of [
    ['PATCH', `/phone-numbers/${number.id}`, { agentId: bobsAgent.id }],
    ['PATCH', `/phone-numbers/${number.id}`, { agentId: null }],
    ['DELETE', `/phone-numbers/${number.id}`],
    ['POST', `/phone-numbers/${number.id}/recheck-reputation`],
  ] as Array<[Method, string, object?]>) {
    const response = await call(bob, method, url, payload);
    assert.equal(response.statusCode, 404, `${method} ${url}`);
    assert.deepEqual(errorBody(response), { error: 'not_found', message: 'Phone number not found', details: {} });
  }
  // Nor can Alice route her number to Bob's agent.
  const foreignAgent = await call(alice, 'PATCH', `/phone-numbers/${number.id}`, { agentId: bobsAgent.id });
  assert.equal(foreignAgent.statusCode, 404);
  assert.equal(errorBody(foreignAgent).message, 'Agent not found');
  assert.equal((await agentOf(bob, bobsAgent.id)).inboundDid, null);
  assert.equal((await ok(bob, 'GET', '/phone-numbers')).total, 0);
  assert.equal((await ok(bob, 'GET', '/phone-numbers/unassigned')).total, 0);
  assert.equal((await ok(bob, 'GET', '/phone-numbers/reputation')).total, 0);
  const [row] = await numberRows(alice.accountId);
  assert.equal(row!.agent_id, null);
  assert.equal(row!.reputation_checked_at, null);
});

test('numbers: anyone reads, members route, admins add, buy and release', async () => {
  const owner = await signUp(t.app);
  const number = await addNumber(owner, '+14155550171');
  const agent = await createAgent(owner);
  const asRole = async (role: 'viewer' | 'member' | 'admin') => {
    const user = await signUp(t.app);
    await t.infra.database.db
      .insertInto('memberships')
      .values({ account_id: owner.accountId, user_id: user.userId, role })
      .execute();
    const cookie = { cookie: user.cookie };
    const switched = await t.app.inject({
      method: 'POST',
      url: '/api/v1/auth/switch-account',
      headers: cookie,
      payload: { accountId: owner.accountId },
    });
    assert.equal(switched.statusCode, 200);
    return (method: Method, url: string, payload?: object) =>
      t.app.inject({ method, url: `/api/v1${url}`, headers: cookie, ...(payload ? { payload } : {}) });
  };
  const viewer = await asRole('viewer');
  const member = await asRole('member');
  assert.equal((await viewer('GET', '/phone-numbers')).statusCode, 200);
  assert.equal((await viewer('PATCH', `/phone-numbers/${number.id}`, { agentId: agent.id })).statusCode, 403);
  assert.equal((await member('PATCH', `/phone-numbers/${number.id}`, { agentId: agent.id })).statusCode, 200);
  assert.equal((await member('POST', `/phone-numbers/${number.id}/recheck-reputation`)).statusCode, 200);
  const buying = await member('POST', '/phone-numbers/inventory/purchase', { country: 'US', areaCode: '415' });
  assert.equal(buying.statusCode, 403);
  assert.equal(errorBody(buying).error, 'forbidden');
  assert.equal((await member('POST', '/phone-numbers', { number: '+14155550172' })).statusCode, 403);
  assert.equal((await member('DELETE', `/phone-numbers/${number.id}`)).statusCode, 403);
  assert.equal((await numberRows(owner.accountId)).length, 1);
});

test("deleting an agent frees its number a moment later (the agent's inboundDid is cleared at once)", async () => {
  const user = await signUp(t.app);
  const number = await addNumber(user, '+14155550181');
  const agent = await createAgent(user);
  await ok(user, 'PATCH', `/phone-numbers/${number.id}`, { agentId: agent.id });
  const workers = await startJobWorkers({
    db: t.infra.database.db,
    services: t.services,
    log: pino({ level: 'silent' }),
    pollingIntervalSeconds: 0.5,
  });
  try {
    await ok(user, 'DELETE', `/agents/${agent.id}`);
    // Routing stops at once: the number's agent is gone.
    assert.equal((await call(user, 'GET', `/inbound/route?to=${encodeURIComponent('+14155550181')}`)).statusCode, 404);
    assert.equal((await t.services.numbers.routeInbound('+14155550181'))!.agentId, null);
    let unassigned = await ok(user, 'GET', '/phone-numbers/unassigned');
    for (let i = 0; i < 300 && unassigned.total === 0; i++) {
      await sleep(100);
      unassigned = await ok(user, 'GET', '/phone-numbers/unassigned');
    }
    assert.equal(unassigned.total, 1);
    assert.equal(unassigned.phoneNumbers[0].agentId, null);
    const last = (await eventTypes(user.accountId)).at(-1)!;
    assert.deepEqual(last, {
      type: 'phone_number.assigned',
      data: { number: '+14155550181', agentId: null, previousAgentId: agent.id, reason: 'agent_deleted' },
    });
    // Delivered twice, the second delivery frees nothing.
    const event = await t.infra.database.db
      .selectFrom('domain_events')
      .select('id')
      .where('type', '=', 'agent.deleted')
      .where('subject_id', '=', agent.id)
      .executeTakeFirstOrThrow();
    assert.equal(await t.services.numbers.releaseDeletedAgent((await t.services.events.find(event.id))!), 0);
  } finally {
    await workers.stop(5_000);
  }
});
