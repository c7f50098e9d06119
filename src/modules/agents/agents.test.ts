import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { asRole, asSession, call, errorBody, signUp, type Method } from '../../../test/helpers.js';
import { buildAgent } from '../../../test/factories/index.js';
import { buildAgentsTestApp, type AgentsTestKit } from './agents.test-support.js';

let t: AgentsTestKit['t'];
let versionRows: AgentsTestKit['versionRows'];
let agentRow: AgentsTestKit['agentRow'];
before(async () => ({ t, versionRows, agentRow } = await buildAgentsTestApp()));
after(() => t.close());

const LIST_ITEM_KEYS = [
  'createdAt',
  'id',
  'inboundDid',
  'lastCallAt',
  'liveLlmId',
  'name',
  'status',
  'version',
  'voiceId',
];
const PART_NAMES = [
  'soul',
  'mission',
  'playbook',
  'examples',
  'objections',
  'closers',
  'notes',
  'faq',
  'knowledgeBase',
];

const fullAgent = {
  name: 'Dental reminders',
  soul: 'Warm, brief, never pushy.',
  mission: 'Confirm tomorrow’s appointment.',
  playbook: '1. Greet. 2. Confirm the time. 3. Offer to reschedule.',
  examples: 'Caller: who is this? Agent: Maya from Bright Smiles.',
  objections: 'Busy: offer a call back.',
  closers: 'Thank them and say goodbye.',
  notes: 'The clinic opens at 8.',
  faq: 'Parking: free, behind the building.',
  knowledgeBase: 'Bright Smiles, 12 Main St. Open Mon–Fri 8–18.',
  firstMessage: 'Hi, this is Maya from Bright Smiles.',
  voice: 'en-us+f3',
  liveLlmId: 'parley-playbook',
  transfer: { number: '+14155550123', whenToTransfer: 'When the caller asks for a person.' },
  voicemail: { action: 'leave_message', message: 'Please call us back.' },
  status: 'active',
};
test('create answers the full agent as a draft at version 1, and saves version 1', async () => {
  const owner = await signUp(t.app);
  const agent = await buildAgent(owner, { name: '  Sales agent  ', mission: 'Book a demo.' });
  assert.equal(agent.name, 'Sales agent', 'the name is trimmed');
  assert.equal(agent.status, 'draft');
  assert.equal(agent.version, 1);
  assert.equal(agent.voiceId, null);
  assert.equal(agent.liveLlmId, null);
  assert.equal(agent.inboundDid, null);
  assert.equal(agent.lastCallAt, null);
  assert.equal(agent.mission, 'Book a demo.');
  assert.equal(agent.soul, '');
  assert.equal(agent.firstMessage, '');
  assert.deepEqual(agent.transfer, { number: null, whenToTransfer: '' });
  assert.deepEqual(agent.voicemail, { action: 'hang_up', message: '' });
  assert.equal(agent.systemPrompt, '## Mission\nBook a demo.');
  assert.equal(agent.createdAt, agent.updatedAt);

  const versions = await versionRows(agent.id);
  assert.equal(versions.length, 1);
  assert.equal(versions[0]!.version, 1);
  assert.equal(versions[0]!.account_id, owner.accountId);
  assert.equal(versions[0]!.created_by_api_key_id, owner.apiKeyId);
  assert.equal(versions[0]!.created_by_user_id, null);
  assert.deepEqual(versions[0]!.changed_parts, ['mission']);
  assert.deepEqual(versions[0]!.parts, { mission: 'Book a demo.' }, 'a version stores the parts it set');
});

test('a session cookie works as well as an API key, and the version records the user', async () => {
  const owner = await signUp(t.app);
  const agent = await buildAgent(asSession(owner), { soul: 'Calm.' });
  const read = await call(owner, 'GET', `/agents/${agent.id}`);
  assert.equal(read.statusCode, 200);
  const { knowledgeIndex, ...readAgent } = read.json();
  assert.deepEqual(readAgent, agent);
  assert.deepEqual(knowledgeIndex, { chunks: 0, indexedAt: null, pending: false }, 'no knowledge, nothing to index');
  const [version] = await versionRows(agent.id);
  assert.equal(version!.created_by_user_id, owner.userId);
  assert.equal(version!.created_by_api_key_id, null);

  const patched = await call(asSession(owner), 'PATCH', `/agents/${agent.id}`, { soul: 'Calmer.' });
  assert.equal(patched.statusCode, 200);
  assert.equal(patched.json().version, 2);
  const listed = await call(asSession(owner), 'GET', '/agents');
  assert.deepEqual(
    listed.json().agents.map((a: { id: string }) => a.id),
    [agent.id],
  );
});

test('get returns every part and setting, and the system prompt with its parts in order', async () => {
  const owner = await signUp(t.app);
  const created = await buildAgent(owner, fullAgent);
  const response = await call(owner, 'GET', `/agents/${created.id}`);
  assert.equal(response.statusCode, 200);
  const { knowledgeIndex, ...agent } = response.json();
  assert.deepEqual(agent, created);
  assert.deepEqual(
    knowledgeIndex,
    { chunks: 0, indexedAt: null, pending: true },
    'the knowledge base waits for its index job',
  );
  const { voice, ...sameNames } = fullAgent;
  for (const [key, value] of Object.entries(sameNames)) assert.deepEqual(agent[key], value, key);
  assert.equal(agent.voiceId, voice);
  assert.deepEqual(
    Object.keys(agent).sort(),
    [
      ...LIST_ITEM_KEYS,
      ...PART_NAMES,
      'analysis',
      'firstMessage',
      'systemPrompt',
      'transfer',
      'updatedAt',
      'voicemail',
    ].sort(),
  );
  const headings = [...agent.systemPrompt.matchAll(/^## (.+)$/gm)].map((m) => m[1]);
  assert.deepEqual(headings, [
    'Personality',
    'Mission',
    'Playbook',
    'Examples',
    'Objection handling',
    'Closing',
    'Notes',
    'FAQ',
    'Knowledge base',
  ]);
  assert.ok(
    !agent.systemPrompt.includes(fullAgent.firstMessage),
    'the first message is spoken, not part of the system prompt',
  );
  const [version] = await versionRows(agent.id);
  assert.deepEqual(version!.changed_parts, [...PART_NAMES, 'firstMessage']);
});

test("the list has exactly the list item's fields and only the account’s agents", async () => {
  const owner = await signUp(t.app);
  const other = await signUp(t.app);
  await buildAgent(other, { name: 'Not yours' });
  const created = await buildAgent(owner, fullAgent);
  await t.infra.database.db
    .updateTable('agents')
    .set({ inbound_did: `+1415555${String(Date.now()).slice(-4)}`, last_call_at: new Date('2026-05-01T10:00:00Z') })
    .where('id', '=', created.id)
    .execute();
  const response = await call(owner, 'GET', '/agents');
  assert.equal(response.statusCode, 200);
  const body = response.json();
  assert.deepEqual(Object.keys(body).sort(), ['agents', 'limit', 'offset', 'total']);
  assert.equal(body.total, 1);
  assert.equal(body.limit, 25);
  assert.equal(body.offset, 0);
  const [item] = body.agents;
  assert.deepEqual(Object.keys(item).sort(), LIST_ITEM_KEYS);
  assert.equal(item.id, created.id);
  assert.equal(item.status, 'active');
  assert.equal(item.voiceId, 'en-us+f3');
  assert.equal(item.liveLlmId, 'parley-playbook');
  assert.match(item.inboundDid, /^\+1415555\d{4}$/);
  assert.equal(item.lastCallAt, '2026-05-01T10:00:00.000Z');
});

test('paging and the status filter, with total', async () => {
  const owner = await signUp(t.app);
  const statuses = ['draft', 'active', 'paused', 'active', 'draft', 'active', 'draft'];
  for (const [i, status] of statuses.entries()) await buildAgent(owner, { name: `Agent ${i}`, status });

  const all = (await call(owner, 'GET', '/agents?limit=500')).json();
  assert.equal(all.total, 7);
  const createdAts = all.agents.map((a: { createdAt: string }) => a.createdAt);
  assert.deepEqual(createdAts, [...createdAts].sort().reverse(), 'newest first');

  const pages = [];
  for (let offset = 0; offset < 9; offset += 3) {
    const page = (await call(owner, 'GET', `/agents?limit=3&offset=${offset}`)).json();
    assert.equal(page.total, 7);
    assert.equal(page.limit, 3);
    assert.equal(page.offset, offset);
    pages.push(...page.agents);
  }
  assert.deepEqual(
    pages.map((a) => a.id),
    all.agents.map((a: { id: string }) => a.id),
    'pages cover the list once, in order',
  );

  const active = (await call(owner, 'GET', '/agents?status=active&limit=2')).json();
  assert.equal(active.total, 3);
  assert.equal(active.agents.length, 2);
  assert.ok(active.agents.every((a: { status: string }) => a.status === 'active'));
  const paused = (await call(owner, 'GET', '/agents?status=paused')).json();
  assert.equal(paused.total, 1);

  for (const [query, field] of [
    ['limit=0', 'querystring/limit'],
    ['limit=501', 'querystring/limit'],
    ['offset=-1', 'querystring/offset'],
    ['limit=abc', 'querystring/limit'],
    ['status=archived', 'querystring/status'],
    ['sort=name', 'querystring/sort'],
  ]) {
    const response = await call(owner, 'GET', `/agents?${query}`);
    assert.equal(response.statusCode, 400, query);
    const error = errorBody(response);
    assert.equal(error.error, 'validation_failed');
    assert.ok(
      (error.details.fields as Array<{ field: string }>).some((f) => f.field === field),
      `${query}: ${response.body}`,
    );
  }
});

test('status moves freely among draft, active and paused; any other value is 400 and changes nothing', async () => {
  const owner = await signUp(t.app);
  const agent = await buildAgent(owner);
  for (const status of ['active', 'paused', 'active', 'draft', 'paused', 'draft', 'active']) {
    const response = await call(owner, 'PATCH', `/agents/${agent.id}`, { status });
    assert.equal(response.statusCode, 200);
    assert.equal(response.json().status, status);
    assert.equal(response.json().version, 1);
  }
  for (const status of ['archived', 'ACTIVE', '', null, 1]) {
    const response = await call(owner, 'PATCH', `/agents/${agent.id}`, { status });
    assert.equal(response.statusCode, 400, String(status));
    const error = errorBody(response);
    assert.equal(error.error, 'validation_failed');
    assert.deepEqual(error.details.fields, [
      { field: 'body/status', message: 'must be one of: draft, active, paused' },
    ]);
    assert.match(error.message, /body\/status must be one of: draft, active, paused/);
  }
  const created = await call(owner, 'POST', '/agents', { name: 'x', status: 'deleted' });
  assert.equal(created.statusCode, 400);
  assert.equal((await agentRow(agent.id)).status, 'active');
  assert.equal((await call(owner, 'GET', '/agents')).json().total, 1);
});

test('delete hides the agent, releases its number, and keeps the row for past calls', async () => {
  const owner = await signUp(t.app);
  const agent = await buildAgent(owner, { name: 'Retired agent', status: 'active' });
  const keeper = await buildAgent(owner, { name: 'Keeper' });
  const did = `+1202555${String(Date.now()).slice(-4)}`;
  await t.infra.database.db.updateTable('agents').set({ inbound_did: did }).where('id', '=', agent.id).execute();

  const deleted = await call(owner, 'DELETE', `/agents/${agent.id}`);
  assert.equal(deleted.statusCode, 200);
  assert.deepEqual(deleted.json(), { id: agent.id, deleted: true });

  for (const [method, url, payload] of [
    ['GET', `/agents/${agent.id}`],
    ['PATCH', `/agents/${agent.id}`, { mission: 'Back again' }],
    ['DELETE', `/agents/${agent.id}`],
    ['GET', `/agents/${agent.id}/versions`],
    ['GET', `/agents/${agent.id}/versions/1`],
  ] as Array<[Method, string, object?]>) {
    const response = await call(owner, method, url, payload);
    assert.equal(response.statusCode, 404, `${method} ${url}`);
    assert.deepEqual(errorBody(response), { error: 'not_found', message: 'Agent not found', details: {} });
  }
  const list = (await call(owner, 'GET', '/agents')).json();
  assert.deepEqual(
    list.agents.map((a: { id: string }) => a.id),
    [keeper.id],
  );
  assert.equal(list.total, 1);

  const row = await agentRow(agent.id);
  assert.equal(row.name, 'Retired agent', 'the row stays, so calls can still show the name');
  assert.ok(row.deleted_at);
  assert.equal(row.inbound_did, null);
  assert.equal(row.version, 1, 'the refused PATCH wrote nothing');
  assert.equal((await versionRows(agent.id)).length, 1, 'its history stays with it');
  // The released number can route to another agent.
  await t.infra.database.db.updateTable('agents').set({ inbound_did: did }).where('id', '=', keeper.id).execute();
  assert.equal((await call(owner, 'GET', `/agents/${keeper.id}`)).json().inboundDid, did);
});

test('a too-long field is 400 naming it; a body over the size limit is 413; neither writes', async () => {
  const owner = await signUp(t.app);
  const agent = await buildAgent(owner);
  const atLimit = await call(owner, 'PATCH', `/agents/${agent.id}`, {
    knowledgeBase: 'k'.repeat(200_000),
    soul: 's'.repeat(20_000),
  });
  assert.equal(atLimit.statusCode, 200, 'exactly at the limits is accepted');
  assert.equal(atLimit.json().version, 2);

  for (const [payload, field] of [
    [{ soul: 's'.repeat(20_001) }, 'body/soul'],
    [{ faq: 'f'.repeat(20_001) }, 'body/faq'],
    [{ knowledgeBase: 'k'.repeat(200_001) }, 'body/knowledgeBase'],
    [{ firstMessage: 'h'.repeat(2_001) }, 'body/firstMessage'],
    [{ name: 'n'.repeat(121) }, 'body/name'],
    [{ transfer: { whenToTransfer: 'w'.repeat(2_001) } }, 'body/transfer/whenToTransfer'],
  ] as Array<[object, string]>) {
    const response = await call(owner, 'PATCH', `/agents/${agent.id}`, payload);
    assert.equal(response.statusCode, 400, field);
    const error = errorBody(response);
    assert.equal(error.error, 'validation_failed');
    assert.deepEqual(
      (error.details.fields as Array<{ field: string }>).map((f) => f.field),
      [field],
    );
  }

  const huge = { name: 'Huge', knowledgeBase: 'k'.repeat(t.config.jsonBodyLimitBytes + 1) };
  for (const [method, url] of [
    ['POST', '/agents'],
    ['PATCH', `/agents/${agent.id}`],
  ] as Array<[Method, string]>) {
    const response = await call(owner, method, url, huge);
    assert.equal(response.statusCode, 413);
    assert.equal(errorBody(response).error, 'payload_too_large');
  }
  assert.equal((await agentRow(agent.id)).version, 2);
  assert.equal((await versionRows(agent.id)).length, 2);
  assert.equal((await call(owner, 'GET', '/agents')).json().total, 1);
});

test('wrong types, unknown fields, a missing name and bad settings are 400 and write nothing', async () => {
  const owner = await signUp(t.app);
  const agent = await buildAgent(owner, { mission: 'Keep me.' });

  for (const [payload, field] of [
    [{}, 'body/name'],
    [{ name: 5 }, 'body/name'],
    [{ name: '' }, 'body/name'],
    [{ name: '   ' }, 'body/name'],
    [{ name: 'x', mission: 42 }, 'body/mission'],
    [{ name: 'x', knowledge: 'the column name is not the API name' }, 'body/knowledge'],
    [{ name: 'x', voiceId: 'alloy' }, 'body/voiceId'],
    [{ name: 'x', version: 7 }, 'body/version'],
    [{ name: 'x', transfer: { number: '4155550123' } }, 'body/transfer/number'],
    [{ name: 'x', transfer: { number: '+0155550123' } }, 'body/transfer/number'],
    [{ name: 'x', transfer: '+14155550123' }, 'body/transfer'],
    [{ name: 'x', transfer: { phone: '+14155550123' } }, 'body/transfer/phone'],
    [{ name: 'x', voicemail: { action: 'sing' } }, 'body/voicemail/action'],
    [{ name: 'x', voicemail: { action: 'leave_message' } }, 'body/voicemail/message'],
    [{ name: 'x', voicemail: { action: 'leave_message', message: '  ' } }, 'body/voicemail/message'],
  ] as Array<[object, string]>) {
    const response = await call(owner, 'POST', '/agents', payload);
    assert.equal(response.statusCode, 400, JSON.stringify(payload));
    const error = errorBody(response);
    assert.equal(error.error, 'validation_failed');
    assert.ok(
      (error.details.fields as Array<{ field: string }>).some((f) => f.field === field),
      `${JSON.stringify(payload)}: ${response.body}`,
    );
    const patch = await call(owner, 'PATCH', `/agents/${agent.id}`, {
      ...payload,
      name: (payload as { name?: unknown }).name ?? 5,
    });
    assert.equal(patch.statusCode, 400, `PATCH ${JSON.stringify(payload)}`);
  }
  const notJson = await t.app.inject({
    method: 'POST',
    url: '/api/v1/agents',
    headers: { ...owner.headers, 'content-type': 'application/json' },
    payload: '{"name": ',
  });
  assert.equal(notJson.statusCode, 400);
  assert.equal(errorBody(notJson).error, 'invalid_json');
  const badId = await call(owner, 'PATCH', '/agents/not-a-uuid', { mission: 'x' });
  assert.equal(badId.statusCode, 400);
  assert.equal((errorBody(badId).details.fields as Array<{ field: string }>)[0]!.field, 'params/id');

  assert.equal((await call(owner, 'GET', '/agents')).json().total, 1);
  const row = await agentRow(agent.id);
  assert.equal(row.name, 'Sales agent');
  assert.equal(row.mission, 'Keep me.');
  assert.equal(row.version, 1);
  assert.equal((await versionRows(agent.id)).length, 1);
});

test('missing or bad credentials are 401 on every agents route', async () => {
  const owner = await signUp(t.app);
  const agent = await buildAgent(owner);
  const routes: Array<[Method, string]> = [
    ['GET', '/agents'],
    ['POST', '/agents'],
    ['GET', `/agents/${agent.id}`],
    ['PATCH', `/agents/${agent.id}`],
    ['DELETE', `/agents/${agent.id}`],
    ['GET', `/agents/${agent.id}/versions`],
    ['GET', `/agents/${agent.id}/versions/1`],
  ];
  for (const headers of [{}, { authorization: 'Bearer va_nope' }, { cookie: 'vsid=stale' }] as Array<
    Record<string, string>
  >) {
    for (const [method, url] of routes) {
      const response = await call(
        { app: t.app, headers },
        method,
        url,
        method === 'POST' || method === 'PATCH' ? { name: 'Intruder' } : undefined,
      );
      assert.equal(response.statusCode, 401, `${method} ${url} ${JSON.stringify(headers)}`);
      assert.equal(errorBody(response).error, 'unauthorized');
    }
  }
  const row = await agentRow(agent.id);
  assert.equal(row.name, 'Sales agent');
  assert.equal(row.deleted_at, null);
  assert.equal((await call(owner, 'GET', '/agents')).json().total, 1);
});

test('a viewer can read agents but not create, change or delete them', async () => {
  const owner = await signUp(t.app);
  const agent = await buildAgent(owner);
  const viewer = await asRole(t, owner, 'viewer');

  assert.equal((await call(viewer, 'GET', '/agents')).json().total, 1);
  assert.equal((await call(viewer, 'GET', `/agents/${agent.id}`)).statusCode, 200);
  assert.equal((await call(viewer, 'GET', `/agents/${agent.id}/versions`)).statusCode, 200);
  for (const [method, url, payload] of [
    ['POST', '/agents', { name: 'Mine now' }],
    ['PATCH', `/agents/${agent.id}`, { mission: 'Changed' }],
    ['DELETE', `/agents/${agent.id}`],
  ] as Array<[Method, string, object?]>) {
    const response = await call(viewer, method, url, payload);
    assert.equal(response.statusCode, 403, `${method} ${url}`);
    assert.equal(errorBody(response).error, 'forbidden');
  }
  const row = await agentRow(agent.id);
  assert.equal(row.mission, '');
  assert.equal(row.deleted_at, null);
  assert.equal((await call(owner, 'GET', '/agents')).json().total, 1);
});

test("another account's agent answers 404 everywhere, is not listed and is not changed", async () => {
  const alice = await signUp(t.app);
  const bob = await signUp(t.app);
  const agent = await buildAgent(alice, { mission: 'Alice’s mission.' });
  await buildAgent(bob, { name: 'Bob’s agent' });

  for (const [method, url, payload] of [
    ['GET', `/agents/${agent.id}`],
    ['PATCH', `/agents/${agent.id}`, { mission: 'Stolen', status: 'paused' }],
    ['DELETE', `/agents/${agent.id}`],
    ['GET', `/agents/${agent.id}/versions`],
    ['GET', `/agents/${agent.id}/versions/1`],
  ] as Array<[Method, string, object?]>) {
    for (const who of [bob, asSession(bob)]) {
      const response = await call(who, method, url, payload);
      assert.equal(response.statusCode, 404, `${method} ${url}`);
      assert.deepEqual(errorBody(response), { error: 'not_found', message: 'Agent not found', details: {} });
    }
  }
  const bobList = (await call(bob, 'GET', '/agents?limit=500')).json();
  assert.equal(bobList.total, 1);
  assert.ok(!bobList.agents.some((a: { id: string }) => a.id === agent.id));

  const unchanged = await call(alice, 'GET', `/agents/${agent.id}`);
  assert.equal(unchanged.statusCode, 200);
  const { knowledgeIndex: _index, ...unchangedAgent } = unchanged.json();
  assert.deepEqual(unchangedAgent, agent);
  assert.equal((await versionRows(agent.id)).length, 1);
});
