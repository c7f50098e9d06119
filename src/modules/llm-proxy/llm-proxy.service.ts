/**
 * The LLM proxy: one turn of an agent's conversation, whoever holds the conversation. A voice platform (or any
 * OpenAI client) reaches it through POST /v1/llm-proxy/{agentId}/chat/completions; the calls engine calls agentLlm()
 * directly. Either way the turn gets the agent's assembled prompt in front, with the knowledge retrieved for the
 * caller's last words in place of the whole knowledge base, and goes to the agent's model:
 *   liveLlmId null                   -> the deployment's default LLM (LLM_PROVIDER: the playbook engine unless set)
 *   liveLlmId naming a catalog model -> that model: parley-playbook is the built-in engine, openai-compatible is
 *                                       called at the model's baseUrl with its model name and API key
 *   a model the catalog lacks or has turned off -> the default LLM, as the call's pricing does
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import { AppError, invalidField, notFound } from '../../http/errors.js';
import type { Auth } from '../../http/auth.js';
import type { Clock } from '../../lib/clock.js';
import {
  createOpenAiLlm,
  createPlaybookLlm,
  type AgentScript,
  type ChatDelta,
  type ChatMessage,
  type ChatRequest,
  type LlmClient,
  type TokenUsage,
  type ToolDefinition,
} from '../../providers/llm/index.js';
import { ProviderError } from '../../providers/provider-error.js';
import { assembleSystemPrompt } from '../agents/agents.prompt.js';
import type { AgentsService } from '../agents/agents.service.js';
import type { CallsService } from '../calls/calls.service.js';
import type { CatalogService } from '../catalog/catalog.service.js';
import type { KnowledgeService, RetrievedChunk } from '../knowledge/knowledge.service.js';
import type { ChatCompletionBody, ChatMessageIn } from './llm-proxy.schemas.js';

export type TurnAgent = NonNullable<Awaited<ReturnType<AgentsService['forCall']>>>;

/** Who calls the proxy: an account member, or the holder of a per-call token (scoped to one agent and one call). */
export interface ProxyCaller {
  accountId: string;
  grant?: { agentId: string; callId: string } | null;
}

export interface LlmProxyDeps {
  config: Config;
  clock: Clock;
  log: Logger;
  agents: Pick<AgentsService, 'forCall'>;
  knowledge: Pick<KnowledgeService, 'retrieve'>;
  catalog: Pick<CatalogService, 'llmUpstream'>;
  calls: Pick<CallsService, 'recordLlmTurn' | 'isCallOfAgent' | 'llmCallGrant'>;
  /** What answers agents without a model of their own. */
  defaultLlm: LlmClient;
}

/** The script the playbook engine follows: the agent's prompt parts and its voicemail and transfer settings. */
export function agentScriptOf(agent: Pick<TurnAgent, 'parts' | 'voicemail' | 'transfer'>): AgentScript {
  return {
    ...agent.parts,
    voicemailMessage: agent.voicemail.action === 'leave_message' ? agent.voicemail.message : '',
    whenToTransfer: agent.transfer.number
      ? agent.transfer.whenToTransfer || 'when they ask to speak to a person'
      : null,
  };
}

/** The system prompt of a turn: every prompt part but the knowledge base, then the chunks retrieved for the turn. */
export function turnSystemPrompt(
  agent: Pick<TurnAgent, 'parts'>,
  chunks: readonly RetrievedChunk[],
  assembled?: string,
): string {
  const prompt = assembled ?? assembleSystemPrompt({ ...agent.parts, knowledgeBase: '' });
  if (chunks.length === 0) return prompt;
  const knowledge = chunks
    .map((chunk) => (chunk.heading ? `### ${chunk.heading}\n${chunk.content}` : chunk.content))
    .join('\n\n');
  return `${prompt ? `${prompt}\n\n` : ''}## Knowledge base\n${knowledge}`;
}

/** A provider failure as the proxy's caller sees it: what went wrong upstream, without its address or key. */
export function upstreamError(model: string, error: ProviderError): AppError {
  const reasons: Partial<Record<ProviderError['code'], string>> = {
    timeout: 'did not answer in time',
    network: 'could not be reached',
    bad_response: 'answered outside the chat completions protocol',
    invalid_request: error.message,
  };
  const upstream = error.code === 'upstream_error' ? error.message.replace(/^POST \S+ /, '') : undefined;
  const reason = upstream ?? reasons[error.code] ?? 'failed';
  return new AppError('upstream_error', `The agent's model (${model}) ${reason}`, {
    reason: error.code,
    ...(error.status ? { upstreamStatus: error.status } : {}),
  });
}

function textOf(content: ChatMessageIn['content']): string {
  if (content === undefined || content === null) return '';
  if (typeof content === 'string') return content;
  return content.flatMap((part) => (part.type === 'text' && typeof part.text === 'string' ? [part.text] : [])).join('');
}

/** OpenAI's messages as the LLM layer's; a request's system and developer messages stay where they are. */
function toChatMessages(messages: ChatMessageIn[]): ChatMessage[] {
  return messages.map((message, index): ChatMessage => {
    switch (message.role) {
      case 'assistant':
        return {
          role: 'assistant',
          content: message.content === null || message.content === undefined ? null : textOf(message.content),
          ...(message.tool_calls?.length
            ? {
                toolCalls: message.tool_calls.map((call) => ({
                  id: call.id,
                  name: call.function.name,
                  arguments: call.function.arguments,
                })),
              }
            : {}),
        };
      case 'tool':
        if (!message.tool_call_id)
          throw invalidField(`body/messages/${index}/tool_call_id`, 'is required for a tool message');
        return { role: 'tool', content: textOf(message.content), toolCallId: message.tool_call_id };
      case 'developer':
        return { role: 'system', content: textOf(message.content) };
      default:
        return { role: message.role, content: textOf(message.content) };
    }
  });
}

const UPSTREAM_CLIENTS_KEPT = 100;
const PROMPTS_KEPT = 1_000;

export function createLlmProxyService(deps: LlmProxyDeps) {
  const { config, clock, log, agents, knowledge, catalog, calls, defaultLlm } = deps;
  const playbook = createPlaybookLlm();
  const upstreamClients = new Map<string, LlmClient>();
  // The prompt parts (knowledge aside) of an agent's version, assembled once: a version never changes.
  const prompts = new Map<string, string>();
  function promptOf(agent: Pick<TurnAgent, 'id' | 'version' | 'parts'>): string {
    const key = `${agent.id}:${agent.version}`;
    let prompt = prompts.get(key);
    if (prompt === undefined) {
      if (prompts.size >= PROMPTS_KEPT) prompts.clear();
      prompt = assembleSystemPrompt({ ...agent.parts, knowledgeBase: '' });
      prompts.set(key, prompt);
    }
    return prompt;
  }

  /** The client of the agent's model (see the module comment). */
  async function clientFor(liveLlmId: string | null): Promise<LlmClient> {
    if (liveLlmId === null) return defaultLlm;
    const model = await catalog.llmUpstream(liveLlmId);
    if (!model) {
      log.warn({ liveLlmId }, 'the agent names a model the catalog lacks or has turned off; the default LLM answers');
      return defaultLlm;
    }
    if (model.provider !== 'openai-compatible' || !model.baseUrl) return playbook;
    const key = `${model.id}:${model.updatedAt.getTime()}`;
    let client = upstreamClients.get(key);
    if (!client) {
      if (upstreamClients.size >= UPSTREAM_CLIENTS_KEPT) upstreamClients.delete(upstreamClients.keys().next().value!);
      client = createOpenAiLlm({
        baseUrl: model.baseUrl,
        apiKey: model.apiKey,
        model: model.model,
        timeoutMs: config.llm.timeoutMs,
      });
      upstreamClients.set(key, client);
    }
    return client;
  }

  async function retrieve(
    accountId: string,
    agent: Pick<TurnAgent, 'id' | 'parts'>,
    messages: readonly ChatMessage[],
  ): Promise<RetrievedChunk[]> {
    // An agent without a knowledge base has nothing indexed: no lookup at all.
    if (!agent.parts.knowledgeBase.trim()) return [];
    const agentId = agent.id;
    const lastUser = [...messages].reverse().find((message) => message.role === 'user')?.content ?? '';
    if (!lastUser.trim()) return [];
    try {
      return await knowledge.retrieve(accountId, agentId, lastUser);
    } catch (error) {
      // A turn without knowledge beats no turn at all.
      log.warn({ err: error, agentId }, 'knowledge retrieval failed; the turn goes on without it');
      return [];
    }
  }

  /**
   * The shared path: one turn of `agent`, streamed. `request.messages` is the conversation (system messages of the
   * caller's own included); the agent's prompt and knowledge go in front. A named call gets the turn recorded; its
   * tokens become cost items only when `chargeUsage` (the engine prices its own calls' tokens when they end).
   */
  async function* agentTurn(
    context: { accountId: string; agent: TurnAgent; callId: string | null; chargeUsage: boolean },
    request: ChatRequest,
  ): AsyncGenerator<ChatDelta> {
    const { accountId, agent, callId } = context;
    const [chunks, client] = await Promise.all([
      retrieve(accountId, agent, request.messages),
      clientFor(agent.liveLlmId),
    ]);
    const messages: ChatMessage[] = [
      { role: 'system', content: turnSystemPrompt(agent, chunks, promptOf(agent)) },
      ...request.messages,
    ];
    let usage: TokenUsage | null = null;
    try {
      for await (const delta of client.chat({ ...request, messages, agent: request.agent ?? agentScriptOf(agent) })) {
        if (delta.type === 'done') {
          usage = delta.usage;
          if (callId && (chunks.length > 0 || context.chargeUsage)) {
            await calls.recordLlmTurn(accountId, callId, {
              chunkIds: chunks.map((chunk) => chunk.id),
              ...(context.chargeUsage ? { usage } : {}),
              modelId: agent.liveLlmId,
            });
          }
        }
        yield delta;
      }
    } catch (error) {
      if (error instanceof ProviderError && error.code !== 'aborted') throw upstreamError(client.name, error);
      throw error;
    }
    if (!usage)
      throw new AppError('upstream_error', `The agent's model (${client.name}) ended its answer without finishing it`);
  }

  return {
    agentTurn,

    /** The caller a per-call token stands for: the call's account, acting as a member, for its agent and call only. */
    async authenticateCallToken(token: string): Promise<Auth | null> {
      const grant = await calls.llmCallGrant(token);
      if (!grant) return null;
      return {
        accountId: grant.accountId,
        role: 'member',
        isPlatformAdmin: false,
        scheme: 'call_token',
        rateLimitPerMinute: null,
        callGrant: { agentId: grant.agentId, callId: grant.callId },
      };
    },

    /** For the calls engine: the agent's LLM for one call, through the same path as the HTTP proxy. */
    agentLlm(context: { accountId: string; agent: TurnAgent; callId: string | null }): LlmClient {
      return { name: 'llm-proxy', chat: (request) => agentTurn({ ...context, chargeUsage: false }, request) };
    },

    /**
     * Starts a proxied turn: checks the caller, the agent and the call, and waits for the model's first delta, so a
     * failure before any output is still an error answer (502 upstream_error) rather than a broken stream.
     */
    async open(
      caller: ProxyCaller,
      agentId: string,
      body: ChatCompletionBody,
      headerCallId: string | undefined,
      signal: AbortSignal,
    ) {
      const grant = caller.grant ?? null;
      if (grant && grant.agentId !== agentId) throw new AppError('forbidden', 'This call token is for another agent');
      const namedCall = headerCallId ?? body.metadata?.callId;
      if (grant && namedCall !== undefined && namedCall !== grant.callId)
        throw new AppError('forbidden', 'This call token is for another call');
      const agent = await agents.forCall(caller.accountId, agentId);
      if (!agent) throw notFound('Agent');
      const callId = grant?.callId ?? namedCall ?? null;
      if (callId && !grant && !(await calls.isCallOfAgent(caller.accountId, callId, agentId))) throw notFound('Call');

      const tools: ToolDefinition[] | undefined = body.tools?.map((tool) => ({
        name: tool.function.name,
        ...(tool.function.description !== undefined ? { description: tool.function.description } : {}),
        parameters: tool.function.parameters ?? { type: 'object', properties: {} },
      }));
      const maxTokens = body.max_completion_tokens ?? body.max_tokens;
      const request: ChatRequest = {
        messages: toChatMessages(body.messages),
        ...(tools?.length ? { tools } : {}),
        ...(body.tool_choice !== undefined ? { toolChoice: body.tool_choice as ChatRequest['toolChoice'] } : {}),
        ...(body.temperature !== undefined ? { temperature: body.temperature } : {}),
        ...(maxTokens !== undefined ? { maxTokens } : {}),
        signal,
      };
      const deltas = agentTurn({ accountId: caller.accountId, agent, callId, chargeUsage: true }, request);
      const first = await deltas.next();
      return {
        id: `chatcmpl-${randomUUID().replaceAll('-', '')}`,
        created: Math.floor(clock.now().getTime() / 1000),
        model: agent.liveLlmId ?? defaultLlm.name,
        first,
        deltas,
      };
    },
  };
}

export type LlmProxyService = ReturnType<typeof createLlmProxyService>;
export type OpenedTurn = Awaited<ReturnType<LlmProxyService['open']>>;
