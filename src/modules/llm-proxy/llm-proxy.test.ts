/**
 * The LLM proxy through HTTP, against a local OpenAI-compatible upstream registered in the model catalog: the agent's
 * prompt and retrieved knowledge go in front, answers come back whole or streamed, tool calls pass both ways, usage
 * becomes cost items of the named call, per-call tokens are scoped and end with their call, and upstream failures are
 * 502s that give nothing away. Every answer lists the knowledge retrieved for its turn (parley_knowledge).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { asKey, buildTestApp, call, errorBody, signUp, type SignedUp, type TestApp } from '../../../test/helpers.js';
import { insertCall } from '../../../test/factories/calls.js';
import {
  replyWith,
  sendEvents,
  startUpstream,
  textChunk,
  usageChunk,
  type Upstream,
} from '../../../test/openai-upstream.js';
import { startJobWorkers, type JobWorkers } from '../../background.js';
import { LEVELS, loggingApp } from '../../../test/log-capture.js';
import { excerptOf } from './llm-proxy.service.js';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';

const UPSTREAM_KEY = 'sk-upstream-secret-4b1d9c7e2f';
const KNOWLEDGE = [
  '# Plans',
  'The Starter plan costs 49 dollars a month and includes 500 call minutes.',
  '',
  '# Refunds',
  'Refunds are granted within 30 days of purchase when fewer than 100 minutes were used.',
  '',
  '# Office',
  'Our office is in Lisbon, open Monday to Friday from 9 to 18.',
].join('\n');

let t: TestApp;
let upstream: Upstream;
let workers: JobWorkers;
let owner: SignedUp;
let agentId: string;
let playbookAgentId: string;

async function waitIndexed(user: SignedUp, id: string) {
  for (let i = 0; i < 200; i++) {
    const agent = (await call(asKey(user), 'GET', `/agents/${id}`)).json();
    if (agent.knowledgeIndex && !agent.knowledgeIndex.pending) return agent.knowledgeIndex;
    await sleep(50);
  }
  throw new Error('the knowledge was not indexed in time');
}

before(async () => {
  upstream = await startUpstream();
  t = await buildTestApp({ env: { LLM_TIMEOUT_MS: '1500', RATE_LIMIT_PER_MINUTE: '100000' } });
  workers = await startJobWorkers({
    db: t.infra.database.db,
    services: t.services,
    log: pino({ level: 'silent' }),
    pollingIntervalSeconds: 0.5,
  });
  const operator = await signUp(t.app);
  await t.infra.database.db
    .updateTable('users')
    .set({ is_platform_admin: true })
    .where('id', '=', operator.userId)
    .execute();
  const model = await call({ app: t.app, headers: { cookie: operator.cookie } }, 'POST', '/admin/models/llm', {
    slug: 'local-model',
    name: 'Local test model',
    provider: 'openai-compatible',
    baseUrl: upstream.baseUrl,
    model: 'test-model',
    apiKey: UPSTREAM_KEY,
    inputPer1kTokensUsd: '0.5',
    outputPer1kTokensUsd: '1.5',
  });
  assert.equal(model.statusCode, 200, model.body);
  owner = await signUp(t.app);
  const agent = await call(asKey(owner), 'POST', '/agents', {
    name: 'Ada',
    mission: 'Sell the Starter plan.',
    knowledgeBase: KNOWLEDGE,
    voice: 'en-us',
    liveLlmId: 'local-model',
  });
  assert.equal(agent.statusCode, 200, agent.body);
  agentId = agent.json().id;
  playbookAgentId = (await call(asKey(owner), 'POST', '/agents', { name: 'Bob', firstMessage: 'Hi, Bob here.' })).json()
    .id;
  await waitIndexed(owner, agentId);
});

after(async () => {
  await workers.stop(5_000);
  await t.close();
  await upstream.close();
});

const proxy = (
  who: { headers: Record<string, string> },
  body: unknown,
  options: { agent?: string; headers?: Record<string, string> } = {},
) =>
  call(
    { app: t.app, headers: who.headers },
    'POST',
    `/llm-proxy/${options.agent ?? agentId}/chat/completions`,
    body as object,
    { headers: options.headers ?? {} },
  );

function sseEvents(body: string) {
  return body
    .split('\n\n')
    .filter(Boolean)
    .map((event) => event.replace(/^data: /, ''));
}

test('non-streaming: the agent prompt and the knowledge for the last user turn go in front; the answer is a chat.completion', async () => {
  upstream.handler = replyWith(['Refunds are ', 'granted within 30 days.'], [321, 9]);
  const response = await proxy(asKey(owner), {
    model: 'whatever',
    messages: [
      { role: 'system', content: 'Speak briefly.' },
      { role: 'user', content: [{ type: 'text', text: 'Can I get a refund for my purchase?' }] },
    ],
    temperature: 0.2,
  });
  assert.equal(response.statusCode, 200, response.body);
  const body = response.json();
  assert.equal(body.object, 'chat.completion');
  assert.equal(body.choices[0].message.content, 'Refunds are granted within 30 days.');
  assert.equal(body.choices[0].finish_reason, 'stop');
  assert.deepEqual(body.usage, { prompt_tokens: 321, completion_tokens: 9, total_tokens: 330 });

  const sent = upstream.last();
  assert.equal(sent.path, '/v1/chat/completions');
  assert.equal(sent.headers.authorization, `Bearer ${UPSTREAM_KEY}`);
  assert.equal(sent.body.model, 'test-model');
  assert.equal(sent.body.temperature, 0.2);
  const [ours, theirs, user] = sent.body.messages;
  assert.equal(ours.role, 'system');
  assert.match(ours.content, /## Mission\nSell the Starter plan\./);
  assert.match(ours.content, /## Knowledge base\n### Refunds\nRefunds are granted within 30 days/);
  assert.ok(!ours.content.includes('Lisbon'), 'only the retrieved chunks, not the whole knowledge base');
  assert.deepEqual(theirs, { role: 'system', content: 'Speak briefly.' });
  assert.deepEqual(user, { role: 'user', content: 'Can I get a refund for my purchase?' });

  // The answer names what the model was given: the Refunds chunk, as it is stored.
  const knowledge = body.parley_knowledge as Array<{
    id: string;
    source: string | null;
    excerpt: string;
    score: number;
  }>;
  assert.ok(knowledge.length >= 1, 'knowledge listed');
  const [best] = knowledge;
  assert.equal(best!.source, 'Refunds');
  assert.equal(best!.excerpt, 'Refunds are granted within 30 days of purchase when fewer than 100 minutes were used.');
  assert.ok(best!.score > 0);
  const stored = await t.infra.database.db
    .selectFrom('knowledge_chunks')
    .select(['id', 'heading'])
    .where('agent_id', '=', agentId)
    .execute();
  const headingOf = new Map(stored.map((row) => [row.id, row.heading]));
  for (const chunk of knowledge) {
    assert.equal(headingOf.get(chunk.id), chunk.source, "each chunk is one of the agent's, named by its headings");
    assert.ok(ours.content.includes(chunk.excerpt), 'and each was in the prompt');
  }
  assert.ok(!knowledge.some((chunk) => chunk.source === 'Office'), 'only what was retrieved');
});

test('an agent without a knowledge base, or a turn that matches none of it, lists no knowledge', async () => {
  const bare = await proxy(
    asKey(owner),
    { messages: [{ role: 'user', content: 'Refund?' }] },
    { agent: playbookAgentId },
  );
  assert.equal(bare.statusCode, 200, bare.body);
  assert.deepEqual(bare.json().parley_knowledge, []);
  const streamed = await proxy(
    asKey(owner),
    { messages: [{ role: 'user', content: 'Refund?' }], stream: true },
    { agent: playbookAgentId },
  );
  const finish = sseEvents(streamed.body)
    .slice(0, -1)
    .map((event) => JSON.parse(event))
    .find((chunk) => chunk.choices[0]?.finish_reason);
  assert.deepEqual(finish.parley_knowledge, []);

  upstream.handler = replyWith(['Hello!']);
  const unmatched = await proxy(asKey(owner), { messages: [{ role: 'user', content: 'zzyzx quokka' }] });
  assert.equal(unmatched.statusCode, 200, unmatched.body);
  assert.deepEqual(unmatched.json().parley_knowledge, []);
  assert.doesNotMatch(upstream.last().body.messages[0].content, /## Knowledge base/);
});

test('an excerpt is the chunk in short: whitespace collapsed, cut at a word, marked when cut', () => {
  assert.equal(excerptOf('  Open\n\n9 to   5. '), 'Open 9 to 5.');
  const long = `${'word '.repeat(100)}end`;
  const excerpt = excerptOf(long);
  assert.ok(excerpt.length <= 240);
  assert.match(excerpt, /^word( word)+…$/);
  assert.equal(excerptOf('x'.repeat(300)).length, 240, 'a single long word is cut where it must be');
});

test('streaming: chat.completion.chunk events as the upstream sends them, usage when asked, then [DONE]', async () => {
  upstream.handler = replyWith(['Our office ', 'is in ', 'Lisbon.'], [50, 6]);
  const response = await proxy(asKey(owner), {
    messages: [{ role: 'user', content: 'Where is your office?' }],
    stream: true,
    stream_options: { include_usage: true },
  });
  assert.equal(response.statusCode, 200);
  assert.match(response.headers['content-type'] as string, /^text\/event-stream/);
  const events = sseEvents(response.body);
  assert.equal(events.at(-1), '[DONE]');
  const chunks = events.slice(0, -1).map((event) => JSON.parse(event));
  assert.ok(chunks.every((chunk) => chunk.object === 'chat.completion.chunk' && chunk.id === chunks[0].id));
  assert.equal(chunks[0].choices[0].delta.role, 'assistant');
  assert.equal(
    chunks.flatMap((chunk) => chunk.choices.map((c: any) => c.delta.content ?? '')).join(''),
    'Our office is in Lisbon.',
  );
  assert.equal(chunks.at(-2).choices[0].finish_reason, 'stop');
  assert.deepEqual(chunks.at(-1).usage, { prompt_tokens: 50, completion_tokens: 6, total_tokens: 56 });
  assert.match(upstream.last().body.messages[0].content, /### Office\nOur office is in Lisbon/);
  // The knowledge comes once, on the chunk that finishes the choice.
  const finish = chunks.at(-2);
  assert.equal(finish.parley_knowledge[0].source, 'Office');
  assert.match(finish.parley_knowledge[0].excerpt, /^Our office is in Lisbon/);
  assert.equal(chunks.filter((chunk) => 'parley_knowledge' in chunk).length, 1);
});

test('tool calls pass through both ways, streamed and whole', async () => {
  const toolCallEvents = [
    {
      choices: [
        {
          index: 0,
          delta: {
            tool_calls: [
              { index: 0, id: 'call_1', type: 'function', function: { name: 'book_demo', arguments: '{"day":' } },
            ],
          },
          finish_reason: null,
        },
      ],
    },
    {
      choices: [
        {
          index: 0,
          delta: { tool_calls: [{ index: 0, function: { arguments: '"friday"}' } }] },
          finish_reason: 'tool_calls',
        },
      ],
    },
    usageChunk(80, 12),
  ];
  upstream.handler = (_req, res) => sendEvents(res, toolCallEvents);
  const tools = [
    {
      type: 'function',
      function: {
        name: 'book_demo',
        description: 'Book a demo',
        parameters: { type: 'object', properties: { day: { type: 'string' } } },
      },
    },
  ];
  const whole = await proxy(asKey(owner), {
    messages: [{ role: 'user', content: 'Book me for friday' }],
    tools,
    tool_choice: 'auto',
  });
  assert.equal(whole.statusCode, 200, whole.body);
  const message = whole.json().choices[0].message;
  assert.equal(message.content, null);
  assert.deepEqual(message.tool_calls, [
    { id: 'call_1', type: 'function', function: { name: 'book_demo', arguments: '{"day":"friday"}' } },
  ]);
  assert.equal(whole.json().choices[0].finish_reason, 'tool_calls');
  assert.deepEqual(upstream.last().body.tools, [
    {
      type: 'function',
      function: { name: 'book_demo', description: 'Book a demo', parameters: tools[0]!.function.parameters },
    },
  ]);
  assert.equal(upstream.last().body.tool_choice, 'auto');

  upstream.handler = (_req, res) => sendEvents(res, toolCallEvents);
  const streamed = await proxy(asKey(owner), {
    messages: [{ role: 'user', content: 'Book me for friday' }],
    tools,
    stream: true,
  });
  const deltas = sseEvents(streamed.body)
    .slice(0, -1)
    .map((event) => JSON.parse(event).choices[0]?.delta.tool_calls?.[0])
    .filter(Boolean);
  assert.deepEqual(deltas[0], {
    index: 0,
    id: 'call_1',
    type: 'function',
    function: { name: 'book_demo', arguments: '{"day":' },
  });
  assert.equal(deltas.map((d: any) => d.function.arguments).join(''), '{"day":"friday"}');

  upstream.handler = replyWith(['Booked for Friday.']);
  const followUp = await proxy(asKey(owner), {
    messages: [
      { role: 'user', content: 'Book me for friday' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'book_demo', arguments: '{"day":"friday"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: '{"booked":true}' },
    ],
    tools,
  });
  assert.equal(followUp.statusCode, 200, followUp.body);
  const forwarded = upstream.last().body.messages.slice(1);
  assert.deepEqual(forwarded[1].tool_calls, [
    { id: 'call_1', type: 'function', function: { name: 'book_demo', arguments: '{"day":"friday"}' } },
  ]);
  assert.deepEqual(forwarded[2], { role: 'tool', content: '{"booked":true}', tool_call_id: 'call_1' });
  const noToolCallId = await proxy(asKey(owner), { messages: [{ role: 'tool', content: 'x' }] });
  assert.equal(noToolCallId.statusCode, 400);
  assert.equal(errorBody(noToolCallId).error, 'validation_failed');
});

test('a named call gets the usage as priced cost items and the retrieved chunk ids on its timeline', async () => {
  const callId = (await insertCall(t.infra.database.db, owner.accountId, { agentId, status: 'connected' })).id;
  upstream.handler = replyWith(['It costs 49 dollars.'], [2000, 1000]);
  const byHeader = await proxy(
    asKey(owner),
    { messages: [{ role: 'user', content: 'How much does the Starter plan cost?' }] },
    { headers: { 'x-parley-call-id': callId } },
  );
  assert.equal(byHeader.statusCode, 200, byHeader.body);
  upstream.handler = replyWith(['Yes.'], [1000, 0]);
  const byMetadata = await proxy(asKey(owner), {
    messages: [{ role: 'user', content: 'Really?' }],
    metadata: { callId },
    stream: true,
  });
  assert.equal(byMetadata.statusCode, 200);

  const detail = (await call(asKey(owner), 'GET', `/calls/${callId}`)).json();
  const llm = detail.costItems.filter((item: any) => item.kind === 'llm');
  assert.deepEqual(
    llm.map((item: any) => [item.description, item.quantity, item.amountUsd]),
    [
      ['Local test model: input tokens', '2.000000', '1.000000'],
      ['Local test model: output tokens', '1.000000', '1.500000'],
      ['Local test model: input tokens', '1.000000', '0.500000'],
      ['Local test model: output tokens', '0.000000', '0.000000'],
    ],
  );
  const events = (await call(asKey(owner), 'GET', `/calls/${callId}/events?type=call.knowledge_retrieved`)).json()
    .events;
  assert.equal(events.length, 1, 'the second turn matched no knowledge');
  const chunkIds = events[0].data.chunkIds as string[];
  assert.ok(chunkIds.length >= 1);
  assert.deepEqual(
    byHeader.json().parley_knowledge.map((chunk: { id: string }) => chunk.id),
    chunkIds,
    'the answer and the timeline name the same chunks',
  );
  const chunk = await t.infra.database.db
    .selectFrom('knowledge_chunks')
    .select('heading')
    .where('id', '=', chunkIds[0]!)
    .executeTakeFirstOrThrow();
  assert.equal(chunk.heading, 'Plans');
});

test('a per-call token works for its agent and call only, and ends with the call', async () => {
  const live = (
    await insertCall(t.infra.database.db, owner.accountId, {
      agentId,
      status: 'connected',
      createdAt: new Date(Date.now() - 60_000),
    })
  ).id;
  const issued = await t.services.calls.llmCallToken(owner.accountId, live);
  assert.ok(issued?.token.startsWith('pct_'));
  const bearer = { headers: { authorization: `Bearer ${issued!.token}` } };
  upstream.handler = replyWith(['Hello from the call.'], [10, 4]);
  const ok = await proxy(bearer, { messages: [{ role: 'user', content: 'Hi' }] });
  assert.equal(ok.statusCode, 200, ok.body);
  const charged = (await call(asKey(owner), 'GET', `/calls/${live}`))
    .json()
    .costItems.filter((item: any) => item.kind === 'llm');
  assert.equal(charged.length, 2, 'the token names its call: its usage is charged there');

  const otherAgent = await proxy(bearer, { messages: [{ role: 'user', content: 'Hi' }] }, { agent: playbookAgentId });
  assert.equal(otherAgent.statusCode, 403);
  const otherCall = await proxy(
    bearer,
    { messages: [{ role: 'user', content: 'Hi' }] },
    { headers: { 'x-parley-call-id': '00000000-0000-4000-8000-000000000001' } },
  );
  assert.equal(otherCall.statusCode, 403);
  const elsewhere = await call({ app: t.app, ...bearer }, 'GET', `/agents/${agentId}`);
  assert.equal(elsewhere.statusCode, 401, 'a call token opens the proxy and nothing else');
  const forged = await proxy(
    { headers: { authorization: `Bearer ${issued!.token.slice(0, -2)}xx` } },
    { messages: [{ role: 'user', content: 'Hi' }] },
  );
  assert.equal(forged.statusCode, 401);
  // Only the token exactly as issued: nothing appended, nothing re-encoded.
  const [payload, signature] = issued!.token.slice('pct_'.length).split('.') as [string, string];
  for (const altered of [
    `${issued!.token}.x`,
    `${issued!.token}.`,
    `${issued!.token}.${signature}`,
    `${issued!.token}=`,
    `pct_${payload}=.${signature}`,
    `pct_${payload}.${signature}.${payload}`,
    `PCT_${payload}.${signature}`,
  ]) {
    const response = await proxy(
      { headers: { authorization: `Bearer ${altered}` } },
      {
        messages: [{ role: 'user', content: 'Hi' }],
      },
    );
    assert.equal(response.statusCode, 401, altered);
  }

  // The call ends as a voice provider reports it.
  assert.equal((await t.services.calls.postCall({ callId: live, status: 'completed' })).status, 'completed');
  const ended = await proxy(bearer, { messages: [{ role: 'user', content: 'Hi' }] });
  assert.equal(ended.statusCode, 401);
  assert.match(errorBody(ended).message, /expired|ends with its call/);
});

test('upstream errors and timeouts are 502 upstream_error, without the upstream address or key', async () => {
  upstream.handler = (_req, res) => {
    res.writeHead(500, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message: `model overloaded (key ${UPSTREAM_KEY})` } }));
  };
  const failed = await proxy(asKey(owner), { messages: [{ role: 'user', content: 'Hi' }] });
  assert.equal(failed.statusCode, 502);
  const body = errorBody(failed);
  assert.equal(body.error, 'upstream_error');
  assert.match(body.message, /answered 500: model overloaded/);
  assert.ok(!failed.body.includes(UPSTREAM_KEY) && !failed.body.includes('127.0.0.1'), failed.body);

  upstream.handler = () => {}; // never answers
  const slow = await proxy(asKey(owner), { messages: [{ role: 'user', content: 'Hi' }], stream: true });
  assert.equal(slow.statusCode, 502);
  assert.match(errorBody(slow).message, /did not answer in time/);

  upstream.handler = (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(`data: ${JSON.stringify(textChunk('Half an '))}\n\n`);
    res.end(`data: ${JSON.stringify({ error: { message: 'the model crashed' } })}\n\n`);
  };
  const broken = await proxy(asKey(owner), { messages: [{ role: 'user', content: 'Hi' }], stream: true });
  assert.equal(broken.statusCode, 200, 'the stream had started');
  const events = sseEvents(broken.body);
  assert.notEqual(events.at(-1), '[DONE]');
  assert.equal(JSON.parse(events.at(-1)!).error.code, 'upstream_error');
});

test('without a model of its own the agent is answered by the playbook engine', async () => {
  const response = await proxy(
    asKey(owner),
    { messages: [{ role: 'user', content: 'Hello?' }] },
    { agent: playbookAgentId },
  );
  assert.equal(response.statusCode, 200, response.body);
  assert.equal(response.json().model, 'parley-playbook');
  assert.equal(response.json().choices[0].message.content, 'Hi, Bob here.');
});

test('a bad body is a 400 error body; another account, its agent and its call are 404', async () => {
  for (const body of [
    { messages: [] },
    { messages: [{ role: 'robot', content: 'x' }] },
    { messages: [{ role: 'user', content: 'x' }], temperature: 7 },
  ]) {
    const response = await proxy(asKey(owner), body);
    assert.equal(response.statusCode, 400, JSON.stringify(body));
    assert.equal(errorBody(response).error, 'validation_failed');
  }
  const badHeader = await proxy(
    asKey(owner),
    { messages: [{ role: 'user', content: 'x' }] },
    { headers: { 'x-parley-call-id': 'nope' } },
  );
  assert.equal(badHeader.statusCode, 400);

  const stranger = await signUp(t.app);
  const notTheirs = await proxy(asKey(stranger), { messages: [{ role: 'user', content: 'Where is your office?' }] });
  assert.equal(notTheirs.statusCode, 404);
  assert.equal(errorBody(notTheirs).error, 'not_found');
  assert.doesNotMatch(notTheirs.body, /Lisbon|parley_knowledge/, "nothing of the agent's knowledge");
  const theirAgent = (await call(asKey(stranger), 'POST', '/agents', { name: 'Eve' })).json().id;
  const theirCall = (
    await insertCall(t.infra.database.db, stranger.accountId, { agentId: theirAgent, status: 'connected' })
  ).id;
  const response = await proxy(
    asKey(owner),
    { messages: [{ role: 'user', content: 'x' }] },
    { headers: { 'x-parley-call-id': theirCall } },
  );
  assert.equal(response.statusCode, 404);
  const items = await t.infra.database.db
    .selectFrom('call_cost_items')
    .select('id')
    .where('call_id', '=', theirCall)
    .execute();
  assert.equal(items.length, 0);
});

test('a client that goes away and an upstream that fails are logged at warn, without a stack', async () => {
  const logged = await loggingApp(t, { level: 'info' });
  try {
    await logged.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = logged.app.server.address() as AddressInfo;
    let reached = () => {};
    /** A streamed request the client drops once the upstream has it (and, when asked, once the first piece is in). */
    const dropped = (afterFirstPiece: boolean) =>
      new Promise<void>((resolve, reject) => {
        const upstreamHasIt = new Promise<void>((resolve) => (reached = resolve));
        const req = httpRequest({
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: `/api/v1/llm-proxy/${agentId}/chat/completions`,
          headers: { ...asKey(owner).headers, 'content-type': 'application/json' },
        });
        req.on('error', () => resolve());
        req.on('response', (res) => res.once('data', () => (req.destroy(), resolve())));
        req.end(JSON.stringify({ messages: [{ role: 'user', content: 'Hi' }], stream: true }));
        if (!afterFirstPiece) upstreamHasIt.then(() => (req.destroy(), resolve()), reject);
      });
    const logLines = async (count: number) => {
      for (let i = 0; i < 100 && logged.lines().filter((line) => line.level >= LEVELS.warn).length < count; i++)
        await sleep(50);
      return logged.lines().filter((line) => line.level >= LEVELS.warn);
    };

    // Before the first piece: the upstream has the request and has not answered.
    upstream.handler = () => reached();
    await dropped(false);
    const [gone] = await logLines(1);
    assert.equal(gone?.msg, 'the client went away before the model answered');

    // Mid-stream: the first piece is out, then the upstream waits. Nobody is left to tell: nothing to log.
    upstream.handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify(textChunk('Hello'))}\n\n`);
      reached();
    };
    await dropped(true);

    // The upstream never answers (502), then fails mid-stream (an error event ends the stream).
    upstream.handler = () => {};
    const response = await logged.app.inject({
      method: 'POST',
      url: `/api/v1/llm-proxy/${agentId}/chat/completions`,
      headers: asKey(owner).headers,
      payload: { messages: [{ role: 'user', content: 'Hi' }] },
    });
    assert.equal(response.statusCode, 502);
    assert.equal(errorBody(response).error, 'upstream_error');
    assert.match(errorBody(response).message, /did not answer in time/);
    upstream.handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify(textChunk('Half an '))}\n\n`);
      res.end(`data: ${JSON.stringify({ error: { message: 'the model crashed' } })}\n\n`);
    };
    const broken = await logged.app.inject({
      method: 'POST',
      url: `/api/v1/llm-proxy/${agentId}/chat/completions`,
      headers: asKey(owner).headers,
      payload: { messages: [{ role: 'user', content: 'Hi' }], stream: true },
    });
    assert.equal(JSON.parse(sseEvents(broken.body).at(-1)!).error.code, 'upstream_error');

    const lines = await logLines(3);
    assert.deepEqual(
      lines.map((line) => [line.level, line.msg]),
      [
        [LEVELS.warn, 'the client went away before the model answered'],
        [LEVELS.warn, "the agent's model failed: answered 502"],
        [LEVELS.warn, "the agent's model failed: the stream ends with an error event"],
      ],
    );
    assert.match(String(lines[1]!.reason), /did not answer in time/);
    for (const line of logged.raw) assert.ok(!line.includes('"stack"') && !line.includes(UPSTREAM_KEY), line);
  } finally {
    await logged.close();
  }
});
