import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ConfigError, loadConfig } from '../../config.js';
import { providerErrorOf } from '../../../test/provider-errors.js';
import { sseData } from '../sse.js';
import {
  collectChat,
  createLlmClient,
  createOpenAiLlm,
  END_CALL_TOOL,
  type ChatDelta,
  type LlmClient,
} from './index.js';

// A local server speaking OpenAI's streamed /chat/completions: each test sets what the next request gets.
const API_KEY = 'sk-test-5f1c9a0e7b2d4c6a8e1f3b5d7c9a1e3f';
type Handler = (req: IncomingMessage, res: ServerResponse, body: any) => void | Promise<void>;
let handler: Handler = () => {};
const requests: { path: string; headers: IncomingMessage['headers']; body: any }[] = [];
const closedEarly: boolean[] = [];
const server = createServer(async (req, res) => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null');
  requests.push({ path: req.url!, headers: req.headers, body });
  res.on('close', () => closedEarly.push(!res.writableFinished));
  await handler(req, res, body);
});
let baseUrl = '';

before(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
after(() => {
  server.closeAllConnections();
  server.close();
});

function client(options: { timeoutMs?: number; apiKey?: string | null } = {}): LlmClient {
  return createOpenAiLlm({
    baseUrl,
    apiKey: options.apiKey === undefined ? API_KEY : options.apiKey,
    model: 'test-model',
    timeoutMs: options.timeoutMs ?? 5000,
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Writes SSE events as the protocol does, but in awkward pieces: split mid-line and mid-character. */
async function streamEvents(res: ServerResponse, events: unknown[], { done = true, lineEnd = '\n' } = {}) {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  let wire = ': keep-alive comment\n\n';
  for (const event of events)
    wire += `data: ${typeof event === 'string' ? event : JSON.stringify(event)}${lineEnd}${lineEnd}`;
  if (done) wire += `data: [DONE]${lineEnd}${lineEnd}`;
  const bytes = Buffer.from(wire, 'utf8');
  for (let offset = 0; offset < bytes.length; offset += 37) {
    res.write(bytes.subarray(offset, offset + 37));
    await sleep(1);
  }
  res.end();
}

const textChunk = (content: string, finish: string | null = null) => ({
  id: 'chatcmpl-1',
  object: 'chat.completion.chunk',
  choices: [{ index: 0, delta: { content }, finish_reason: finish }],
});

function assertNoKey(error: Error) {
  for (const text of [error.message, error.stack ?? '', JSON.stringify(error), String(error)]) {
    assert.ok(!text.includes(API_KEY), `the API key leaked into: ${text}`);
  }
}

test('server-sent events: any line ending, split anywhere, multi-line data, comments and other fields skipped', async () => {
  const wire =
    ': hello\r\r' +
    'event: x\ndata: one\r\n\r\n' +
    'data:two\rdata:  three\r\r' +
    'id: 7\ndata\n\n' +
    'data: last without blank line';
  const bytes = Buffer.from(wire);
  for (const size of [1, 2, 3, 5, 1000]) {
    async function* pieces() {
      for (let offset = 0; offset < bytes.length; offset += size) yield bytes.subarray(offset, offset + size);
    }
    const events: string[] = [];
    for await (const data of sseData(pieces())) events.push(data);
    assert.deepEqual(events, ['one', 'two\n three', '', 'last without blank line'], `pieces of ${size}`);
  }
});

test('a streamed turn: the request follows the protocol, the text arrives in deltas, usage comes last', async () => {
  handler = (_req, res) =>
    streamEvents(
      res,
      [
        { ...textChunk(''), choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] },
        textChunk('Hello, this is '),
        textChunk('Ada — from Acme. 👋'),
        textChunk(' Do you have a minute?', 'stop'),
        {
          id: 'chatcmpl-1',
          object: 'chat.completion.chunk',
          choices: [],
          usage: { prompt_tokens: 42, completion_tokens: 17, total_tokens: 59 },
        },
      ],
      { lineEnd: '\r\n' },
    );
  const deltas: ChatDelta[] = [];
  for await (const delta of client().chat({
    messages: [
      { role: 'system', content: 'You are Ada.' },
      { role: 'user', content: 'Hello?' },
    ],
    tools: [END_CALL_TOOL],
    temperature: 0.3,
    maxTokens: 200,
  })) {
    deltas.push(delta);
  }
  const request = requests.at(-1)!;
  assert.equal(request.path, '/v1/chat/completions');
  assert.equal(request.headers.authorization, `Bearer ${API_KEY}`);
  assert.equal(request.body.model, 'test-model');
  assert.equal(request.body.stream, true);
  assert.deepEqual(request.body.stream_options, { include_usage: true });
  assert.equal(request.body.temperature, 0.3);
  assert.equal(request.body.max_tokens, 200);
  assert.deepEqual(request.body.messages, [
    { role: 'system', content: 'You are Ada.' },
    { role: 'user', content: 'Hello?' },
  ]);
  assert.deepEqual(request.body.tools, [{ type: 'function', function: END_CALL_TOOL }]);

  const texts = deltas.filter((d) => d.type === 'text').map((d) => (d as { text: string }).text);
  assert.deepEqual(texts, ['Hello, this is ', 'Ada — from Acme. 👋', ' Do you have a minute?']);
  assert.deepEqual(deltas.at(-1), { type: 'done', usage: { inputTokens: 42, outputTokens: 17 }, finishReason: 'stop' });
});

test('tool calls are assembled from their streamed fragments, several at once', async () => {
  const fragment = (index: number, part: Record<string, unknown>) => ({
    choices: [{ index: 0, delta: { tool_calls: [{ index, ...part }] }, finish_reason: null }],
  });
  handler = (_req, res) =>
    streamEvents(res, [
      textChunk('One moment.'),
      fragment(0, { id: 'call_a', type: 'function', function: { name: 'lookup_slot', arguments: '' } }),
      fragment(0, { function: { arguments: '{"day":' } }),
      fragment(1, { id: 'call_b', type: 'function', function: { name: 'end_call', arguments: '{"disp' } }),
      fragment(0, { function: { arguments: '"tuesday"}' } }),
      fragment(1, { function: { arguments: 'osition":"interested"}' } }),
      { choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] },
      { choices: [], usage: { prompt_tokens: 80, completion_tokens: 30 } },
    ]);
  const turn = await collectChat(
    client().chat({
      messages: [
        { role: 'user', content: 'Book me for Tuesday' },
        { role: 'assistant', content: null, toolCalls: [{ id: 'call_0', name: 'lookup_slot', arguments: '{}' }] },
        { role: 'tool', toolCallId: 'call_0', content: '{"free":true}' },
      ],
      tools: [END_CALL_TOOL, { name: 'lookup_slot', parameters: { type: 'object' } }],
    }),
  );
  assert.equal(turn.message.content, 'One moment.');
  assert.deepEqual(turn.message.toolCalls, [
    { id: 'call_a', name: 'lookup_slot', arguments: '{"day":"tuesday"}' },
    { id: 'call_b', name: 'end_call', arguments: '{"disposition":"interested"}' },
  ]);
  assert.deepEqual(JSON.parse(turn.message.toolCalls[1]!.arguments), { disposition: 'interested' });
  assert.equal(turn.finishReason, 'tool_calls');
  assert.deepEqual(turn.usage, { inputTokens: 80, outputTokens: 30 });
  // Earlier tool calls and results go back in OpenAI's shape.
  assert.deepEqual(requests.at(-1)!.body.messages.slice(1), [
    {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'call_0', type: 'function', function: { name: 'lookup_slot', arguments: '{}' } }],
    },
    { role: 'tool', content: '{"free":true}', tool_call_id: 'call_0' },
  ]);
});

test('a server that streams no usage gets an estimate, marked as such', async () => {
  handler = (_req, res) => streamEvents(res, [textChunk('Twelve chars'), textChunk('', 'length')]);
  const turn = await collectChat(
    client({ apiKey: null }).chat({ messages: [{ role: 'user', content: 'x'.repeat(40) }] }),
  );
  assert.equal(requests.at(-1)!.headers.authorization, undefined, 'no key, no Authorization header');
  assert.equal(turn.finishReason, 'length');
  assert.deepEqual(turn.usage, { inputTokens: 4 + 10, outputTokens: 3, estimated: true });
});

test('an error status becomes a ProviderError without the API key, even when the server echoes it', async () => {
  handler = (_req, res) => {
    res.writeHead(401, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({ error: { message: `Incorrect API key provided: ${API_KEY}`, type: 'invalid_request_error' } }),
    );
  };
  const error = await providerErrorOf(collectChat(client().chat({ messages: [{ role: 'user', content: 'hi' }] })));
  assert.equal(error.code, 'upstream_error');
  assert.equal(error.status, 401);
  assert.match(error.message, /answered 401: Incorrect API key provided: \[redacted\]/);
  assertNoKey(error);

  handler = (_req, res) => {
    res.writeHead(503);
    res.end('<html>upstream down</html>');
  };
  const unavailable = await providerErrorOf(
    collectChat(client().chat({ messages: [{ role: 'user', content: 'hi' }] })),
  );
  assert.equal(unavailable.status, 503);
  assert.match(unavailable.message, /answered 503: <html>upstream down<\/html>/);
});

test('broken streams fail clearly: an error event, an event that is not JSON, a stream cut short', async () => {
  handler = (_req, res) =>
    streamEvents(res, [textChunk('Hi'), { error: { message: 'model overloaded' } }], { done: false });
  const overloaded = await providerErrorOf(collectChat(client().chat({ messages: [{ role: 'user', content: 'hi' }] })));
  assert.equal(overloaded.code, 'upstream_error');
  assert.match(overloaded.message, /model overloaded/);

  handler = (_req, res) => streamEvents(res, ['{not json']);
  assert.equal(
    (await providerErrorOf(collectChat(client().chat({ messages: [{ role: 'user', content: 'hi' }] })))).code,
    'bad_response',
  );

  handler = (_req, res) => streamEvents(res, [textChunk('Hel')], { done: false });
  const cut = await providerErrorOf(collectChat(client().chat({ messages: [{ role: 'user', content: 'hi' }] })));
  assert.equal(cut.code, 'bad_response');
  assert.match(cut.message, /ended before its last event/);
});

test('a server that stalls hits the timeout; a caller abort stops the turn; both free the connection', async () => {
  handler = (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(`data: ${JSON.stringify(textChunk('Hel'))}\n\n`);
    // ...and nothing more.
  };
  const before = closedEarly.length;
  const stalled = await providerErrorOf(
    collectChat(client({ timeoutMs: 300 }).chat({ messages: [{ role: 'user', content: 'hi' }] })),
  );
  assert.equal(stalled.code, 'timeout');
  assert.match(stalled.message, /did not complete within 300 ms/);
  assertNoKey(stalled);

  const controller = new AbortController();
  const seen: string[] = [];
  const aborted = await providerErrorOf(
    (async () => {
      for await (const delta of client().chat({
        messages: [{ role: 'user', content: 'hi' }],
        signal: controller.signal,
      })) {
        if (delta.type === 'text') seen.push(delta.text);
        controller.abort();
      }
    })(),
  );
  assert.equal(aborted.code, 'aborted');
  assert.deepEqual(seen, ['Hel']);
  while (closedEarly.length < before + 2) await sleep(5);
  assert.deepEqual(closedEarly.slice(before), [true, true]);
});

test('a consumer that stops reading early closes the stream instead of leaving it half-read', async () => {
  handler = async (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (let i = 0; i < 1000 && !res.destroyed; i++) {
      res.write(`data: ${JSON.stringify(textChunk(`word${i} `))}\n\n`);
      await sleep(2);
    }
    res.end();
  };
  const before = closedEarly.length;
  let count = 0;
  for await (const delta of client().chat({ messages: [{ role: 'user', content: 'hi' }] })) {
    if (delta.type === 'text' && ++count === 3) break;
  }
  while (closedEarly.length < before + 1) await sleep(5);
  assert.equal(closedEarly.at(-1), true);
});

test('an unreachable server is a network error without the key; bad arguments are refused before sending', async () => {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const port = (probe.address() as AddressInfo).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  const unreachable = createOpenAiLlm({
    baseUrl: `http://127.0.0.1:${port}/v1`,
    apiKey: API_KEY,
    model: 'm',
    timeoutMs: 5000,
  });
  const error = await providerErrorOf(collectChat(unreachable.chat({ messages: [{ role: 'user', content: 'hi' }] })));
  assert.equal(error.code, 'network');
  assert.match(error.message, /ECONNREFUSED/);
  assertNoKey(error);

  const sent = requests.length;
  for (const bad of [{ temperature: 3 }, { maxTokens: 0 }, { maxTokens: 1.5 }]) {
    const refused = await providerErrorOf(
      collectChat(client().chat({ messages: [{ role: 'user', content: 'hi' }], ...bad })),
    );
    assert.equal(refused.code, 'invalid_request');
  }
  assert.equal((await providerErrorOf(collectChat(client().chat({ messages: [] })))).code, 'invalid_request');
  assert.equal(requests.length, sent);
});

test('configuration picks the adapter: the playbook engine offline by default, openai when asked', async () => {
  const offline = createLlmClient(loadConfig({}).llm);
  assert.equal(offline.name, 'parley-playbook');

  const config = loadConfig({
    LLM_PROVIDER: 'openai',
    LLM_BASE_URL: `${baseUrl}/`,
    LLM_API_KEY: API_KEY,
    LLM_MODEL: 'local-model',
  });
  assert.equal(config.llm.baseUrl, baseUrl, 'the trailing slash is dropped');
  const online = createLlmClient(config.llm);
  assert.equal(online.name, 'openai:local-model');
  handler = (_req, res) => streamEvents(res, [textChunk('ok', 'stop')]);
  assert.equal((await collectChat(online.chat({ messages: [{ role: 'user', content: 'hi' }] }))).message.content, 'ok');
  assert.equal(requests.at(-1)!.body.model, 'local-model');

  assert.equal(loadConfig({ LLM_PROVIDER: 'openai' }).llm.baseUrl, 'https://api.openai.com/v1');
  assert.throws(() => loadConfig({ LLM_PROVIDER: 'gpt' }), ConfigError);
  assert.throws(() => loadConfig({ LLM_BASE_URL: 'ftp://example.com' }), /LLM_BASE_URL must be an http or https URL/);
  assert.throws(() => loadConfig({ LLM_TIMEOUT_MS: '0' }), ConfigError);
});
