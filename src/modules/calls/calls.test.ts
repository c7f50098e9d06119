import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import {
  buildTestApp,
  call,
  errorBody,
  signUp,
  type Caller,
  type SignedUp,
  type TestApp,
} from '../../../test/helpers.js';
import { buildAgent, buildCall, buildContact, type SeededCall } from '../../../test/factories/index.js';
import { newId } from '../../lib/ids.js';
import type { CallStatus } from './calls.tables.js';

let t: TestApp;
let alice: SignedUp;
let bob: SignedUp;

/** Alice's account: two agents, two contacts, one campaign and 28 calls one minute apart, oldest first. */
const base = new Date('2026-03-02T09:00:00.000Z');
const minute = (i: number) => new Date(base.getTime() + i * 60_000);
const campaignId = newId();
const statuses: CallStatus[] = [
  'completed',
  'failed',
  'busy',
  'no_answer',
  'connected',
  'dialing',
  'ringing',
  'queued',
];
let seeded: SeededCall[] = [];
let agents: { id: string; name: string }[] = [];
let contacts: { id: string; firstName: string | null; lastName: string | null; phone: string }[] = [];

const get = (url: string, who: Caller = alice) => call(who, 'GET', url);

before(async () => {
  t = await buildTestApp({ env: { RATE_LIMIT_PER_MINUTE: '100000' } });
  alice = await signUp(t.app);
  bob = await signUp(t.app);
  agents = [
    await buildAgent(t, { accountId: alice.accountId, name: 'Sales Sally' }),
    await buildAgent(t, { accountId: alice.accountId, name: 'Support Sam' }),
  ];
  contacts = [
    await buildContact(alice, { firstName: 'Ada', lastName: 'Lovelace', phone: '+14155550101' }),
    await buildContact(alice, { firstName: 'Grace', lastName: null, phone: '+14155550102' }),
  ];
  seeded = [];
  for (let i = 0; i < 28; i++) {
    const status = statuses[i % statuses.length]!;
    const direction = i % 5 === 0 ? 'inbound' : 'outbound';
    const contact = i % 3 === 0 ? null : contacts[i % 3 === 1 ? 0 : 1]!;
    seeded.push(
      await buildCall(alice, {
        status,
        direction,
        agentId: i % 7 === 6 ? null : agents[i % 2]!.id,
        contactId: contact?.id ?? null,
        campaignId: i % 4 === 0 ? campaignId : null,
        fromNumber: direction === 'inbound' ? (contact?.phone ?? '+442071838750') : '+14155550000',
        toNumber: direction === 'inbound' ? '+14155550000' : (contact?.phone ?? '+33142685300'),
        // Every other completed call has no recording.
        recordingStorageKey: status === 'completed' && i % 16 === 0 ? `recordings/${i}.wav` : null,
        createdAt: minute(i),
      }),
    );
  }
  // Bob has a call too, which Alice must never see.
  await buildCall(bob, { createdAt: minute(3) });
});
after(() => t.close());

interface Filters {
  campaignId?: string;
  contactId?: string;
  agentId?: string;
  status?: string;
  hasRecording?: 'true' | 'false';
  dateFrom?: string;
  dateTo?: string;
}

/** What GET /v1/calls should answer for Alice, computed from what was seeded. */
function expectedIds(filters: Filters): string[] {
  return seeded
    .filter((c) => filters.campaignId === undefined || c.campaign_id === filters.campaignId)
    .filter((c) => filters.contactId === undefined || c.contact_id === filters.contactId)
    .filter((c) => filters.agentId === undefined || c.agent_id === filters.agentId)
    .filter((c) => filters.status === undefined || c.status === filters.status)
    .filter(
      (c) =>
        filters.hasRecording === undefined || (c.recording_storage_key !== null) === (filters.hasRecording === 'true'),
    )
    .filter((c) => filters.dateFrom === undefined || c.created_at >= new Date(filters.dateFrom))
    .filter((c) => filters.dateTo === undefined || c.created_at < new Date(filters.dateTo))
    .sort((a, b) => b.created_at.getTime() - a.created_at.getTime())
    .map((c) => c.id);
}

const query = (params: Record<string, string | number | undefined>) =>
  new URLSearchParams(Object.entries(params).filter(([, v]) => v !== undefined) as [string, string][]).toString();

const ITEM_KEYS = [
  'agentId',
  'agentName',
  'contactFirstName',
  'contactId',
  'contactLastName',
  'contactPhone',
  'createdAt',
  'direction',
  'disposition',
  'durationSeconds',
  'endedAt',
  'id',
  'recordingStorageKey',
  'startedAt',
  'status',
  'totalCostUsd',
];

test('the list is newest first, only the account’s calls, with exactly the documented item fields', async () => {
  const response = await get('/api/v1/calls?limit=100');
  assert.equal(response.statusCode, 200);
  const body = response.json();
  assert.deepEqual(Object.keys(body).sort(), ['calls', 'limit', 'offset', 'total']);
  assert.equal(body.total, 28);
  assert.equal(body.limit, 100);
  assert.equal(body.offset, 0);
  assert.deepEqual(
    body.calls.map((c: { id: string }) => c.id),
    expectedIds({}),
  );
  for (const item of body.calls) assert.deepEqual(Object.keys(item).sort(), ITEM_KEYS);

  const defaults = (await get('/api/v1/calls')).json();
  assert.equal(defaults.limit, 25);
  assert.equal(defaults.offset, 0);
  assert.equal(defaults.calls.length, 25);
});

test('an item carries the contact, the agent, the far-end number, money as a string and ISO times', async () => {
  const body = (await get('/api/v1/calls?limit=100')).json();
  const byId = new Map(body.calls.map((c: { id: string }) => [c.id, c]));
  // i = 1: outbound, failed, to Ada, by Support Sam.
  const outbound = seeded[1]!;
  assert.deepEqual(byId.get(outbound.id), {
    id: outbound.id,
    contactId: contacts[0]!.id,
    contactFirstName: 'Ada',
    contactLastName: 'Lovelace',
    contactPhone: '+14155550101',
    agentId: agents[1]!.id,
    agentName: 'Support Sam',
    direction: 'outbound',
    status: 'failed',
    disposition: null,
    durationSeconds: 0,
    totalCostUsd: '0.000000',
    recordingStorageKey: null,
    startedAt: outbound.started_at!.toISOString(),
    endedAt: outbound.ended_at!.toISOString(),
    createdAt: minute(1).toISOString(),
  });
  // i = 10: inbound from Ada's number: contactPhone is the number that called.
  const inbound = seeded[10]!;
  assert.equal(inbound.direction, 'inbound');
  const inboundItem = byId.get(inbound.id) as Record<string, unknown>;
  assert.equal(inboundItem.contactPhone, '+14155550101');
  assert.equal(inboundItem.direction, 'inbound');
  // i = 0: inbound and completed, from an unknown number, with a recording and the four default cost items.
  const completed = byId.get(seeded[0]!.id) as Record<string, unknown>;
  assert.equal(completed.status, 'completed');
  assert.equal(completed.contactId, null);
  assert.equal(completed.contactFirstName, null);
  assert.equal(completed.contactPhone, '+442071838750');
  assert.equal(completed.totalCostUsd, '0.024600');
  assert.equal(completed.recordingStorageKey, 'recordings/0.wav');
  assert.equal(completed.durationSeconds, 42);
  // i = 6: no agent.
  const agentless = byId.get(seeded[6]!.id) as Record<string, unknown>;
  assert.equal(agentless.agentId, null);
  assert.equal(agentless.agentName, null);
  // A queued call is listed with its status even though `queued` is not a filter value.
  assert.equal((byId.get(seeded[7]!.id) as Record<string, unknown>).status, 'queued');
});

test('every filter alone and combined matches the seeded calls, with an exact total', async () => {
  const [sally, sam] = agents;
  const [ada, grace] = contacts;
  const cases: Filters[] = [
    { campaignId },
    { contactId: ada!.id },
    { contactId: grace!.id },
    { agentId: sally!.id },
    { agentId: sam!.id },
    ...statuses.filter((s) => s !== 'queued').map((status) => ({ status })),
    { hasRecording: 'true' },
    { hasRecording: 'false' },
    { dateFrom: minute(20).toISOString() },
    { dateTo: minute(5).toISOString() },
    { dateFrom: minute(5).toISOString(), dateTo: minute(12).toISOString() },
    { dateFrom: minute(5).toISOString(), dateTo: minute(5).toISOString() },
    { status: 'completed', hasRecording: 'true' },
    { status: 'completed', hasRecording: 'false' },
    { agentId: sally!.id, status: 'busy' },
    { agentId: sam!.id, contactId: ada!.id },
    { campaignId, status: 'completed', agentId: sally!.id },
    { contactId: grace!.id, dateFrom: minute(10).toISOString(), dateTo: minute(25).toISOString() },
    {
      campaignId,
      contactId: ada!.id,
      agentId: sally!.id,
      status: 'completed',
      hasRecording: 'true',
      dateFrom: minute(0).toISOString(),
      dateTo: minute(28).toISOString(),
    },
    { agentId: newId() },
    { campaignId: newId() },
  ];
  for (const filters of cases) {
    const response = await get(`/api/v1/calls?${query({ ...filters, limit: 500 })}`);
    assert.equal(response.statusCode, 200, JSON.stringify(filters));
    const body = response.json();
    const expected = expectedIds(filters);
    assert.deepEqual(
      body.calls.map((c: { id: string }) => c.id),
      expected,
      JSON.stringify(filters),
    );
    assert.equal(body.total, expected.length, JSON.stringify(filters));
  }
  // The cases above must not be vacuous.
  assert.ok(expectedIds({ campaignId, status: 'completed', agentId: sally!.id }).length > 0);
  assert.ok(expectedIds({ status: 'completed', hasRecording: 'true' }).length > 0);
  assert.ok(expectedIds({ status: 'completed', hasRecording: 'false' }).length > 0);
});

test('dateFrom is inclusive and dateTo exclusive, to the millisecond; dateFrom after dateTo is 400', async () => {
  const at = minute(9).toISOString();
  const from = (await get(`/api/v1/calls?${query({ dateFrom: at, limit: 500 })}`)).json();
  assert.ok(from.calls.some((c: { id: string }) => c.id === seeded[9]!.id));
  const to = (await get(`/api/v1/calls?${query({ dateTo: at, limit: 500 })}`)).json();
  assert.ok(!to.calls.some((c: { id: string }) => c.id === seeded[9]!.id));
  assert.equal(from.total + to.total, 28);
  // Any offset works: +01:00 names the same instant.
  const shifted = (
    await get(`/api/v1/calls?${query({ dateFrom: '2026-03-02T10:09:00+01:00', dateTo: '2026-03-02T10:10:00+01:00' })}`)
  ).json();
  assert.deepEqual(
    shifted.calls.map((c: { id: string }) => c.id),
    [seeded[9]!.id],
  );

  const reversed = await get(
    `/api/v1/calls?${query({ dateFrom: minute(10).toISOString(), dateTo: minute(9).toISOString() })}`,
  );
  assert.equal(reversed.statusCode, 400);
  const error = errorBody(reversed);
  assert.equal(error.error, 'validation_failed');
  assert.match(error.message, /dateFrom/);
  assert.deepEqual(
    (error.details.fields as { field: string }[]).map((f) => f.field),
    ['querystring/dateFrom'],
  );
});

test('limit and offset page through the same order', async () => {
  const all = expectedIds({});
  const pages: string[] = [];
  for (let offset = 0; offset < all.length; offset += 10) {
    const body = (await get(`/api/v1/calls?limit=10&offset=${offset}`)).json();
    assert.equal(body.total, 28);
    assert.equal(body.offset, offset);
    pages.push(...body.calls.map((c: { id: string }) => c.id));
  }
  assert.deepEqual(pages, all);
  const edge = (await get('/api/v1/calls?limit=1&offset=27')).json();
  assert.deepEqual(
    edge.calls.map((c: { id: string }) => c.id),
    [all[27]],
  );
  const past = (await get('/api/v1/calls?limit=500&offset=1000')).json();
  assert.deepEqual(past, { calls: [], total: 28, limit: 500, offset: 1000 });
});

test('deep pages (past offset 100, found by id first) keep the same order, ties broken by id', async () => {
  const dave = await signUp(t.app);
  const db = t.infra.database.db;
  const agent = await buildAgent(t, { accountId: dave.accountId, name: 'Deep Dora' });
  // 150 calls; every three share a created_at, so the id decides their order.
  const rows = Array.from({ length: 150 }, (_, i) => ({
    id: newId(),
    account_id: dave.accountId,
    agent_id: agent.id,
    direction: 'outbound' as const,
    status: (i % 2 ? 'completed' : 'busy') as CallStatus,
    to_number: `+1415555${String(i).padStart(4, '0')}`,
    created_at: minute(Math.floor(i / 3)),
  }));
  await db.insertInto('calls').values(rows).execute();
  const newestFirst = (list: typeof rows) =>
    [...list]
      .sort((a, b) => b.created_at.getTime() - a.created_at.getTime() || (a.id < b.id ? 1 : -1))
      .map((r) => r.id);
  for (const [qs, expected] of [
    ['', newestFirst(rows)],
    ['&status=completed', newestFirst(rows.filter((r) => r.status === 'completed'))],
  ] as const) {
    const pages: string[] = [];
    for (let offset = 0; offset < expected.length; offset += 25) {
      const body = (await get(`/api/v1/calls?limit=25&offset=${offset}${qs}`, dave)).json();
      assert.equal(body.total, expected.length);
      pages.push(...body.calls.map((c: { id: string }) => c.id));
      if (offset >= 100) {
        const item = body.calls[0];
        assert.equal(item.agentName, 'Deep Dora', 'a deep page still carries the names');
        assert.deepEqual(Object.keys(item).sort(), ITEM_KEYS);
      }
    }
    assert.deepEqual(pages, expected, qs);
    const straddling = (await get(`/api/v1/calls?limit=30&offset=90${qs}`, dave)).json();
    const deep = (await get(`/api/v1/calls?limit=30&offset=100${qs}`, dave)).json();
    assert.deepEqual(
      straddling.calls.map((c: { id: string }) => c.id),
      expected.slice(90, 120),
    );
    assert.deepEqual(
      deep.calls.map((c: { id: string }) => c.id),
      expected.slice(100, 130),
    );
  }
});

test('bad query values are 400 validation_failed naming the field', async () => {
  const cases: [string, string][] = [
    ['limit=0', 'querystring/limit'],
    ['limit=501', 'querystring/limit'],
    ['limit=-1', 'querystring/limit'],
    ['limit=abc', 'querystring/limit'],
    ['limit=2.5', 'querystring/limit'],
    ['offset=-1', 'querystring/offset'],
    ['offset=abc', 'querystring/offset'],
    ['status=queued', 'querystring/status'],
    ['status=done', 'querystring/status'],
    ['status=COMPLETED', 'querystring/status'],
    ['hasRecording=yes', 'querystring/hasRecording'],
    ['hasRecording=1', 'querystring/hasRecording'],
    ['agentId=123', 'querystring/agentId'],
    ['contactId=not-a-uuid', 'querystring/contactId'],
    ['campaignId=', 'querystring/campaignId'],
    ['dateFrom=yesterday', 'querystring/dateFrom'],
    ['dateTo=2026-03-02', 'querystring/dateTo'],
    ['dateFrom=2026-03-02T09:00:00', 'querystring/dateFrom'],
    ['sort=asc', 'querystring/sort'],
  ];
  for (const [qs, field] of cases) {
    const response = await get(`/api/v1/calls?${qs}`);
    assert.equal(response.statusCode, 400, qs);
    const error = errorBody(response);
    assert.equal(error.error, 'validation_failed', qs);
    assert.ok(
      (error.details.fields as { field: string }[]).some((f) => f.field === field),
      `${qs}: ${JSON.stringify(error.details)}`,
    );
  }
  const status = errorBody(await get('/api/v1/calls?status=queued'));
  assert.match(status.message, /completed, failed, busy, no_answer, connected, dialing, ringing/);
});

test('totals from the trigger-kept counts stay exact through inserts, updates and deletes', async () => {
  const carol = await signUp(t.app);
  const db = t.infra.database.db;
  const [agentA, agentB] = [
    await buildAgent(t, { accountId: carol.accountId, name: 'A' }),
    await buildAgent(t, { accountId: carol.accountId, name: 'B' }),
  ];
  const campaign = newId();
  // Filter mixes the counts table answers alone, each checked against a count(*) of the same rows.
  const mixes: Filters[] = [
    {},
    ...statuses.filter((s) => s !== 'queued').map((status) => ({ status })),
    { agentId: agentA.id },
    { agentId: agentB.id, status: 'completed' },
    { campaignId: campaign },
    { campaignId: campaign, agentId: agentA.id, status: 'busy' },
    { hasRecording: 'true' },
    { hasRecording: 'false', status: 'completed' },
  ];
  const check = async (step: string) => {
    for (const filters of mixes) {
      const total = (await get(`/api/v1/calls?${query({ ...filters, limit: 1 })}`, carol)).json().total;
      let scan = db
        .selectFrom('calls')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('account_id', '=', carol.accountId);
      if (filters.status) scan = scan.where('status', '=', filters.status as CallStatus);
      if (filters.agentId) scan = scan.where('agent_id', '=', filters.agentId);
      if (filters.campaignId) scan = scan.where('campaign_id', '=', filters.campaignId);
      if (filters.hasRecording)
        scan = scan.where('recording_storage_key', filters.hasRecording === 'true' ? 'is not' : 'is', null);
      assert.equal(total, (await scan.executeTakeFirstOrThrow()).n, `${step}: ${JSON.stringify(filters)}`);
    }
    // And combination by combination (each kept in a row per connection): exactly the grouped count of the calls.
    const counted = await sql`SELECT status, agent_id, campaign_id, has_recording, sum(calls)::int8 AS calls
      FROM call_counts WHERE account_id = ${carol.accountId}
      GROUP BY 1, 2, 3, 4 HAVING sum(calls) <> 0 ORDER BY 1, 2, 3, 4`.execute(db);
    const scanned =
      await sql`SELECT status, agent_id, campaign_id, recording_storage_key IS NOT NULL AS has_recording, count(*)::int8 AS calls
      FROM calls WHERE account_id = ${carol.accountId} GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4`.execute(db);
    assert.deepEqual(counted.rows, scanned.rows, step);
  };

  await check('empty account');
  const calls = [];
  for (let i = 0; i < 12; i++) {
    calls.push(
      await buildCall(carol, {
        status: statuses[i % statuses.length]!,
        agentId: [agentA.id, agentB.id, null][i % 3],
        campaignId: i % 2 ? campaign : null,
      }),
    );
  }
  await check('after single inserts');
  assert.equal((await get('/api/v1/calls?limit=1', carol)).json().total, 12);

  // A multi-row insert in one statement.
  await db
    .insertInto('calls')
    .values(
      ['busy', 'busy', 'completed', 'queued'].map((status) => ({
        id: newId(),
        account_id: carol.accountId,
        agent_id: agentA.id,
        campaign_id: campaign,
        direction: 'outbound' as const,
        status: status as CallStatus,
      })),
    )
    .execute();
  await check('after a multi-row insert');

  // The engine moving calls along, one and several at a time; a recording arriving; a call reassigned.
  await db.updateTable('calls').set({ status: 'dialing' }).where('id', '=', calls[7]!.id).execute();
  await db
    .updateTable('calls')
    .set({ status: 'completed' })
    .where('account_id', '=', carol.accountId)
    .where('status', '=', 'busy')
    .execute();
  await db
    .updateTable('calls')
    .set({ recording_storage_key: 'recordings/late.wav' })
    .where('id', '=', calls[8]!.id)
    .execute();
  await db
    .updateTable('calls')
    .set({ agent_id: agentB.id, campaign_id: null })
    .where('id', '=', calls[1]!.id)
    .execute();
  await db.updateTable('calls').set({ disposition: 'callback' }).where('account_id', '=', carol.accountId).execute();
  await check('after updates');

  await db.deleteFrom('calls').where('id', 'in', [calls[0]!.id, calls[1]!.id]).execute();
  await db.deleteFrom('calls').where('account_id', '=', carol.accountId).where('status', '=', 'completed').execute();
  await check('after deletes');

  // A rolled-back change leaves the counts as they were.
  await db
    .transaction()
    .execute(async (trx) => {
      await trx
        .updateTable('calls')
        .set({ status: 'failed', agent_id: null })
        .where('account_id', '=', carol.accountId)
        .execute();
      throw new Error('roll back');
    })
    .catch(() => {});
  await check('after a rollback');

  // Another account's totals did not move.
  assert.equal((await get('/api/v1/calls?limit=1')).json().total, 28);
});

test('a call keeps its agent’s name after the agent is deleted', async () => {
  const agentId = (await buildAgent(alice, { name: 'Retired Rita' })).id as string;
  const call = await buildCall(alice, { agentId, createdAt: new Date('2020-01-01T00:00:00Z') });
  const deleted = await t.app.inject({ method: 'DELETE', url: `/api/v1/agents/${agentId}`, headers: alice.headers });
  assert.equal(deleted.statusCode, 200, deleted.body);
  const listed = (await get(`/api/v1/calls?agentId=${agentId}`)).json();
  assert.deepEqual(
    listed.calls.map((c: { agentName: string }) => c.agentName),
    ['Retired Rita'],
  );
  assert.equal((await get(`/api/v1/calls/${call.id}`)).json().agentName, 'Retired Rita');
  await t.infra.database.db.deleteFrom('calls').where('id', '=', call.id).execute();
});

test('every calls route needs authentication (401); the transcript takes a signed URL instead, a forged one is 403', async () => {
  const id = seeded[0]!.id;
  for (const url of [
    '/api/v1/calls',
    `/api/v1/calls/${id}`,
    `/api/v1/calls/${id}/events`,
    '/api/v1/events',
    `/api/v1/calls/${id}/asset-url?asset=transcript`,
  ]) {
    const response = await t.app.inject({ method: 'GET', url });
    assert.equal(response.statusCode, 401, url);
    assert.equal(errorBody(response).error, 'unauthorized');
  }
  // Neither credentials nor a signature: authentication is what is missing.
  const transcript = await t.app.inject({ method: 'GET', url: `/api/v1/calls/${id}/transcript.json` });
  assert.equal(transcript.statusCode, 401);
  assert.equal(errorBody(transcript).error, 'unauthorized');
  assert.match(errorBody(transcript).message, /signed URL/);
  // A signature that does not hold is refused as such, with or without credentials.
  for (const query of ['?expires=9999999999&signature=00', '?signature=00', '?expires=9999999999']) {
    for (const headers of [{}, alice.headers]) {
      const forged = await t.app.inject({ method: 'GET', url: `/api/v1/calls/${id}/transcript.json${query}`, headers });
      assert.equal(forged.statusCode, 403, query);
      assert.equal(errorBody(forged).error, 'forbidden');
    }
  }
});

test("another account's calls never show in its lists", async () => {
  const bobsList = (await get('/api/v1/calls?limit=500', bob)).json();
  assert.equal(bobsList.total, 1);
  assert.ok(!bobsList.calls.some((c: { id: string }) => seeded.some((s) => s.id === c.id)));
  assert.deepEqual((await get(`/api/v1/calls?agentId=${agents[0]!.id}`, bob)).json().calls, []);
  assert.deepEqual((await get(`/api/v1/calls?contactId=${contacts[0]!.id}`, bob)).json().calls, []);
  assert.equal((await get('/api/v1/calls?status=completed', bob)).json().total, 1);
  assert.equal((await get(`/api/v1/calls?campaignId=${campaignId}`, bob)).json().total, 0);
});

test('the session cookie works as well as an API key', async () => {
  const response = await t.app.inject({
    method: 'GET',
    url: '/api/v1/calls?status=busy',
    headers: { cookie: alice.cookie },
  });
  assert.equal(response.statusCode, 200);
  assert.equal(response.json().total, expectedIds({ status: 'busy' }).length);
});

test('the OpenAPI document describes the calls routes and their filters', async () => {
  const doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
  for (const path of [
    '/v1/calls',
    '/v1/calls/{id}',
    '/v1/calls/{id}/transcript.json',
    '/v1/calls/{id}/events',
    '/v1/events',
  ]) {
    assert.ok(doc.paths[path]?.get, path);
  }
  const params = doc.paths['/v1/calls'].get.parameters.map((p: { name: string }) => p.name).sort();
  assert.deepEqual(params, [
    'agentId',
    'campaignId',
    'contactId',
    'dateFrom',
    'dateTo',
    'hasRecording',
    'limit',
    'offset',
    'status',
  ]);
  const status = doc.paths['/v1/calls'].get.parameters.find((p: { name: string }) => p.name === 'status');
  assert.deepEqual([...status.schema.enum].sort(), [
    'busy',
    'completed',
    'connected',
    'dialing',
    'failed',
    'no_answer',
    'ringing',
  ]);
});
