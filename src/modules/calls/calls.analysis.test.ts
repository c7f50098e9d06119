/**
 * The post-call analysis through HTTP: an agent declares what to extract, a call on the simulated network ends, and
 * its analysis is on GET /v1/calls/{id} and in the call.completed webhook body (checked against the published
 * schema by the receiver). The job's rules and the model are tested in calls.analysis.service.test.ts.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { signUp, errorBody, type SignedUp } from '../../../test/helpers.js';
import {
  api,
  callingAccount,
  placeCall,
  SALES_AGENT,
  startCallsApp,
  waitForCall,
  type CallingAccount,
  type CallsKit,
} from '../../../test/calls-kit.js';
import { closeReceivers, publishedWebhookBodies, startReceiver } from '../../../test/webhook-receiver.js';

let kit: CallsKit;
let account: CallingAccount;
let other: SignedUp;
const receivers: Array<{ close(): Promise<void> }> = [];

const PHONES = { interested: '+14155550100', callback: '+14155550120', busy: '+14155550106' };
const FIELDS = [
  { name: 'budget', type: 'number', description: 'The monthly budget in dollars' },
  { name: 'preferredDate', type: 'date', description: 'The day that suits them for a demo' },
];

before(async () => {
  kit = await startCallsApp({ env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
  account = await callingAccount(
    kit.t,
    Object.values(PHONES).map((phone) => ({ phone, firstName: 'Ada' })),
    { ...SALES_AGENT, analysis: { fields: FIELDS } },
  );
  other = await signUp(kit.t.app);
});

after(async () => {
  await kit.t.services.webhooks.close();
  await kit.close();
  await closeReceivers(receivers);
});

const analysed = (call: { status: string; analysis?: unknown }) => Boolean(call.analysis);

test('an agent declares the fields to extract; a bad declaration is 400 and writes nothing', async () => {
  const { send, ok } = api(kit.t, account.user);
  const agent = await ok('GET', `/agents/${account.agentId}`);
  assert.deepEqual(agent.analysis, { fields: FIELDS });
  const email = { name: 'email', type: 'email', description: 'Where to send the invite, read back' };
  const saved = await ok('PATCH', `/agents/${account.agentId}`, { analysis: { fields: [...FIELDS, email] } });
  assert.deepEqual(saved.analysis.fields, [...FIELDS, email]);
  assert.equal(saved.version, agent.version, 'a setting: the version stays');

  const refusals: Array<[unknown, string]> = [
    [{ fields: [FIELDS[0], { ...FIELDS[1], name: 'budget' }] }, 'body/analysis/fields/1/name'],
    [{ fields: [{ ...email, type: 'currency' }] }, 'body/analysis/fields/0/type'],
    [{ fields: [{ ...email, name: 'e mail' }] }, 'body/analysis/fields/0/name'],
    [{ fields: [{ ...email, description: 'line one\nline two' }] }, 'body/analysis/fields/0/description'],
    [{ fields: Array.from({ length: 21 }, (_, i) => ({ ...email, name: `f${i}` })) }, 'body/analysis/fields'],
    [{ fields: [{ name: 'budget', type: 'number' }] }, 'body/analysis/fields/0'],
  ];
  for (const [analysis, field] of refusals) {
    const response = await send('PATCH', `/agents/${account.agentId}`, { analysis });
    assert.equal(response.statusCode, 400, JSON.stringify(analysis));
    const body = errorBody(response);
    assert.equal(body.error, 'validation_failed');
    assert.ok(
      JSON.stringify(body.details).includes(field) || body.message.includes(field),
      `${field}: ${response.body}`,
    );
  }
  assert.deepEqual((await ok('GET', `/agents/${account.agentId}`)).analysis.fields, [...FIELDS, email]);
  await ok('PATCH', `/agents/${account.agentId}`, { analysis: { fields: FIELDS } });
});

test('after a call, its analysis is on the call and in the call.completed webhook; another account gets 404', async () => {
  let secret = '';
  const nowSec = () => Math.floor(kit.clock.now().getTime() / 1000);
  const target = await startReceiver({ secret: () => secret, nowSec, bodies: await publishedWebhookBodies(kit.t.app) });
  receivers.push(target);
  const endpoint = await api(kit.t, account.user).ok('POST', '/webhooks', {
    url: target.url,
    events: ['call.completed', 'call.failed'],
  });
  secret = endpoint.secret;

  const callbackId = await placeCall(kit.t, account, PHONES.callback);
  const callback = await waitForCall(kit.t, account.user, callbackId, analysed);
  assert.equal(callback.status, 'completed');
  assert.equal(callback.analysis.outcome, 'callback_requested');
  assert.equal(callback.analysis.missionSucceeded, false);
  assert.equal(callback.analysis.method, 'transcript');
  // "Call me back tomorrow", said on Monday morning in San Francisco (the number's zone): Tuesday 10:00 PST.
  assert.deepEqual(callback.analysis.callback, {
    asked: 'tomorrow',
    at: '2026-03-03T18:00:00.000Z',
    timeZone: 'America/Los_Angeles',
  });
  assert.equal(callback.callbackAt, '2026-03-03T18:00:00.000Z');
  assert.deepEqual(callback.analysis.fields, { budget: null, preferredDate: null });
  assert.ok(callback.analysis.summary.includes('asked to be called back tomorrow'), callback.analysis.summary);
  assert.ok(callback.analysis.nextSteps.length > 0);

  const interestedId = await placeCall(kit.t, account, PHONES.interested);
  const interested = await waitForCall(kit.t, account.user, interestedId, analysed);
  assert.equal(interested.analysis.outcome, 'interested');
  assert.equal(interested.analysis.missionSucceeded, true);
  assert.equal(interested.callbackAt, null);
  assert.equal(interested.analysis.callback, null);

  const busyId = await placeCall(kit.t, account, PHONES.busy);
  const busy = await waitForCall(kit.t, account.user, busyId);
  assert.equal(busy.status, 'busy');

  const bodies = async () => {
    for (let i = 0; i < 400; i++) {
      const got = target.received.filter((r) => !r.duplicate);
      if (got.length >= 3) return got;
      await sleep(50);
    }
    throw new Error(`the webhooks did not arrive: ${target.received.length}`);
  };
  const byCall = new Map((await bodies()).map((r) => [r.body.data.callId, r.body]));
  for (const call of [callback, interested]) {
    const body = byCall.get(call.id)!;
    assert.equal(body.type, 'call.completed');
    assert.deepEqual(body.data.analysis, call.analysis, 'the webhook carries the analysis the call shows');
  }
  assert.equal(byCall.get(busyId)!.type, 'call.failed');
  assert.equal('analysis' in byCall.get(busyId)!.data, false);
  assert.equal(busy.analysis, null, 'a call nobody answered has no analysis');
  assert.deepEqual(target.invalid, [], 'every body as published');

  const foreign = await api(kit.t, other).send('GET', `/calls/${callbackId}`);
  assert.equal(foreign.statusCode, 404);
  assert.equal(errorBody(foreign).error, 'not_found');
});
