/**
 * OpenAI-compatible chat: `POST {baseUrl}/chat/completions` with `stream: true`, read as server-sent
 * events. Works with OpenAI and the servers that copy its protocol (vLLM, llama.cpp, Ollama, LiteLLM…).
 */
import type { Dispatcher } from 'undici';
import { postJson, type OpenAiEndpoint } from '../openai-http.js';
import { ProviderError } from '../provider-error.js';
import { sseData } from '../sse.js';
import {
  CHARS_PER_TOKEN,
  estimateInputTokens,
  type ChatDelta,
  type ChatMessage,
  type ChatRequest,
  type FinishReason,
  type LlmClient,
  type TokenUsage,
} from './chat.js';

export interface OpenAiLlmOptions {
  baseUrl: string;
  apiKey: string | null;
  model: string;
  timeoutMs: number;
  dispatcher?: Dispatcher;
}

const PROVIDER = 'openai-llm';

interface StreamChunk {
  error?: { message?: string } | string;
  choices?: {
    delta?: {
      content?: string | null;
      tool_calls?: { index?: number; id?: string; function?: { name?: string; arguments?: string } }[];
    };
    finish_reason?: string | null;
  }[];
  usage?: { prompt_tokens?: number; completion_tokens?: number } | null;
}

function toWireMessage(message: ChatMessage) {
  switch (message.role) {
    case 'assistant':
      return {
        role: 'assistant',
        content: message.content,
        ...(message.toolCalls?.length
          ? {
              tool_calls: message.toolCalls.map((call) => ({
                id: call.id,
                type: 'function',
                function: { name: call.name, arguments: call.arguments },
              })),
            }
          : {}),
      };
    case 'tool':
      return { role: 'tool', content: message.content, tool_call_id: message.toolCallId };
    default:
      return { role: message.role, content: message.content };
  }
}

function finishReasonOf(raw: string): FinishReason {
  if (raw === 'length' || raw === 'content_filter' || raw === 'tool_calls') return raw;
  if (raw === 'function_call') return 'tool_calls';
  return 'stop';
}

function checkRequest(request: ChatRequest) {
  const invalid = (message: string) => new ProviderError(PROVIDER, 'invalid_request', message);
  if (!request.messages.length) throw invalid('a chat needs at least one message');
  if (request.temperature !== undefined && !(request.temperature >= 0 && request.temperature <= 2)) {
    throw invalid('temperature must be between 0 and 2');
  }
  if (request.maxTokens !== undefined && !(Number.isInteger(request.maxTokens) && request.maxTokens > 0)) {
    throw invalid('maxTokens must be a positive integer');
  }
}

/** The body of `POST /chat/completions` for a request: streamed, with usage; optional settings only when given. */
export function chatPayload(model: string, request: ChatRequest) {
  const tools = request.tools?.length ? request.tools : null;
  return {
    model,
    messages: request.messages.map(toWireMessage),
    stream: true,
    stream_options: { include_usage: true },
    ...(tools
      ? {
          tools: tools.map((tool) => ({
            type: 'function',
            function: { name: tool.name, description: tool.description, parameters: tool.parameters },
          })),
        }
      : {}),
    ...(tools && request.toolChoice !== undefined ? { tool_choice: request.toolChoice } : {}),
    ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
    ...(request.maxTokens !== undefined ? { max_tokens: request.maxTokens } : {}),
    ...(request.responseFormat
      ? {
          response_format: {
            type: 'json_schema',
            json_schema: { name: request.responseFormat.name, schema: request.responseFormat.schema, strict: true },
          },
        }
      : {}),
  };
}

const badResponse = (message: string) => new ProviderError(PROVIDER, 'bad_response', `the chat stream ${message}`);

/** One event of the stream, read; an event that reports an error throws it. */
function readChunk(data: string): StreamChunk {
  let chunk: StreamChunk;
  try {
    chunk = JSON.parse(data) as StreamChunk;
  } catch {
    throw badResponse('carried an event that is not JSON');
  }
  if (chunk.error) {
    const message = typeof chunk.error === 'string' ? chunk.error : (chunk.error.message ?? 'unknown error');
    throw new ProviderError(PROVIDER, 'upstream_error', `the chat stream reported an error: ${message.slice(0, 300)}`);
  }
  return chunk;
}

type StreamChoice = NonNullable<StreamChunk['choices']>[number];

/** The text and tool-call deltas of one choice of a chunk, in the order the model wrote them. */
export function choiceDeltas(choice: StreamChoice): ChatDelta[] {
  const deltas: ChatDelta[] = [];
  const content = choice.delta?.content;
  if (content) deltas.push({ type: 'text', text: content });
  for (const [position, call] of (choice.delta?.tool_calls ?? []).entries()) {
    deltas.push({
      type: 'tool_call',
      index: call.index ?? position,
      ...(call.id ? { id: call.id } : {}),
      ...(call.function?.name ? { name: call.function.name } : {}),
      arguments: call.function?.arguments ?? '',
    });
  }
  return deltas;
}

/** Characters of output a delta carries, for the estimate when the server reports no usage. */
function outputCharsOf(delta: ChatDelta): number {
  if (delta.type === 'text') return delta.text.length;
  if (delta.type === 'tool_call') return delta.arguments.length + (delta.name?.length ?? 0);
  return 0;
}

/** What the stream told of the turn as a whole, gathered as it is read. */
interface TurnState {
  finishReason: FinishReason | null;
  usage: TokenUsage | null;
  outputChars: number;
  sawDone: boolean;
}

/** The deltas the stream's events carry, up to [DONE]; records the turn's usage and finish reason in `turn`. */
async function* streamedDeltas(events: AsyncIterable<string>, turn: TurnState): AsyncGenerator<ChatDelta> {
  for await (const data of events) {
    // Read on to the end of the body after [DONE], so the connection goes back to the pool.
    if (turn.sawDone) continue;
    if (data === '[DONE]') {
      turn.sawDone = true;
      continue;
    }
    const chunk = readChunk(data);
    if (chunk.usage) {
      turn.usage = { inputTokens: chunk.usage.prompt_tokens ?? 0, outputTokens: chunk.usage.completion_tokens ?? 0 };
    }
    const choice = chunk.choices?.[0];
    if (!choice) continue;
    for (const delta of choiceDeltas(choice)) {
      turn.outputChars += outputCharsOf(delta);
      yield delta;
    }
    if (choice.finish_reason) turn.finishReason = finishReasonOf(choice.finish_reason);
  }
}

/** The last delta of a turn: the usage the server reported, else an estimate marked as such. */
function doneDelta(request: ChatRequest, turn: TurnState): ChatDelta {
  return {
    type: 'done',
    usage: turn.usage ?? {
      inputTokens: estimateInputTokens(request.messages),
      outputTokens: Math.ceil(turn.outputChars / CHARS_PER_TOKEN),
      estimated: true,
    },
    finishReason: turn.finishReason ?? 'stop',
  };
}

export function createOpenAiLlm(options: OpenAiLlmOptions): LlmClient {
  const endpoint: OpenAiEndpoint = {
    provider: PROVIDER,
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    apiKey: options.apiKey,
    timeoutMs: options.timeoutMs,
    ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
  };

  async function* chat(request: ChatRequest): AsyncGenerator<ChatDelta> {
    checkRequest(request);
    const payload = chatPayload(options.model, request);
    const response = await postJson(endpoint, '/chat/completions', payload, request.signal);
    const turn: TurnState = { finishReason: null, usage: null, outputChars: 0, sawDone: false };
    try {
      yield* streamedDeltas(sseData(response.body), turn);
    } catch (error) {
      throw response.failure(error);
    } finally {
      // Also runs when the consumer stops early: the connection is not left half-read.
      if (!response.body.readableEnded) response.body.destroy();
      response.done();
    }
    if (!turn.sawDone && !turn.finishReason) throw badResponse('ended before its last event');
    yield doneDelta(request, turn);
  }

  return { name: `openai:${options.model}`, chat };
}
