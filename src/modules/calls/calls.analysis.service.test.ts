/**
 * The post-call analysis job through the service (no HTTP, no workers): what it writes for a call, the callback due
 * time in the callee's zone, the call.completed event it sends with the analysis, the agent's model (a local server
 * speaking OpenAI's protocol) with its tokens on the call's costs, and the built-in extractor when the model is
 * missing or its answer cannot be used. The HTTP contract and the webhook body are in calls.analysis.test.ts.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestServices, newAccount, type TestServices } from '../../../test/service-kit.js';
import { insertCall, insertContact, type SeedCall } from '../../../test/factories/index.js';
import { replyWith, startUpstream, type Upstream } from '../../../test/openai-upstream.js';

let t: TestServices;
let upstream: Upstream;

before(async () => {
  upstream = await startUpstream();
  t = await buildTestServices({ env: { LLM_TIMEOUT_MS: '3000' } });
  await t.services.catalog.createModel('llm', {
    slug: 'analysis-model',
    name: 'Local analysis model',
    provider: 'openai-compatible',
    baseUrl: upstream.baseUrl,
    model: 'test-model',
    apiKey: 'sk-test',
    inputPer1kTokensUsd: '0.5',
    outputPer1kTokensUsd: '1.5',
  });
});
after(async () => {
  await t.close();
  await upstream.close();
});

const FIELDS = [
  { name: 'budget', type: 'number' as const, description: 'The monthly budget in dollars' },
  { name: 'email', type: 'email' as const, description: 'Where to send the invite, read back' },
  { name: 'preferredDate', type: 'date' as const, description: 'The day that suits them for a demo' },
];

// The call ends on Monday 2 March 2026 at 15:00 UTC: 16:00 in Berlin.
const ENDED = new Date('2026-03-02T15:00:00.000Z');
const CALLBACK_CALL: SeedCall['transcript'] = [
  { speaker: 'agent', text: 'Hi, this is Sally from Acme. Do you have a minute?' },
  { speaker: 'caller', text: 'Not really. What budget are we talking about? Ours is about 2,000 dollars a month.' },
  { speaker: 'agent', text: 'That works. What is the best email for the details?' },
  { speaker: 'caller', text: 'ada at example dot com. But call me back tomorrow after 3, I am in a meeting.' },
  { speaker: 'agent', text: 'Of course, I will call you back then. Goodbye!' },
];

async function setUp(agentBody: Record<string, unknown> = {}) {
  const account = await newAccount(t);
  const agent = await t.services.agents.create(account.auth, {
    name: 'Sales Sally',
    mission: 'Book a demo.',
    analysis: { fields: FIELDS },
    ...agentBody,
  });
  const contact = await insertContact(t.db, account.accountId, {
    firstName: 'Ada',
    lastName: 'Lovelace',
    phone: '+14155550123',
  });
  await t.db
    .updateTable('contacts')
    .set({ timezone: 'Europe/Berlin' })
    .where('id', '=', contact.id)
    .where('account_id', '=', account.accountId)
    .execute();
  const call = (seed: SeedCall) =>
    insertCall(t.db, account.accountId, {
      agentId: agent.id,
      contactId: contact.id,
      createdAt: new Date(ENDED.getTime() - 60_000),
      endedAt: ENDED,
      answeredAt: new Date(ENDED.getTime() - 30_000),
      durationSeconds: 30,
      disposition: 'callback_requested',
      transcript: CALLBACK_CALL,
      costItems: [],
      ...seed,
    });
  return { ...account, agent, contact, call };
}

const completedEvents = (accountId: string, callId: string) =>
  t.db
    .selectFrom('domain_events')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('type', '=', 'call.completed')
    .where('subject_id', '=', callId)
    .execute();

test('without a model: the built-in extractor writes the analysis once, with the callback due in the callee’s zone', async () => {
  const { accountId, auth, call } = await setUp();
  const { id } = await call({});
  assert.deepEqual(await t.services.calls.analyzeCall(accountId, id), {
    analyzed: true,
    method: 'transcript',
    outcome: 'callback_requested',
  });
  const detail = await t.services.calls.get(auth, id);
  // Tomorrow after 3 in Berlin (CET, UTC+1).
  assert.equal(detail.callbackAt, '2026-03-03T14:00:00.000Z');
  const analysis = detail.analysis!;
  assert.equal(analysis.outcome, 'callback_requested');
  assert.equal(analysis.missionSucceeded, false);
  assert.deepEqual(analysis.callback, {
    asked: 'tomorrow after 3',
    at: '2026-03-03T14:00:00.000Z',
    timeZone: 'Europe/Berlin',
  });
  assert.deepEqual(analysis.fields, { budget: 2000, email: 'ada@example.com', preferredDate: null });
  assert.deepEqual(analysis.nextSteps, ['Call Ada back at Tuesday 3 March, 15:00 (Europe/Berlin).']);
  assert.equal(analysis.method, 'transcript');
  assert.equal(analysis.model, null);
  assert.deepEqual(detail.costItems, [], 'the extractor costs nothing');

  const [event, ...more] = await completedEvents(accountId, id);
  assert.equal(more.length, 0);
  assert.deepEqual(event!.data.analysis, analysis, 'call.completed carries the analysis');
  assert.equal(event!.data.callbackAt, '2026-03-03T14:00:00.000Z');
  assert.equal(event!.data.status, 'completed');

  assert.deepEqual(await t.services.calls.analyzeCall(accountId, id), { analyzed: false }, 'analysed once');
  assert.equal((await completedEvents(accountId, id)).length, 1, 'and announced once');
});

test('an answered call that failed is analysed without a call.completed; an unanswered one is not analysed', async () => {
  const { accountId, auth, call } = await setUp();
  const lost = await call({ status: 'failed', endReason: 'worker_lost' });
  assert.equal((await t.services.calls.analyzeCall(accountId, lost.id)).analyzed, true);
  assert.equal((await t.services.calls.get(auth, lost.id)).analysis?.outcome, 'callback_requested');
  assert.equal((await completedEvents(accountId, lost.id)).length, 0);
  const busy = await call({ status: 'busy', answeredAt: null, durationSeconds: 0, transcript: [] });
  assert.deepEqual(await t.services.calls.analyzeCall(accountId, busy.id), { analyzed: false });
  assert.equal((await t.services.calls.get(auth, busy.id)).analysis, null);
  const live = await call({ status: 'connected', endedAt: null });
  assert.deepEqual(await t.services.calls.analyzeCall(accountId, live.id), { analyzed: false }, 'not before it ends');
});

const MODEL_ANSWER = {
  summary: 'Sally called Ada, who asked for a callback tomorrow afternoon.',
  outcome: 'callback_requested',
  missionSucceeded: false,
  missionReason: 'Ada was in a meeting.',
  nextSteps: ['Call Ada back tomorrow at 15:00 her time.'],
  callback: { asked: 'tomorrow after 3', localTime: '2026-03-03T15:30' },
  fields: { budget: '2000', email: 'ADA@example.com', preferredDate: 'next week' },
};

test('with a model: it writes the analysis, its tokens are itemized on the call, bad values fall back', async () => {
  const { accountId, auth, call } = await setUp({ liveLlmId: 'analysis-model' });
  const { id } = await call({ costItems: [] });
  const before = upstream.requests.length;
  upstream.handler = replyWith([JSON.stringify(MODEL_ANSWER)], [1200, 150]);
  assert.deepEqual(await t.services.calls.analyzeCall(accountId, id), {
    analyzed: true,
    method: 'model',
    outcome: 'callback_requested',
  });
  assert.equal(upstream.requests.length, before + 1);
  const request = upstream.last().body;
  assert.equal(request.model, 'test-model');
  assert.equal(request.response_format.type, 'json_schema');
  assert.deepEqual(request.response_format.json_schema.schema.properties.fields.required, [
    'budget',
    'email',
    'preferredDate',
  ]);
  const prompt = request.messages.map((m: { content: string }) => m.content).join('\n');
  assert.match(prompt, /Person: ada at example dot com/);
  assert.match(prompt, /2026-03-02 16:00 \(Monday\), time zone Europe\/Berlin/);
  assert.match(prompt, /- budget \(number\): The monthly budget in dollars/);

  const detail = await t.services.calls.get(auth, id);
  const analysis = detail.analysis!;
  assert.equal(analysis.method, 'model');
  assert.equal(analysis.model, 'openai:test-model');
  assert.equal(analysis.summary, MODEL_ANSWER.summary);
  // The model's local time, read in Berlin: 15:30 CET.
  assert.equal(detail.callbackAt, '2026-03-03T14:30:00.000Z');
  // "2000" is read as the number; the email is kept in lower case; "next week" is no date, so the extractor's (none).
  assert.deepEqual(analysis.fields, { budget: 2000, email: 'ada@example.com', preferredDate: null });
  assert.deepEqual(
    detail.costItems.map(({ kind, description, quantity, amountUsd }) => ({ kind, description, quantity, amountUsd })),
    [
      {
        kind: 'llm',
        description: 'Call analysis, Local analysis model: input tokens',
        quantity: '1.200000',
        amountUsd: '0.600000',
      },
      {
        kind: 'llm',
        description: 'Call analysis, Local analysis model: output tokens',
        quantity: '0.150000',
        amountUsd: '0.225000',
      },
    ],
  );
  assert.equal(detail.totalCostUsd, '0.825000');
  const [event] = await completedEvents(accountId, id);
  assert.equal(event!.data.totalCostUsd, '0.825000', 'call.completed has the total with the analysis');
});

test('a model answer that is not the JSON asked for, or a failing model: the built-in analysis stands', async () => {
  const { accountId, auth, call } = await setUp({ liveLlmId: 'analysis-model' });
  const garbled = await call({});
  upstream.handler = replyWith(['Sure! Here is a summary: Ada wants a callback.'], [900, 20]);
  assert.equal((await t.services.calls.analyzeCall(accountId, garbled.id)).method, 'transcript');
  const detail = await t.services.calls.get(auth, garbled.id);
  assert.equal(detail.analysis!.method, 'transcript');
  assert.equal(detail.callbackAt, '2026-03-03T14:00:00.000Z');
  assert.equal(detail.costItems.length, 2, 'the tokens spent are still charged');

  const failing = await call({});
  upstream.handler = (_req, res) => void res.writeHead(500, { 'content-type': 'application/json' }).end('{}');
  assert.equal((await t.services.calls.analyzeCall(accountId, failing.id)).method, 'transcript');
  assert.deepEqual((await t.services.calls.get(auth, failing.id)).costItems, []);
  assert.equal((await completedEvents(accountId, failing.id)).length, 1, 'the call is still announced');
});

test('an agent on the built-in playbook engine never asks a model', async () => {
  const { accountId, call } = await setUp({ liveLlmId: 'parley-playbook' });
  const { id } = await call({});
  const before = upstream.requests.length;
  assert.equal((await t.services.calls.analyzeCall(accountId, id)).method, 'transcript');
  assert.equal(upstream.requests.length, before);
});
