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
  id: Type.String({ description: 'The id a tool message answering this call names in tool_call_id.' }),
  type: Type.Literal('function', { description: 'Always function.' }),
  function: Type.Object(
    {
      name: Type.String({ description: 'The name of the tool the model calls.' }),
      arguments: Type.String({ description: 'The arguments, as the JSON text the model wrote.' }),
    },
    { description: 'The tool the model calls and with what.' },
  ),
});

/** The longest excerpt of a retrieved chunk the proxy returns, in characters (an ellipsis marks a cut). */
export const EXCERPT_CHARS = 240;

export const RetrievedKnowledgeChunk = Type.Object(
  {
    id: Type.String({
      format: 'uuid',
      description:
        "The chunk's id: the same id the call's call.knowledge_retrieved events list. It changes when the knowledge " +
        'base is indexed again.',
    }),
    source: Type.Union([Type.String(), Type.Null()], {
      description:
        'Where in the knowledge base the chunk is: the markdown headings above it, outermost first, joined with " > " ' +
        '(for example "Pricing > Refunds"); null for text under no heading.',
    }),
    excerpt: Type.String({
      maxLength: EXCERPT_CHARS,
      description: `The chunk's text, whitespace collapsed, cut at a word to at most ${EXCERPT_CHARS} characters (ending in … when cut). The model was given the whole chunk.`,
    }),
    score: Type.Number({
      minimum: 0,
      description:
        'How well the chunk matched the last user message, higher is better: the full-text rank, or with embeddings ' +
        'configured half the full-text rank (scaled to 0..1) and half the cosine similarity. Compare scores within ' +
        'one answer only.',
    }),
  },
  {
    title: 'RetrievedKnowledgeChunk',
    description: "A chunk of the agent's knowledge base that was retrieved for the turn and put in the model's prompt.",
  },
);
export type RetrievedKnowledgeChunk = Static<typeof RetrievedKnowledgeChunk>;

export const ParleyKnowledge = Type.Array(RetrievedKnowledgeChunk, {
  description:
    "Parley's addition to OpenAI's format: the knowledge-base chunks retrieved for this turn (matched against the " +
    'last user message) and given to the model, best first; empty when the agent has no knowledge base or nothing ' +
    'matched. OpenAI clients ignore it. With stream: true it is on the chat.completion.chunk that carries ' +
    'finish_reason.',
});

export const ChatCompletion = Type.Object(
  {
    id: Type.String({ description: 'The id of this completion (chatcmpl-...); every chunk of a stream has it.' }),
    object: Type.Literal('chat.completion', { description: 'Always chat.completion.' }),
    created: Type.Integer({ description: 'When the turn started, in seconds since the Unix epoch.' }),
    model: Type.String({
      description: "The model that answered: the agent's liveLlmId, or the deployment's default model.",
    }),
    choices: Type.Array(
      Type.Object({
        index: Type.Integer({ description: 'Always 0: the proxy answers one choice.' }),
        message: Type.Object(
          {
            role: Type.Literal('assistant', { description: 'Always assistant.' }),
            content: Type.Union([Type.String(), Type.Null()], {
              description: "The agent's answer; null when it only calls tools.",
            }),
            tool_calls: Type.Optional(
              Type.Array(ToolCallOut, { description: 'The tools the model calls, when it calls any.' }),
            ),
          },
          { description: "The agent's message." },
        ),
        finish_reason: Type.String({
          description: 'Why the answer ended: stop, length, tool_calls or content_filter, as the model said.',
        }),
      }),
      { description: 'One choice: the answer.' },
    ),
    usage: Type.Object(
      {
        prompt_tokens: Type.Integer({
          description: "Tokens the model read, the agent's prompt and knowledge included.",
        }),
        completion_tokens: Type.Integer({ description: 'Tokens the model wrote.' }),
        total_tokens: Type.Integer({ description: 'The two together.' }),
      },
      { description: 'Tokens of the turn, as the model counted them.' },
    ),
    parley_knowledge: ParleyKnowledge,
  },
  {
    title: 'ChatCompletion',
    description:
      'With stream: true the answer is text/event-stream instead: chat.completion.chunk events as OpenAI sends them, ' +
      'ending with data: [DONE]; the chunk with finish_reason also carries parley_knowledge.',
  },
);
