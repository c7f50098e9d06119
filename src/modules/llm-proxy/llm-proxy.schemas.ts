/**
 * OpenAI's chat completions format, as far as the proxy reads it. Fields it does not know are accepted and ignored,
 * as OpenAI-compatible servers do, so any OpenAI client works unchanged.
 */
import { Type, type Static } from 'typebox';
import { Uuid } from '../../http/schemas.js';

const MAX_TEXT = 200_000;
const Text = Type.String({ maxLength: MAX_TEXT });
const ContentPart = Type.Object(
  { type: Type.String({ maxLength: 40 }), text: Type.Optional(Text) },
  { additionalProperties: true },
);
const Content = Type.Union([Text, Type.Array(ContentPart, { maxItems: 200 }), Type.Null()]);

const ToolCallIn = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: 200 }),
    type: Type.Optional(Type.Literal('function')),
    function: Type.Object({
      name: Type.String({ minLength: 1, maxLength: 200 }),
      arguments: Type.String({ maxLength: MAX_TEXT }),
    }),
  },
  { additionalProperties: true },
);

export const ChatMessageIn = Type.Object(
  {
    role: Type.Enum(['system', 'developer', 'user', 'assistant', 'tool']),
    content: Type.Optional(Content),
    name: Type.Optional(Type.String({ maxLength: 200 })),
    tool_calls: Type.Optional(Type.Array(ToolCallIn, { maxItems: 100 })),
    tool_call_id: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  },
  { additionalProperties: true },
);
export type ChatMessageIn = Static<typeof ChatMessageIn>;

const ToolIn = Type.Object(
  {
    type: Type.Literal('function'),
    function: Type.Object(
      {
        name: Type.String({ minLength: 1, maxLength: 64, pattern: '^[a-zA-Z0-9_-]+$' }),
        description: Type.Optional(Type.String({ maxLength: 4000 })),
        parameters: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
      },
      { additionalProperties: true },
    ),
  },
  { additionalProperties: true },
);

const ToolChoice = Type.Union([
  Type.Enum(['auto', 'none', 'required']),
  Type.Object({
    type: Type.Literal('function'),
    function: Type.Object({ name: Type.String({ minLength: 1, maxLength: 64 }) }),
  }),
]);

export const ChatCompletionBody = Type.Object(
  {
    model: Type.Optional(
      Type.String({ maxLength: 200, description: "Ignored: the agent's model (liveLlmId) answers." }),
    ),
    messages: Type.Array(ChatMessageIn, { minItems: 1, maxItems: 1000 }),
    tools: Type.Optional(Type.Array(ToolIn, { maxItems: 128 })),
    tool_choice: Type.Optional(ToolChoice),
    temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2 })),
    max_tokens: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
    max_completion_tokens: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
    stream: Type.Optional(Type.Boolean()),
    stream_options: Type.Optional(
      Type.Object({ include_usage: Type.Optional(Type.Boolean()) }, { additionalProperties: true }),
    ),
    metadata: Type.Optional(
      Type.Object(
        { callId: Type.Optional(Uuid) },
        { additionalProperties: true, description: 'callId names the call whose costs and timeline this turn joins.' },
      ),
    ),
  },
  { additionalProperties: true },
);
export type ChatCompletionBody = Static<typeof ChatCompletionBody>;

export const ProxyParams = Type.Object({ agentId: Uuid }, { additionalProperties: false });

const ToolCallOut = Type.Object({
  id: Type.String(),
  type: Type.Literal('function'),
  function: Type.Object({ name: Type.String(), arguments: Type.String() }),
});

export const ChatCompletion = Type.Object(
  {
    id: Type.String(),
    object: Type.Literal('chat.completion'),
    created: Type.Integer(),
    model: Type.String(),
    choices: Type.Array(
      Type.Object({
        index: Type.Integer(),
        message: Type.Object({
          role: Type.Literal('assistant'),
          content: Type.Union([Type.String(), Type.Null()]),
          tool_calls: Type.Optional(Type.Array(ToolCallOut)),
        }),
        finish_reason: Type.String(),
      }),
    ),
    usage: Type.Object({
      prompt_tokens: Type.Integer(),
      completion_tokens: Type.Integer(),
      total_tokens: Type.Integer(),
    }),
  },
  {
    description:
      'With stream: true the answer is text/event-stream instead: chat.completion.chunk events as OpenAI sends them, ' +
      'ending with data: [DONE].',
  },
);
