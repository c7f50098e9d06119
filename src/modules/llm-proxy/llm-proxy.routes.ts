import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../../http/types.js';
import { allow } from '../../http/access.js';
import { AppError } from '../../lib/errors.js';
import type { ErrorBody } from '../../http/errors.js';
import { responses } from '../../http/schemas.js';
import type { ChatDelta, FinishReason, ToolCall } from '../../providers/llm/index.js';
import type { LlmProxyService, OpenedTurn } from './llm-proxy.service.js';
import { ChatCompletion, ChatCompletionBody, ProxyParams } from './llm-proxy.schemas.js';

const tags = ['agents'];
const CALL_ID_HEADER = 'x-parley-call-id';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function headerCallId(req: FastifyRequest): string | undefined {
  const value = req.headers[CALL_ID_HEADER];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !UUID.test(value)) {
    throw new AppError('validation_failed', 'Invalid request: headers/x-parley-call-id must be a UUID', {
      fields: [{ field: 'headers/x-parley-call-id', message: 'must be a UUID' }],
    });
  }
  return value.toLowerCase();
}

/** The rest of the turn, from the delta already read. */
async function* allDeltas(turn: OpenedTurn): AsyncGenerator<ChatDelta> {
  if (!turn.first.done) yield turn.first.value;
  for (let next = await turn.deltas.next(); !next.done; next = await turn.deltas.next()) yield next.value;
}

/** A non-streamed answer: the whole turn as one chat.completion. */
async function completion(turn: OpenedTurn) {
  let content = '';
  const calls = new Map<number, ToolCall>();
  let finishReason: FinishReason = 'stop';
  let usage = { inputTokens: 0, outputTokens: 0 };
  for await (const delta of allDeltas(turn)) {
    if (delta.type === 'text') content += delta.text;
    else if (delta.type === 'tool_call') {
      const call = calls.get(delta.index) ?? { id: '', name: '', arguments: '' };
      if (delta.id) call.id = delta.id;
      if (delta.name) call.name += delta.name;
      call.arguments += delta.arguments;
      calls.set(delta.index, call);
    } else {
      finishReason = delta.finishReason;
      usage = delta.usage;
    }
  }
  const toolCalls = [...calls.entries()]
    .sort(([a], [b]) => a - b)
    .map(([, call]) => ({
      id: call.id,
      type: 'function' as const,
      function: { name: call.name, arguments: call.arguments },
    }));
  return {
    id: turn.id,
    object: 'chat.completion' as const,
    created: turn.created,
    model: turn.model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant' as const,
          content: content || (toolCalls.length ? null : ''),
          ...(toolCalls.length ? { tool_calls: toolCalls } : {}),
        },
        finish_reason: finishReason,
      },
    ],
    usage: {
      prompt_tokens: usage.inputTokens,
      completion_tokens: usage.outputTokens,
      total_tokens: usage.inputTokens + usage.outputTokens,
    },
    parley_knowledge: turn.knowledge,
  };
}

/** An upstream failure is the model's, not the service's: one line at warn, without a stack. */
function logUpstreamFailure(req: FastifyRequest, error: AppError, outcome: string) {
  req.log.warn(
    { error: error.code, reason: error.message, details: error.details },
    `the agent's model failed: ${outcome}`,
  );
}

/**
 * Answers a turn that could not start. A client that went away has nobody to answer and an upstream failure is a 502:
 * neither is the service's fault, so each is one line at warn, without a stack. Anything else is the error
 * handler's.
 */
function failedToOpen(req: FastifyRequest, reply: FastifyReply, error: unknown, clientGone: AbortSignal) {
  if (clientGone.aborted) {
    req.log.warn(
      { reason: error instanceof Error ? error.message : String(error) },
      'the client went away before the model answered',
    );
    reply.hijack();
    reply.raw.destroy();
    return reply;
  }
  if (error instanceof AppError && error.code === 'upstream_error') {
    logUpstreamFailure(req, error, `answered ${error.statusCode}`);
    return reply
      .status(error.statusCode)
      .send({ error: error.code, message: error.message, details: error.details } satisfies ErrorBody);
  }
  throw error;
}

/** A streamed answer: chat.completion.chunk events, each written the moment its delta arrives, then [DONE]. */
async function stream(req: FastifyRequest, reply: FastifyReply, turn: OpenedTurn, includeUsage: boolean) {
  reply.hijack();
  const res = reply.raw;
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    'x-request-id': req.id,
    'x-accel-buffering': 'no',
  });
  const head = `{"id":${JSON.stringify(turn.id)},"object":"chat.completion.chunk","created":${turn.created},"model":${JSON.stringify(turn.model)},`;
  const send = (rest: string) => res.write(`data: ${head}${rest}}\n\n`);
  let role = '"role":"assistant",';
  try {
    for await (const delta of allDeltas(turn)) {
      if (delta.type === 'text') {
        send(`"choices":[{"index":0,"delta":{${role}"content":${JSON.stringify(delta.text)}},"finish_reason":null}]`);
      } else if (delta.type === 'tool_call') {
        const call = {
          index: delta.index,
          ...(delta.id ? { id: delta.id, type: 'function' } : {}),
          function: { ...(delta.name ? { name: delta.name } : {}), arguments: delta.arguments },
        };
        send(`"choices":[{"index":0,"delta":{${role}"tool_calls":[${JSON.stringify(call)}]},"finish_reason":null}]`);
      } else {
        // The knowledge goes on the one chunk every stream has exactly once, beside fields any client already reads.
        send(
          `"choices":[{"index":0,"delta":{},"finish_reason":${JSON.stringify(delta.finishReason)}}],"parley_knowledge":${JSON.stringify(turn.knowledge)}`,
        );
        if (includeUsage) {
          const { inputTokens, outputTokens } = delta.usage;
          send(
            `"choices":[],"usage":{"prompt_tokens":${inputTokens},"completion_tokens":${outputTokens},"total_tokens":${inputTokens + outputTokens}}`,
          );
        }
        res.write('data: [DONE]\n\n');
        continue;
      }
      role = '';
    }
  } catch (error) {
    if (res.destroyed) return; // the client went away: nobody to tell
    // Headers are gone: the failure goes in the stream, as OpenAI reports one, and the stream ends without [DONE].
    const known = error instanceof AppError;
    if (known && error.code === 'upstream_error') logUpstreamFailure(req, error, 'the stream ends with an error event');
    else req.log.error({ err: error }, 'the proxied stream failed');
    const message = known ? error.message : 'The stream failed; details.requestId identifies it in the logs';
    res.write(
      `data: ${JSON.stringify({ error: { message, type: known ? error.code : 'internal_error', code: known ? error.code : 'internal_error' } })}\n\n`,
    );
  } finally {
    res.end();
  }
}

export function llmProxyRoutes(app: App, { llmProxy }: { llmProxy: LlmProxyService }) {
  app.post(
    '/llm-proxy/:agentId/chat/completions',
    {
      config: { access: allow.accountOrCallToken('agents.converse') },
      schema: {
        operationId: 'createChatCompletion',
        tags,
        summary: "OpenAI-compatible chat completions with the agent's prompt, knowledge and model",
        description:
          "Point an OpenAI client's base URL at /api/v1/llm-proxy/{agentId}. The agent's system prompt goes in front of " +
          'the messages (a system message of the request comes after it), with the knowledge-base chunks that best match ' +
          "the last user message; the agent's model answers (its liveLlmId in the model catalog, else the default). " +
          'stream: true answers server-sent events ending with data: [DONE]. Tools, tool calls and tool messages pass ' +
          'through. Name a call with the X-Parley-Call-Id header or metadata.callId to charge its tokens to the call. ' +
          'Besides an API key or a session, a per-call token (Bearer pct_...) issued for a call works for that call ' +
          'and agent until the call ends. An upstream failure is a 502 upstream_error. The answer also lists, in ' +
          'parley_knowledge, the knowledge-base chunks retrieved for the turn (on the streamed chunk with ' +
          'finish_reason); OpenAI clients ignore the field.',
        params: ProxyParams,
        body: ChatCompletionBody,
        response: responses(ChatCompletion),
      },
    },
    async (req, reply) => {
      const abort = new AbortController();
      reply.raw.on('close', () => {
        if (!reply.raw.writableFinished) abort.abort('client_closed');
      });
      const caller = { accountId: req.auth.accountId, grant: req.auth.callGrant ?? null };
      const callId = headerCallId(req);
      let turn: OpenedTurn;
      try {
        turn = await llmProxy.open(caller, req.params.agentId, req.body, callId, abort.signal);
      } catch (error) {
        return failedToOpen(req, reply, error, abort.signal);
      }
      if (req.body.stream) return stream(req, reply, turn, req.body.stream_options?.include_usage === true);
      return completion(turn);
    },
  );
}
