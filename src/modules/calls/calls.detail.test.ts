import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
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

/** Alice has one call in each status, one minute apart; the completed one is in a campaign. */
const base = new Date('2026-03-02T09:00:00.000Z');
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

const get = (url: string, who: Caller = alice) => call(who, 'GET', url);

before(async () => {
  t = await buildTestApp({ env: { RATE_LIMIT_PER_MINUTE: '100000' } });
  alice = await signUp(t.app);
  bob = await signUp(t.app);
  const agent = await buildAgent(t, { accountId: alice.accountId, name: 'Sales Sally' });
  const contact = await buildContact(alice, { firstName: 'Ada', lastName: 'Lovelace', phone: '+14155550101' });
  seeded = [];
  for (const [i, status] of statuses.entries()) {
    seeded.push(
      await buildCall(alice, {
        status,
        agentId: agent.id,
        contactId: contact.id,
        campaignId: status === 'completed' ? campaignId : null,
        toNumber: contact.phone,
        createdAt: new Date(base.getTime() + i * 60_000),
      }),
    );
  }
  await buildCall(bob);
});
after(() => t.close());

test('the call detail has the list fields, the call’s own fields, the transcript in order and cost items that add up', async () => {
  const call = seeded[0]!;
  const response = await get(`/api/v1/calls/${call.id}`);
  assert.equal(response.statusCode, 200);
  const detail = response.json();
  // The list item's fields (exactly the documented ones, checked in calls.test.ts), with the same values, plus the call's own.
  const listed = (await get('/api/v1/calls?limit=100')).json().calls.find((c: { id: string }) => c.id === call.id);
  const itemKeys = Object.keys(listed);
  assert.deepEqual(
    Object.keys(detail).sort(),
    [
      ...itemKeys,
      'agentVersion',
      'analysis',
      'answeredAt',
      'callbackAt',
      'campaignId',
      'costItems',
      'endReason',
      'fromNumber',
      'toNumber',
      'transcript',
      'updatedAt',
    ].sort(),
  );
  for (const key of itemKeys) assert.deepEqual(detail[key], listed[key], key);
  assert.equal(detail.contactPhone, '+14155550101');
  assert.equal(detail.agentName, 'Sales Sally');
  assert.equal(detail.agentVersion, 1);
  assert.equal(detail.campaignId, campaignId);
  assert.equal(detail.fromNumber, call.from_number);
  assert.equal(detail.toNumber, call.to_number);
  assert.equal(detail.answeredAt, call.answered_at!.toISOString());
  assert.equal(detail.endReason, 'caller_hangup');
  assert.match(detail.updatedAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

  assert.deepEqual(
    detail.transcript,
    call.transcript.map((turn, seq) => ({
      seq,
      speaker: turn.speaker,
      text: turn.text,
      startMs: turn.startMs,
      endMs: turn.endMs,
    })),
  );
  assert.equal(detail.costItems.length, call.costItems.length);
  for (const [i, item] of detail.costItems.entries()) {
    const seededItem = call.costItems[i]!;
    assert.deepEqual(Object.keys(item).sort(), [
      'amountUsd',
      'description',
      'id',
      'kind',
      'quantity',
      'unit',
      'unitPriceUsd',
    ]);
    assert.equal(item.kind, seededItem.kind);
    assert.equal(item.description, seededItem.description);
    assert.equal(item.unit, seededItem.unit);
    assert.equal(item.amountUsd, seededItem.amountUsd);
    // numeric keeps its declared scale: '1' comes back as '1.000000'; the value is the same.
    assert.equal(Number(item.quantity), Number(seededItem.quantity));
    assert.equal(Number(item.unitPriceUsd), Number(seededItem.unitPriceUsd));
    assert.equal(typeof item.unitPriceUsd, 'string');
  }
  assert.equal(sumMicros(detail.costItems.map((i: { amountUsd: string }) => i.amountUsd)), micros(detail.totalCostUsd));
});

/** Decimal strings to integer micro-dollars, so sums are exact. */
function micros(amount: string): bigint {
  const [whole, fraction = ''] = amount.split('.');
  return BigInt(whole!) * 1_000_000n + BigInt(fraction.padEnd(6, '0').slice(0, 6));
}
const sumMicros = (amounts: string[]) => amounts.reduce((sum, a) => sum + micros(a), 0n);

test('the call total follows its cost items as they are added, changed and removed', async () => {
  const db = t.infra.database.db;
  const call = await buildCall(alice, { status: 'completed', createdAt: new Date('2020-01-01T00:00:00Z') });
  const totalOf = async () => (await get(`/api/v1/calls/${call.id}`)).json().totalCostUsd as string;
  assert.equal(await totalOf(), '0.024600');
  await db
    .insertInto('call_cost_items')
    .values({
      id: newId(),
      call_id: call.id,
      account_id: alice.accountId,
      kind: 'platform',
      description: 'Platform fee',
      quantity: '1',
      unit: 'call',
      unit_price_usd: '0.000001',
      amount_usd: '0.000001',
    })
    .execute();
  assert.equal(await totalOf(), '0.024601');
  await db
    .updateTable('call_cost_items')
    .set({ amount_usd: '1.5' })
    .where('call_id', '=', call.id)
    .where('kind', '=', 'platform')
    .execute();
  assert.equal(await totalOf(), '1.524600');
  await db.deleteFrom('call_cost_items').where('call_id', '=', call.id).execute();
  const detail = (await get(`/api/v1/calls/${call.id}`)).json();
  assert.equal(detail.totalCostUsd, '0.000000');
  assert.deepEqual(detail.costItems, []);
  await db.deleteFrom('calls').where('id', '=', call.id).execute();
});

test('transcript.json answers the turns in spoken order; a call without turns has none', async () => {
  const call = seeded[4]!; // connected
  const response = await get(`/api/v1/calls/${call.id}/transcript.json`);
  assert.equal(response.statusCode, 200);
  assert.match(String(response.headers['content-type']), /^application\/json/);
  const body = response.json();
  assert.equal(body.callId, call.id);
  assert.deepEqual(
    body.turns.map((turn: { seq: number }) => turn.seq),
    [0, 1, 2, 3],
  );
  assert.deepEqual(body.turns[1], {
    seq: 1,
    speaker: 'caller',
    text: 'Sure, what is it about?',
    startMs: 3600,
    endMs: 5100,
  });
  const silent = (await get(`/api/v1/calls/${seeded[2]!.id}/transcript.json`)).json();
  assert.deepEqual(silent, { callId: seeded[2]!.id, turns: [] });
});

test('a call’s events come oldest first; the account feed newest first, filtered by call and type', async () => {
  const call = seeded[0]!; // completed: queued, dialing, ringing, connected, completed
  const timeline = await get(`/api/v1/calls/${call.id}/events`);
  assert.equal(timeline.statusCode, 200);
  const body = timeline.json();
  assert.equal(body.total, 5);
  assert.deepEqual(
    body.events.map((e: { type: string }) => e.type),
    ['call.queued', 'call.dialing', 'call.ringing', 'call.connected', 'call.completed'],
  );
  assert.deepEqual(Object.keys(body.events[0]).sort(), ['callId', 'data', 'id', 'occurredAt', 'type']);
  assert.deepEqual(body.events[4].data, { callId: call.id, status: 'completed' });
  const onlyCompleted = (await get(`/api/v1/calls/${call.id}/events?type=call.completed`)).json();
  assert.equal(onlyCompleted.total, 1);
  const paged = (await get(`/api/v1/calls/${call.id}/events?limit=2&offset=2`)).json();
  assert.deepEqual(
    paged.events.map((e: { type: string }) => e.type),
    ['call.ringing', 'call.connected'],
  );

  const allEvents = seeded.flatMap((c) => c.events.map((e) => ({ ...e, callId: c.id })));
  const feed = (await get('/api/v1/events?limit=500')).json();
  assert.equal(feed.total, allEvents.length);
  const times = feed.events.map((e: { occurredAt: string }) => e.occurredAt);
  assert.deepEqual(times, [...times].sort().reverse());
  assert.ok(
    feed.events.every((e: { callId: string }) => seeded.some((c) => c.id === e.callId)),
    'only the account’s own events',
  );

  const failed = (await get('/api/v1/events?type=call.failed&limit=500')).json();
  assert.equal(failed.total, allEvents.filter((e) => e.type === 'call.failed').length);
  assert.ok(failed.total > 0 && failed.events.every((e: { type: string }) => e.type === 'call.failed'));

  const ofCall = (await get(`/api/v1/events?callId=${call.id}`)).json();
  assert.deepEqual(
    ofCall.events.map((e: { type: string }) => e.type),
    ['call.completed', 'call.connected', 'call.ringing', 'call.dialing', 'call.queued'],
  );
  const ofCallTyped = (await get(`/api/v1/events?callId=${call.id}&type=call.queued`)).json();
  assert.equal(ofCallTyped.total, 1);
  const page = (await get('/api/v1/events?limit=3&offset=1')).json();
  assert.deepEqual(
    page.events.map((e: { id: string }) => e.id),
    feed.events.slice(1, 4).map((e: { id: string }) => e.id),
  );

  for (const url of [
    '/api/v1/events?type=call.exploded',
    '/api/v1/events?callId=nope',
    '/api/v1/events?limit=0',
    `/api/v1/calls/${call.id}/events?type=x`,
  ]) {
    const bad = await get(url);
    assert.equal(bad.statusCode, 400, url);
    assert.equal(errorBody(bad).error, 'validation_failed');
  }
});

test("another account's call answers 404 on every per-call route, like a missing one", async () => {
  const call = seeded[0]!;
  for (const path of ['', '/transcript.json', '/events']) {
    const response = await get(`/api/v1/calls/${call.id}${path}`, bob);
    assert.equal(response.statusCode, 404, path);
    const error = errorBody(response);
    assert.equal(error.error, 'not_found');
    assert.equal(error.message, 'Call not found');
    const missing = await get(`/api/v1/calls/${newId()}${path}`, bob);
    assert.equal(missing.statusCode, 404, path);
    assert.deepEqual(errorBody(missing), error, 'a foreign id and a missing id answer alike');
  }
  const bobsEvents = (await get(`/api/v1/events?callId=${call.id}`, bob)).json();
  assert.deepEqual(bobsEvents, { events: [], total: 0, limit: 25, offset: 0 });
  assert.equal((await get('/api/v1/events?limit=500', bob)).json().total, 5);
});

test('a malformed call id is 400; an unknown one 404', async () => {
  const bad = await get('/api/v1/calls/not-a-uuid');
  assert.equal(bad.statusCode, 400);
  assert.deepEqual(
    (errorBody(bad).details.fields as { field: string }[]).map((f) => f.field),
    ['params/id'],
  );
  assert.equal((await get(`/api/v1/calls/${newId()}/transcript.json`)).statusCode, 404);
});

test('call events are append-only', async () => {
  const db = t.infra.database.db;
  await assert.rejects(
    db.updateTable('call_events').set({ type: 'call.failed' }).where('call_id', '=', seeded[0]!.id).execute(),
    /immutable/,
  );
  assert.equal((await get(`/api/v1/calls/${seeded[0]!.id}/events?type=call.failed`)).json().total, 0);
});

test('event totals stay exact when many connections write at once, and when calls are deleted', async () => {
  const db = t.infra.database.db;
  const carol = await signUp(t.app);
  const calls = await Promise.all(Array.from({ length: 4 }, () => buildCall(carol, { status: 'completed' })));
  const total = async () => (await get('/api/v1/events?limit=1', carol)).json().total as number;
  const stored = async () =>
    (
      await db
        .selectFrom('call_events')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('account_id', '=', carol.accountId)
        .executeTakeFirstOrThrow()
    ).n;
  // Twelve transactions at once: on PostgreSQL they run on several connections, each adding to a row of its own.
  await Promise.all(
    Array.from({ length: 12 }, (_, i) =>
      db.transaction().execute((trx) =>
        trx
          .insertInto('call_events')
          .values({
            id: newId(),
            account_id: carol.accountId,
            call_id: calls[i % calls.length]!.id,
            type: 'call.turn',
            data: JSON.stringify({ n: i }),
          })
          .execute(),
      ),
    ),
  );
  assert.equal(await total(), await stored());
  assert.equal((await get('/api/v1/events?type=call.turn&limit=1', carol)).json().total, 12);
  await db.deleteFrom('calls').where('account_id', '=', carol.accountId).where('id', '=', calls[0]!.id).execute();
  assert.equal(await total(), await stored(), 'a deleted call takes its events out of the totals');
  assert.equal((await get('/api/v1/events?type=call.turn&limit=1', carol)).json().total, 9);
});

test('deleting an account takes its calls, their rows and its counts with it', async () => {
  const db = t.infra.database.db;
  const erin = await signUp(t.app);
  const agent = await buildAgent(t, { accountId: erin.accountId, name: 'E' });
  for (const status of statuses) await buildCall(erin, { status, agentId: agent.id });
  assert.equal((await get('/api/v1/calls', erin)).json().total, statuses.length);
  await db.deleteFrom('accounts').where('id', '=', erin.accountId).execute();
  for (const table of [
    'calls',
    'call_counts',
    'call_events',
    'call_event_type_counts',
    'call_cost_items',
    'call_transcript_turns',
  ] as const) {
    const left = await db
      .selectFrom(table)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('account_id', '=', erin.accountId)
      .executeTakeFirstOrThrow();
    assert.equal(left.n, 0, table);
  }
  assert.equal((await get('/api/v1/calls')).json().total, statuses.length, 'other accounts are untouched');
});
