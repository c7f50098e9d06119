/** The LLM interface: messages, tools, streamed deltas, and the helpers around them (see index.ts). */
import type { AgentScript } from './playbook-script.js';

export interface ToolCall {
  id: string;
  name: string;
  /** The arguments as the JSON text the model wrote; parse it where it is used. */
  arguments: string;
}

export type ChatMessage =
  | { role: 'system' | 'user'; content: string }
  | { role: 'assistant'; content: string | null; toolCalls?: ToolCall[] }
  | { role: 'tool'; content: string; toolCallId: string };

export interface ToolDefinition {
  name: string;
  description?: string;
  /** A JSON Schema object for the arguments. */
  parameters: Record<string, unknown>;
}

export interface ChatRequest {
  messages: ChatMessage[];
  tools?: ToolDefinition[];
  /** OpenAI's tool_choice, passed on as it is. */
  toolChoice?: 'auto' | 'none' | 'required' | { type: 'function'; function: { name: string } };
  temperature?: number;
  maxTokens?: number;
  signal?: AbortSignal;
  /** Asks for one JSON object matching `schema` (OpenAI's response_format json_schema, strict); engines that cannot, ignore it. */
  responseFormat?: { name: string; schema: Record<string, unknown> };
  /**
   * The agent's prompt parts, for engines that read them directly (the playbook engine). Model adapters
   * ignore it: for them the system message carries the assembled prompt.
   */
  agent?: AgentScript;
}

export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter';

export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
  /** True when the server reported no usage and the counts are our estimate (see estimateTokens). */
  estimated?: boolean;
}

export type ChatDelta =
  | { type: 'text'; text: string }
  /** A fragment of tool call number `index`; `id` and `name` come with its first fragment. */
  | { type: 'tool_call'; index: number; id?: string; name?: string; arguments: string }
  /** Always the last delta of a turn. */
  | { type: 'done'; usage: TokenUsage; finishReason: FinishReason };

export interface LlmClient {
  /** Names what answers: "openai:gpt-4o-mini", "parley-playbook". */
  readonly name: string;
  chat(request: ChatRequest): AsyncIterable<ChatDelta>;
}

export interface CollectedTurn {
  message: { role: 'assistant'; content: string | null; toolCalls: ToolCall[] };
  usage: TokenUsage;
  finishReason: FinishReason;
}

/** Drains a streamed turn into one assistant message, assembling tool calls from their fragments. */
export async function collectChat(deltas: AsyncIterable<ChatDelta>): Promise<CollectedTurn> {
  let text = '';
  const calls = new Map<number, ToolCall>();
  for await (const delta of deltas) {
    if (delta.type === 'text') text += delta.text;
    else if (delta.type === 'tool_call') {
      const call = calls.get(delta.index) ?? { id: '', name: '', arguments: '' };
      if (delta.id) call.id = delta.id;
      if (delta.name) call.name += delta.name;
      call.arguments += delta.arguments;
      calls.set(delta.index, call);
    } else {
      const toolCalls = [...calls.entries()].sort(([a], [b]) => a - b).map(([, call]) => call);
      return {
        message: { role: 'assistant', content: text || null, toolCalls },
        usage: delta.usage,
        finishReason: delta.finishReason,
      };
    }
  }
  throw new Error('the chat stream ended without its final usage delta');
}

/**
 * Token estimate where no tokenizer is at hand: ~4 characters a token (the usual figure for English with
 * OpenAI's tokenizers), plus 4 tokens of framing per message. Used by the playbook engine, and for servers
 * that stream no usage.
 */
export const CHARS_PER_TOKEN = 4;

export function estimateTokens(text: string): number {
  return Math.ceil(text.length / CHARS_PER_TOKEN);
}

export function estimateInputTokens(messages: readonly ChatMessage[]): number {
  let total = 0;
  for (const message of messages) {
    total += 4 + estimateTokens(message.content ?? '');
    if (message.role === 'assistant')
      for (const call of message.toolCalls ?? []) total += estimateTokens(call.name + call.arguments);
  }
  return total;
}

/** How a call ended, as the agent judged it; the argument of the end_call tool. */
export const CALL_DISPOSITIONS = [
  'interested',
  'not_interested',
  'callback_requested',
  'do_not_call',
  'voicemail',
] as const;
export type CallDisposition = (typeof CALL_DISPOSITIONS)[number];

/**
 * The tool an agent calls to hand the call to a person (offered when the agent has a transfer number). The engine
 * connects the call to that number; the description carries the agent's own rule for when to do it.
 */
export function transferCallTool(whenToTransfer: string): ToolDefinition {
  const when = whenToTransfer.trim();
  return {
    name: 'transfer_call',
    description: `Transfer the call to a person, after telling the caller you are doing so.${when ? ` When to transfer: ${when}` : ''}`,
    parameters: {
      type: 'object',
      properties: { reason: { type: 'string', description: 'One short sentence on why the call is transferred.' } },
      additionalProperties: false,
    },
  };
}

/**
 * The tool an agent calls to hang up. Offer it to models so they can end calls; the playbook engine calls
 * it with the same arguments, so the calls engine treats both alike.
 */
export const END_CALL_TOOL: ToolDefinition = {
  name: 'end_call',
  description: 'Hang up after your last sentence, with how the conversation ended.',
  parameters: {
    type: 'object',
    properties: {
      disposition: { type: 'string', enum: [...CALL_DISPOSITIONS] },
      reason: { type: 'string', description: 'One short sentence on why the call ends.' },
    },
    required: ['disposition'],
    additionalProperties: false,
  },
};
