/**
 * With an OpenAI-compatible LLM configured (a local server speaking its streamed protocol): the generator asks for
 * a json_schema answer and returns the model's agent, falling back to the built-in generator when the answer is not
 * usable; the safety check adds the model's review to the rule findings.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildTestApp, call, signUp, type SignedUp, type TestApp } from '../../../test/helpers.js';
import { VERSIONED_FIELDS } from '../agents/agents.prompt.js';

type Reply = (res: ServerResponse, body: any) => void;
let reply: Reply = () => {};
const requests: any[] = [];
const server = createServer(async (req, res) => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  requests.push(body);
  reply(res, body);
});

/** Streams `content` as OpenAI does: text deltas in a few chunks, the usage, then [DONE]. */
function stream(res: ServerResponse, content: string) {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const pieces = content.match(/[\s\S]{1,200}/g) ?? [''];
  for (const piece of pieces)
    res.write(`data: ${JSON.stringify({ choices: [{ delta: { content: piece }, finish_reason: null }] })}\n\n`);
  res.write(`data: ${JSON.stringify({ choices: [{ delta: {}, finish_reason: 'stop' }] })}\n\n`);
  res.write(`data: ${JSON.stringify({ choices: [], usage: { prompt_tokens: 900, completion_tokens: 700 } })}\n\n`);
  res.end('data: [DONE]\n\n');
}

const MODEL_AGENT = {
  name: 'Lakeside Yoga front desk',
  soul: 'You are Leo, an AI assistant for Lakeside Yoga. Calm and kind.',
  mission: 'Book first classes for new students.',
  playbook: '1. Greet.\n2. Offer the beginner class.\n3. If they ask to stop calling, confirm and end the call.',
  examples: 'Caller: "Is it hard?" You: "The beginner class is gentle."',
  objections: '- "Too expensive": mention the intro week.',
  closers: 'Confirm the class time and say goodbye.',
  notes: 'Never ask for card numbers.',
  faq: 'Q: Mats? A: We lend them.',
  knowledgeBase: 'Lakeside Yoga, 12 Shore Road.',
  firstMessage: 'Hi, this is Leo, an AI assistant at Lakeside Yoga.',
  whenToTransfer: 'They ask for the owner.',
  voicemailMessage: 'Hi, Leo from Lakeside Yoga here, an AI assistant. Call us back any day.',
};

let t: TestApp;
let owner: SignedUp;
before(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  t = await buildTestApp({
    env: { LLM_PROVIDER: 'openai', LLM_BASE_URL: baseUrl, LLM_MODEL: 'writer-1', LLM_API_KEY: 'sk-local' },
  });
  owner = await signUp(t.app);
});
after(async () => {
  await t.close();
  server.closeAllConnections();
  server.close();
});

const INPUT = {
  businessDescription: 'Lakeside Yoga is a small studio by the lake offering beginner and flow classes.',
  goal: 'Book first classes for new students.',
};

test('generate: the model writes the agent under a json_schema response format', async () => {
  reply = (res) => stream(res, JSON.stringify(MODEL_AGENT));
  requests.length = 0;
  const response = await call(owner, 'POST', '/agents/wizard/generate', {
    ...INPUT,
    tone: 'warm',
    language: 'English',
  });
  assert.equal(response.statusCode, 200, response.body);
  const { definition, generator, safety } = response.json();
  assert.deepEqual(generator, { kind: 'llm', model: 'openai:writer-1', templateId: null, fallbackReason: null });
  for (const part of VERSIONED_FIELDS) assert.equal(definition[part], MODEL_AGENT[part]);
  assert.equal(definition.name, MODEL_AGENT.name);
  assert.deepEqual(definition.transfer, { whenToTransfer: MODEL_AGENT.whenToTransfer });
  assert.deepEqual(definition.voicemail, { action: 'leave_message', message: MODEL_AGENT.voicemailMessage });
  assert.equal(safety.result, 'pass', JSON.stringify(safety.findings));

  const [sent] = requests;
  assert.equal(sent.model, 'writer-1');
  assert.equal(sent.response_format.type, 'json_schema');
  assert.equal(sent.response_format.json_schema.name, 'agent_definition');
  assert.equal(sent.response_format.json_schema.strict, true);
  const schema = sent.response_format.json_schema.schema;
  assert.deepEqual([...schema.required].sort(), Object.keys(MODEL_AGENT).sort());
  assert.equal(schema.additionalProperties, false);
  assert.deepEqual(JSON.parse(sent.messages[1].content).goal, INPUT.goal);
});

test('generate: a model answer that is not JSON falls back to the built-in generator, which says why', async () => {
  reply = (res) => stream(res, 'Sure! Here is your agent: soul = friendly');
  const response = await call(owner, 'POST', '/agents/wizard/generate', INPUT);
  assert.equal(response.statusCode, 200, response.body);
  const { generator, definition } = response.json();
  assert.equal(generator.kind, 'builtin');
  assert.match(
    generator.fallbackReason,
    /^The model could not write the agent, so the built-in generator did: its answer was not a usable JSON object/,
  );
  assert.ok(definition.firstMessage.includes('Lakeside Yoga'));

  reply = (res) => {
    res.writeHead(503, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message: 'overloaded' } }));
  };
  const down = (await call(owner, 'POST', '/agents/wizard/generate', INPUT)).json();
  assert.equal(down.generator.kind, 'builtin');
  assert.ok(!down.generator.fallbackReason.includes('sk-local'), 'the key never shows');
});

test('safety check: the model review adds its findings to the rule findings', async () => {
  const review = {
    findings: [
      {
        severity: 'warning',
        part: 'closers',
        excerpt: 'say goodbye',
        message: 'The close does not restate the cancellation policy.',
        suggestion: 'Mention it.',
      },
    ],
  };
  reply = (res) => stream(res, JSON.stringify(review));
  requests.length = 0;
  const agent = {
    ...MODEL_AGENT,
    closers: 'Confirm the class time.\nThen say goodbye.',
    whenToTransfer: undefined,
    voicemailMessage: undefined,
    name: undefined,
  };
  delete agent.whenToTransfer;
  delete agent.voicemailMessage;
  delete agent.name;
  const response = await call(owner, 'POST', '/agents/safety-check', {
    agent: { ...agent, transfer: { number: '0800 123' } },
  });
  assert.equal(response.statusCode, 200, response.body);
  const report = response.json();
  assert.deepEqual(report.llmReview, { status: 'done', model: 'openai:writer-1', message: null });
  assert.deepEqual(
    report.findings.map((f: { code: string; source: string; line: number | null }) => [f.code, f.source, f.line]),
    [
      ['transfer_number_invalid', 'rules', null],
      ['llm_review', 'llm', 2],
    ],
  );
  assert.equal(report.result, 'fail');
  assert.equal(requests[0].response_format.json_schema.name, 'safety_review');

  reply = (res) => stream(res, 'not json');
  const failed = (await call(owner, 'POST', '/agents/safety-check', { agent })).json();
  assert.equal(failed.llmReview.status, 'failed');
  assert.equal(failed.result, 'pass', 'the rules still decide');
  assert.deepEqual(failed.findings, []);
});
