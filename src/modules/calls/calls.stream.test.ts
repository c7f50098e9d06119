/**
 * The live streams (Server-Sent Events) over a real HTTP connection, since a stream is what inject cannot show:
 * a call's events as they are written, the end, resuming with Last-Event-ID, the account's stream, and access.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { newId } from '../../lib/ids.js';
import { buildTestApp, signUp, type SignedUp, type TestApp } from '../../../test/helpers.js';
import { insertCall } from '../../../test/factories/calls.js';
import type { CallEventType } from './calls.tables.js';

let t: TestApp;
let base: string;
let owner: SignedUp;
let stranger: SignedUp;

before(async () => {
  t = await buildTestApp();
  base = await t.app.listen({ host: '127.0.0.1', port: 0 });
  owner = await signUp(t.app);
  stranger = await signUp(t.app);
});
after(() => t.close());

interface Message {
  id?: string;
  event: string;
  data: Record<string, unknown>;
}

/** An open event stream: `next()` answers the next message (comments and `retry:` are skipped). */
async function openStream(path: string, headers: Record<string, string>) {
  const controller = new AbortController();
  const response = await fetch(`${base}/api/v1${path}`, { headers, signal: controller.signal });
  const queue: Message[] = [];
  const waiting: { wake: () => void } = { wake: () => {} };
  let ended = false;
  const reading = (async () => {
    if (!response.body) return;
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of response.body) {
        buffer += decoder.decode(chunk as Uint8Array, { stream: true });
        for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const fields = Object.fromEntries(
            block
              .split('\n')
              .filter((line) => !line.startsWith(':') && line.includes(': '))
              .map((line) => [line.slice(0, line.indexOf(': ')), line.slice(line.indexOf(': ') + 2)]),
          );
          if (!fields.event) continue;
          queue.push({ id: fields.id, event: fields.event, data: JSON.parse(fields.data ?? 'null') });
          waiting.wake();
        }
      }
    } catch {
      // aborted by close()
    } finally {
      ended = true;
      waiting.wake();
    }
  })();
  return {
    response,
    async next(): Promise<Message | null> {
      while (queue.length === 0 && !ended) await new Promise<void>((resolve) => (waiting.wake = resolve));
      return queue.shift() ?? null;
    },
    async close() {
      controller.abort();
      await reading;
    },
  };
}

let clockMs = Date.parse('2026-03-02T10:00:00Z');
async function addEvent(accountId: string, callId: string, type: CallEventType, data: Record<string, unknown> = {}) {
  const id = newId();
  clockMs += 1000;
  await t.infra.database.db
    .insertInto('call_events')
    .values({
      id,
      account_id: accountId,
      call_id: callId,
      type,
      data: JSON.stringify({ callId, ...data }),
      occurred_at: new Date(clockMs),
    })
    .execute();
  return id;
}

async function liveCall(accountId: string) {
  clockMs += 60_000;
  const call = await insertCall(t.infra.database.db, accountId, { status: 'connected', createdAt: new Date(clockMs) });
  clockMs += 10_000;
  return call;
}

test("a call's stream sends its events so far, each new turn as it is written, then the end", async () => {
  const call = await liveCall(owner.accountId);
  const stream = await openStream(`/calls/${call.id}/stream`, owner.headers);
  assert.equal(stream.response.status, 200);
  assert.match(String(stream.response.headers.get('content-type')), /^text\/event-stream/);
  const sofar = [];
  for (let i = 0; i < call.events.length; i++) sofar.push(await stream.next());
  assert.deepEqual(
    sofar.map((m) => m?.event),
    ['call.queued', 'call.dialing', 'call.ringing', 'call.connected'],
  );
  assert.ok(sofar.every((m) => m?.id === m?.data.id && m?.data.callId === call.id));

  const turnId = await addEvent(owner.accountId, call.id, 'call.turn', {
    seq: 0,
    speaker: 'agent',
    text: 'Hello there',
  });
  const turn = await stream.next();
  assert.equal(turn?.event, 'call.turn');
  assert.equal(turn?.id, turnId);
  assert.deepEqual(turn?.data.data, { callId: call.id, seq: 0, speaker: 'agent', text: 'Hello there' });

  await addEvent(owner.accountId, call.id, 'call.completed', { status: 'completed' });
  assert.equal((await stream.next())?.event, 'call.completed');
  assert.deepEqual(await stream.next(), { id: undefined, event: 'end', data: { callId: call.id } });
  assert.equal(await stream.next(), null, 'the server closed the stream');
  await stream.close();
});

test('Last-Event-ID resumes after the last event received', async () => {
  const call = await liveCall(owner.accountId);
  const connected = call.events.at(-1)!;
  const first = await openStream(`/calls/${call.id}/stream`, owner.headers);
  const all = [];
  for (let i = 0; i < call.events.length; i++) all.push(await first.next());
  await first.close();
  const lastSeen = all[1]!.id!;

  await addEvent(owner.accountId, call.id, 'call.turn', { seq: 0, speaker: 'agent', text: 'Hi' });
  const resumed = await openStream(`/calls/${call.id}/stream`, { ...owner.headers, 'last-event-id': lastSeen });
  assert.equal((await resumed.next())?.event, 'call.ringing');
  assert.equal((await resumed.next())?.event, connected.type);
  assert.equal((await resumed.next())?.event, 'call.turn');
  await resumed.close();

  // The query parameter does the same for clients that cannot set the header; an id it cannot place starts over.
  const viaQuery = await openStream(`/calls/${call.id}/stream?lastEventId=${all[2]!.id}`, owner.headers);
  assert.equal((await viaQuery.next())?.event, connected.type);
  await viaQuery.close();
  const unknown = await openStream(`/calls/${call.id}/stream`, { ...owner.headers, 'last-event-id': 'nonsense' });
  assert.equal((await unknown.next())?.event, 'call.queued');
  await unknown.close();
});

test("another account's call is a 404, and no credentials a 401, as error bodies", async () => {
  const call = await liveCall(owner.accountId);
  const foreign = await fetch(`${base}/api/v1/calls/${call.id}/stream`, { headers: stranger.headers });
  assert.equal(foreign.status, 404);
  assert.equal(((await foreign.json()) as { error: string }).error, 'not_found');
  const anonymous = await fetch(`${base}/api/v1/calls/${call.id}/stream`);
  assert.equal(anonymous.status, 401);
  const bad = await fetch(`${base}/api/v1/calls/not-a-uuid/stream`, { headers: owner.headers });
  assert.equal(bad.status, 400);
  // A stream that may not end goes only to a client that asks for one.
  for (const url of [`/api/v1/calls/${call.id}/stream`, '/api/v1/events/stream']) {
    const json = await t.app.inject({ method: 'GET', url, headers: { ...owner.headers, accept: 'application/json' } });
    assert.equal(json.statusCode, 400, url);
    assert.deepEqual(json.json().details.fields, [
      { field: 'headers/accept', message: 'must accept text/event-stream (send Accept: text/event-stream)' },
    ]);
  }
  const accountWide = await openStream('/events/stream', stranger.headers);
  try {
    await addEvent(owner.accountId, call.id, 'call.turn', { seq: 0, speaker: 'agent', text: 'not for strangers' });
    const mine = await liveCall(stranger.accountId);
    const own = await addEvent(stranger.accountId, mine.id, 'call.turn', { seq: 0, speaker: 'agent', text: 'mine' });
    const received: Message[] = [];
    while (received.at(-1)?.id !== own) received.push((await accountWide.next())!);
    assert.ok(
      received.every((message) => message.data.callId === mine.id),
      "the stranger's stream sends their own events only",
    );
  } finally {
    await accountWide.close();
  }
});

test("the account's stream sends new events from now on, and resumes after the last one received", async () => {
  const call = await liveCall(owner.accountId);
  const stream = await openStream('/events/stream', owner.headers);
  const a = await addEvent(owner.accountId, call.id, 'call.turn', { seq: 0, speaker: 'agent', text: 'one' });
  const b = await addEvent(owner.accountId, call.id, 'call.turn', { seq: 1, speaker: 'caller', text: 'two' });
  const first = await stream.next();
  const second = await stream.next();
  assert.deepEqual([first?.id, second?.id], [a, b], 'only new events, oldest first');
  await stream.close();

  const c = await addEvent(owner.accountId, call.id, 'call.completed', { status: 'completed' });
  const resumed = await openStream('/events/stream', { ...owner.headers, 'last-event-id': b });
  assert.equal((await resumed.next())?.id, c);
  await resumed.close();
});
