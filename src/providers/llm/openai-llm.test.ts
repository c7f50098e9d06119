/**
 * The OpenAI-compatible adapter's rules, without a server: the request body a chat sends, and the deltas one choice
 * of a streamed chunk becomes. The protocol over HTTP is tested against a local server in llm.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ChatRequest } from './chat.js';
import { chatPayload, choiceDeltas } from './openai-llm.js';

const messages: ChatRequest['messages'] = [
  { role: 'system', content: 'You are Ada.' },
  { role: 'user', content: 'Hello?' },
  {
    role: 'assistant',
    content: null,
    toolCalls: [{ id: 'call_1', name: 'end_call', arguments: '{"reason":"done"}' }],
  },
  { role: 'tool', content: 'ended', toolCallId: 'call_1' },
  { role: 'assistant', content: 'Bye.', toolCalls: [] },
];
const tool = { name: 'end_call', description: 'Ends the call', parameters: { type: 'object' } };

test('chatPayload: streamed with usage; messages in the wire shape; optional settings only when given', () => {
  const cases: [string, ChatRequest, Record<string, unknown>][] = [
    ['no settings', { messages: messages.slice(0, 2) }, {}],
    [
      'temperature 0 and a token limit',
      { messages: messages.slice(0, 2), temperature: 0, maxTokens: 200 },
      { temperature: 0, max_tokens: 200 },
    ],
    [
      'tools with a tool choice',
      { messages: messages.slice(0, 2), tools: [tool], toolChoice: 'required' },
      { tools: [{ type: 'function', function: tool }], tool_choice: 'required' },
    ],
    ['a tool choice without tools is not sent', { messages: messages.slice(0, 2), tools: [], toolChoice: 'none' }, {}],
    [
      'a response format is a strict json_schema',
      { messages: messages.slice(0, 2), responseFormat: { name: 'review', schema: { type: 'object' } } },
      {
        response_format: {
          type: 'json_schema',
          json_schema: { name: 'review', schema: { type: 'object' }, strict: true },
        },
      },
    ],
  ];
  for (const [name, request, settings] of cases) {
    assert.deepEqual(
      chatPayload('test-model', request),
      {
        model: 'test-model',
        messages: [
          { role: 'system', content: 'You are Ada.' },
          { role: 'user', content: 'Hello?' },
        ],
        stream: true,
        stream_options: { include_usage: true },
        ...settings,
      },
      name,
    );
  }
});

test('chatPayload: assistant tool calls and tool results in the wire shape', () => {
  assert.deepEqual(chatPayload('m', { messages }).messages.slice(2), [
    {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'end_call', arguments: '{"reason":"done"}' } }],
    },
    { role: 'tool', content: 'ended', tool_call_id: 'call_1' },
    { role: 'assistant', content: 'Bye.' },
  ]);
});

test('choiceDeltas: text first, then each tool-call fragment, numbered by its index or its position', () => {
  const cases: [string, Parameters<typeof choiceDeltas>[0], ReturnType<typeof choiceDeltas>][] = [
    ['an empty delta', { delta: {} }, []],
    ['empty text', { delta: { content: '' } }, []],
    ['text', { delta: { content: 'Hello' } }, [{ type: 'text', text: 'Hello' }]],
    [
      'a first fragment carries the id and the name',
      { delta: { tool_calls: [{ index: 1, id: 'call_9', function: { name: 'lookup', arguments: '{"q' } }] } },
      [{ type: 'tool_call', index: 1, id: 'call_9', name: 'lookup', arguments: '{"q' }],
    ],
    [
      'later fragments carry only arguments; without an index, the position',
      { delta: { content: 'Hm.', tool_calls: [{ function: { arguments: '":1}' } }, { function: {} }] } },
      [
        { type: 'text', text: 'Hm.' },
        { type: 'tool_call', index: 0, arguments: '":1}' },
        { type: 'tool_call', index: 1, arguments: '' },
      ],
    ],
  ];
  for (const [name, choice, expected] of cases) assert.deepEqual(choiceDeltas(choice), expected, name);
});
