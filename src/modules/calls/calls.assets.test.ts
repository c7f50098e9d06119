/**
 * Signed asset URLs (the recording with HTTP ranges, the transcript) and the voice provider's signed callbacks:
 * post-call reports (idempotent) and inbound calls.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { errorBody, signUp } from '../../../test/helpers.js';
import { insertCall } from '../../../test/factories/calls.js';
import {
  api,
  callEvents,
  callingAccount,
  micros,
  placeCall,
  startCallsApp,
  waitForCall,
  type CallingAccount,
  type CallsKit,
} from '../../../test/calls-kit.js';
import { signatureHeader } from '../../lib/signatures.js';

let kit: CallsKit;
let account: CallingAccount;
let recorded: { id: string; durationSeconds: number };

const SECRET = 'provider-secret-for-tests';

before(async () => {
  kit = await startCallsApp();
  account = await callingAccount(kit.t, [{ phone: '+14155550100' }, { phone: '+14155550126' }]);
  recorded = await waitForCall(kit.t, account.user, await placeCall(kit.t, account, '+14155550100'));
  assert.ok(recorded.durationSeconds > 10);
});
after(() => kit.close());

const pathOf = (url: string) => new URL(url).pathname + new URL(url).search;
const fetchUrl = (url: string, headers: Record<string, string> = {}) =>
  kit.t.app.inject({ method: 'GET', url, headers });
const assetUrl = (callId: string, asset: string) =>
  api(kit.t, account.user).ok('GET', `/calls/${callId}/asset-url?asset=${asset}`);

test('a signed recording URL streams the WAV, whole or by byte range, without credentials', async () => {
  const { url, expiresAt } = await assetUrl(recorded.id, 'recording');
  assert.match(
    url,
    new RegExp(
      `^http://localhost(:\\d+)?/api/v1/calls/${recorded.id}/recording\\.wav\\?expires=\\d+&signature=[0-9a-f]{64}$`,
    ),
  );
  assert.equal(Date.parse(expiresAt) - kit.clock.now().getTime() <= 15 * 60_000, true);
  assert.ok(Date.parse(expiresAt) - kit.clock.now().getTime() > 14 * 60_000, 'valid for 15 minutes');

  const whole = await fetchUrl(pathOf(url));
  assert.equal(whole.statusCode, 200);
  assert.equal(whole.headers['accept-ranges'], 'bytes');
  assert.equal(whole.headers['content-type'], 'audio/wav');
  const size = whole.rawPayload.length;
  assert.equal(Number(whole.headers['content-length']), size);
  assert.equal(whole.rawPayload.toString('ascii', 0, 4), 'RIFF');

  const head = await fetchUrl(pathOf(url), { range: 'bytes=0-99' });
  assert.equal(head.statusCode, 206);
  assert.equal(head.headers['content-range'], `bytes 0-99/${size}`);
  assert.equal(Number(head.headers['content-length']), 100);
  assert.deepEqual(head.rawPayload, whole.rawPayload.subarray(0, 100));

  const open = await fetchUrl(pathOf(url), { range: `bytes=${size - 10}-` });
  assert.equal(open.statusCode, 206);
  assert.equal(open.headers['content-range'], `bytes ${size - 10}-${size - 1}/${size}`);
  assert.deepEqual(open.rawPayload, whole.rawPayload.subarray(size - 10));

  const tail = await fetchUrl(pathOf(url), { range: 'bytes=-44' });
  assert.equal(tail.statusCode, 206);
  assert.deepEqual(tail.rawPayload, whole.rawPayload.subarray(size - 44));

  const past = await fetchUrl(pathOf(url), { range: `bytes=${size}-` });
  assert.equal(past.statusCode, 416);
  assert.equal(errorBody(past).error, 'range_not_satisfiable');
  assert.equal(past.headers['content-range'], `bytes */${size}`);

  const multi = await fetchUrl(pathOf(url), { range: 'bytes=0-1,5-9' });
  assert.equal(multi.statusCode, 200, 'several ranges: the whole file');
  assert.equal(multi.rawPayload.length, size);

  for (const start of ['99999999999999999999', '9007199254740993', String(Number.MAX_SAFE_INTEGER)]) {
    const huge = await fetchUrl(pathOf(url), { range: `bytes=${start}-` });
    assert.equal(huge.statusCode, 416, `a start of ${start} is past the end`);
    assert.equal(errorBody(huge).error, 'range_not_satisfiable');
    assert.equal(huge.headers['content-range'], `bytes */${size}`);
  }
  const hugeEnd = await fetchUrl(pathOf(url), { range: 'bytes=10-99999999999999999999' });
  assert.equal(hugeEnd.statusCode, 206, 'an end past the end of the file means the end of the file');
  assert.equal(hugeEnd.headers['content-range'], `bytes 10-${size - 1}/${size}`);
  const hugeSuffix = await fetchUrl(pathOf(url), { range: 'bytes=-99999999999999999999' });
  assert.equal(hugeSuffix.statusCode, 206, 'a suffix longer than the file is the whole file');
  assert.equal(hugeSuffix.rawPayload.length, size);
});

test("a missing, altered, expired or other call's signature is 403", async () => {
  const { url } = await assetUrl(recorded.id, 'recording');
  const parsed = new URL(url);
  const signature = parsed.searchParams.get('signature')!;
  const expires = parsed.searchParams.get('expires')!;
  const other = await waitForCall(kit.t, account.user, await placeCall(kit.t, account, '+14155550126'));
  const flipped = signature.slice(0, -1) + (signature.endsWith('0') ? '1' : '0');
  const refused = [
    `/api/v1/calls/${recorded.id}/recording.wav`,
    `/api/v1/calls/${recorded.id}/recording.wav?expires=${expires}`,
    `/api/v1/calls/${recorded.id}/recording.wav?expires=${expires}&signature=${flipped}`,
    `/api/v1/calls/${recorded.id}/recording.wav?expires=${Number(expires) + 3600}&signature=${signature}`,
    `/api/v1/calls/${other.id}/recording.wav?expires=${expires}&signature=${signature}`,
    `/api/v1/calls/${recorded.id}/transcript.json?expires=${expires}&signature=${signature}`,
  ];
  for (const path of refused) {
    const response = await fetchUrl(path);
    assert.equal(response.statusCode, 403, path);
    assert.equal(errorBody(response).error, 'forbidden');
  }
  // Even with the account's own credentials, the recording needs its signature.
  assert.equal(
    (
      await kit.t.app.inject({
        method: 'GET',
        url: `/api/v1/calls/${recorded.id}/recording.wav`,
        headers: account.user.headers,
      })
    ).statusCode,
    403,
  );

  kit.clock.advance(15 * 60_000 + 1_000);
  const expired = await fetchUrl(pathOf(url));
  assert.equal(expired.statusCode, 403);
  assert.match(errorBody(expired).message, /expired/);
  assert.equal(
    (await fetchUrl(pathOf((await assetUrl(recorded.id, 'recording')).url))).statusCode,
    200,
    'a fresh URL works',
  );
});

test('a signed transcript URL serves transcript.json without credentials; members read it with theirs', async () => {
  const { url } = await assetUrl(recorded.id, 'transcript');
  assert.match(url, /\/transcript\.json\?expires=/);
  const signed = await fetchUrl(pathOf(url));
  assert.equal(signed.statusCode, 200, signed.body);
  const withKey = await kit.t.app.inject({
    method: 'GET',
    url: `/api/v1/calls/${recorded.id}/transcript.json`,
    headers: account.user.headers,
  });
  assert.deepEqual(signed.json(), withKey.json());
  assert.ok(signed.json().turns.length > 3);
  const wrongAsset = new URL(url);
  wrongAsset.pathname = wrongAsset.pathname.replace('transcript.json', 'recording.wav');
  assert.equal(
    (await fetchUrl(pathOf(wrongAsset.toString()))).statusCode,
    403,
    'a transcript signature does not open the recording',
  );
  const bad = await api(kit.t, account.user).send('GET', `/calls/${recorded.id}/asset-url?asset=video`);
  assert.equal(bad.statusCode, 400);
});

/** A provider callback, signed (or not) like a provider would. */
function providerPost(path: string, body: unknown, options: { secret?: string; at?: number; header?: string } = {}) {
  const raw = JSON.stringify(body);
  const at = options.at ?? Math.floor(kit.clock.now().getTime() / 1000);
  const header = options.header ?? signatureHeader(options.secret ?? SECRET, raw, at);
  return kit.t.app.inject({
    method: 'POST',
    url: `/api/v1/internal/voice-provider/${path}`,
    headers: { 'content-type': 'application/json', ...(header ? { 'x-service-signature': header } : {}) },
    payload: raw,
  });
}

test('post-call: a provider reports a call it carried; the report sets status, transcript, costs; a repeat changes nothing', async () => {
  const db = kit.t.infra.database.db;
  const dialing = await insertCall(db, account.user.accountId, {
    status: 'dialing',
    agentId: account.agentId,
    toNumber: '+14155550100',
    transcript: [],
    costItems: [],
    events: [],
  });
  const answeredAt = new Date(dialing.started_at!.getTime() + 5_000);
  const report = {
    callId: dialing.id,
    providerCallId: 'prov-123',
    status: 'completed',
    answeredAt: answeredAt.toISOString(),
    endedAt: new Date(answeredAt.getTime() + 60_000).toISOString(),
    durationSeconds: 60,
    endReason: 'caller_hangup',
    disposition: 'interested',
    transcript: [
      { speaker: 'agent', text: 'Hello!', startMs: 0, endMs: 900 },
      { speaker: 'caller', text: 'Hi, sure.', startMs: 1300, endMs: 2200 },
    ],
    usage: { llmInputTokens: 1000, llmOutputTokens: 200, ttsCharacters: 300, sttSeconds: 20 },
  };
  const first = await providerPost('post-call', report);
  assert.equal(first.statusCode, 200, first.body);
  assert.deepEqual(first.json(), { callId: dialing.id, status: 'completed', duplicate: false });
  // The reported call is analysed like any other (a job, shortly after): its detail is read once that is done.
  const call = await waitForCall(kit.t, account.user, dialing.id, (c: { status: string; analysis?: unknown }) =>
    Boolean(c.analysis),
  );
  assert.equal(call.status, 'completed');
  assert.equal(call.durationSeconds, 60);
  assert.equal(call.disposition, 'interested');
  assert.deepEqual(
    call.transcript.map((turn: { text: string }) => turn.text),
    ['Hello!', 'Hi, sure.'],
  );
  const telephony = call.costItems.find((item: { kind: string }) => item.kind === 'telephony');
  assert.equal(Number(telephony.quantity), 1, 'one minute');
  assert.equal(
    call.costItems.reduce((sum: bigint, item: { amountUsd: string }) => sum + micros(item.amountUsd), 0n),
    micros(call.totalCostUsd),
  );
  const events = await callEvents(kit.t, account.user, dialing.id);

  const again = await providerPost('post-call', {
    ...report,
    status: 'failed',
    durationSeconds: 5,
    disposition: 'not_interested',
  });
  assert.equal(again.statusCode, 200);
  assert.deepEqual(again.json(), { callId: dialing.id, status: 'completed', duplicate: true });
  assert.deepEqual(await api(kit.t, account.user).ok('GET', `/calls/${dialing.id}`), call, 'nothing changed');
  assert.equal((await callEvents(kit.t, account.user, dialing.id)).length, events.length);
});

test("post-call: a recording key must be under the call's own account's recordings; another is 400 and writes nothing", async () => {
  const db = kit.t.infra.database.db;
  const dialing = await insertCall(db, account.user.accountId, {
    status: 'dialing',
    agentId: account.agentId,
    toNumber: '+14155550100',
    transcript: [],
    costItems: [],
    events: [],
  });
  const before = await api(kit.t, account.user).ok('GET', `/calls/${dialing.id}`);
  const answeredAt = new Date(dialing.started_at!.getTime() + 5_000);
  const report = {
    callId: dialing.id,
    status: 'completed',
    answeredAt: answeredAt.toISOString(),
    endedAt: new Date(answeredAt.getTime() + 30_000).toISOString(),
    durationSeconds: 30,
  };
  // The recording of a call of another account: its signed URL would serve it to this account's members.
  const other = await signUp(kit.t.app);
  const theirs = await insertCall(db, other.accountId, { recordingStorageKey: `recordings/${other.accountId}/x.wav` });
  for (const key of [
    theirs.recording_storage_key!,
    `recordings/${other.accountId}/${dialing.id}.wav`,
    `recordings/${account.user.accountId}.wav`,
    `knowledge/${account.user.accountId}/${dialing.id}.wav`,
    `${dialing.id}.wav`,
  ]) {
    const refused = await providerPost('post-call', { ...report, recordingStorageKey: key });
    assert.equal(refused.statusCode, 400, key);
    assert.deepEqual(
      (errorBody(refused).details.fields as Array<{ field: string }>).map((f) => f.field),
      ['body/recordingStorageKey'],
    );
  }
  assert.deepEqual(await api(kit.t, account.user).ok('GET', `/calls/${dialing.id}`), before, 'nothing written');

  const own = `recordings/${account.user.accountId}/${dialing.id}.wav`;
  const accepted = await providerPost('post-call', { ...report, recordingStorageKey: own });
  assert.equal(accepted.statusCode, 200, accepted.body);
  assert.equal((await api(kit.t, account.user).ok('GET', `/calls/${dialing.id}`)).recordingStorageKey, own);
});

test('provider callbacks need a valid signature of the raw body (401); bad input is 400; unknown calls 404', async () => {
  // Which signatures hold is the rule's own test (calls.rules.test.ts); here, that both routes answer 401 without one.
  const body = { callId: recorded.id, status: 'completed', durationSeconds: 1 };
  const now = Math.floor(kit.clock.now().getTime() / 1000);
  for (const [path, payload] of [
    ['post-call', body],
    ['inbound', { to: '+14155550000', from: '+14155550001' }],
  ] as const) {
    const response = await providerPost(path, payload, { header: '' });
    assert.equal(response.statusCode, 401, path);
    assert.equal(errorBody(response).error, 'unauthorized');
  }
  const tampered = await kit.t.app.inject({
    method: 'POST',
    url: '/api/v1/internal/voice-provider/post-call',
    headers: {
      'content-type': 'application/json',
      'x-service-signature': signatureHeader(SECRET, JSON.stringify(body), now),
    },
    payload: JSON.stringify({ ...body, durationSeconds: 2 }),
  });
  assert.equal(tampered.statusCode, 401, 'the signature covers the exact body');
  const bad = await providerPost('post-call', { callId: recorded.id, status: 'exploded' });
  assert.equal(bad.statusCode, 400);
  assert.equal(errorBody(bad).error, 'validation_failed');
  const badKey = await providerPost('post-call', {
    callId: recorded.id,
    status: 'completed',
    recordingStorageKey: '../etc/passwd',
  });
  assert.equal(badKey.statusCode, 400);
  const early = await providerPost('post-call', {
    callId: recorded.id,
    status: 'completed',
    answeredAt: '2000-01-01T00:00:00.000Z',
  });
  assert.equal(early.statusCode, 400);
  assert.deepEqual(
    (errorBody(early).details.fields as Array<{ field: string }>).map((f) => f.field),
    ['body/answeredAt'],
  );
  const unknown = await providerPost('post-call', {
    callId: '00000000-0000-4000-8000-000000000001',
    status: 'completed',
  });
  assert.equal(unknown.statusCode, 404);
});

test('inbound: a call to a number with an agent is answered by it; without an agent it is refused', async () => {
  const { ok } = api(kit.t, account.user);
  const unrouted = await providerPost('inbound', { to: account.callerNumber, from: '+14155550100' });
  assert.equal(unrouted.statusCode, 409);
  assert.match(errorBody(unrouted).message, /no agent/);
  assert.equal((await providerPost('inbound', { to: '+14155559999', from: '+14155550100' })).statusCode, 404);

  await ok('PATCH', `/phone-numbers/${account.numberId}`, { agentId: account.agentId });
  const answered = await providerPost('inbound', { to: account.callerNumber, from: '+14155550100' });
  assert.equal(answered.statusCode, 200, answered.body);
  assert.equal(answered.json().agentId, account.agentId);
  const call = await waitForCall(kit.t, account.user, answered.json().callId);
  assert.equal(call.direction, 'inbound');
  assert.equal(call.status, 'completed');
  assert.equal(call.contactId, account.contacts.get('+14155550100'), 'the caller is a known contact');
  assert.equal(call.contactPhone, '+14155550100');
  assert.equal(call.toNumber, account.callerNumber);
  assert.equal(call.transcript[0].speaker, 'agent', 'the agent opens');
  const types = (await callEvents(kit.t, account.user, call.id)).map((e) => e.type);
  assert.deepEqual(types.slice(0, 3), ['call.queued', 'call.ringing', 'call.connected']);
  const telephony = call.costItems.find((item: { kind: string }) => item.kind === 'telephony');
  assert.match(telephony.description, /^Inbound minutes/);
  assert.equal((await providerPost('inbound', { to: account.callerNumber, from: 'not-a-number' })).statusCode, 400);
});

test('hangup and inject from the service refuse calls that are not live', async () => {
  const calls = kit.t.services.calls;
  await assert.rejects(calls.hangup(recorded.id), /already ended/);
  await assert.rejects(calls.inject(recorded.id, 'Hello'), /connected call/);
  await assert.rejects(calls.hangup('00000000-0000-4000-8000-000000000001'), /not found/);
  const other = await signUp(kit.t.app);
  assert.equal(
    (await api(kit.t, other).send('GET', `/calls/${recorded.id}/asset-url?asset=recording`)).statusCode,
    404,
  );
});
