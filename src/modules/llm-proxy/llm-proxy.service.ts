/**
 * The LLM proxy: the OpenAI-compatible face of an agent's LLM. A voice platform (or any OpenAI client) reaches it
 * through POST /v1/llm-proxy/{agentId}/chat/completions, as an account member or with a per-call token (scoped to one
 * agent and one call); the turn itself is the agent's LLM's (the agent-llm module), the same the call engine uses.
 */
import { randomUUID } from 'node:crypto';
import { AppError, invalidField, notFound } from '../../lib/errors.js';
import type { Auth } from '../../lib/caller.js';
import type { Clock } from '../../lib/clock.js';
import type { ChatMessage, ChatRequest, ToolDefinition } from '../../providers/llm/index.js';
import type { AgentsService } from '../agents/agents.service.js';
import type { AgentLlmService } from '../agent-llm/agent-llm.service.js';
import type { CallsService } from '../calls/calls.service.js';
import type { RetrievedChunk } from '../knowledge/knowledge.service.js';
import {
  EXCERPT_CHARS,
  type ChatCompletionBody,
  type ChatMessageIn,
  type RetrievedKnowledgeChunk,
} from './llm-proxy.schemas.js';

/** Who calls the proxy: an account member, or the holder of a per-call token (scoped to one agent and one call). */
export interface ProxyCaller {
  accountId: string;
  grant?: { agentId: string; callId: string } | null;
}

export interface LlmProxyDeps {
  clock: Clock;
  agents: Pick<AgentsService, 'forCall'>;
  agentLlm: Pick<AgentLlmService, 'agentTurn' | 'defaultModelName'>;
  /** Per-call tokens, whether a call named by a request is the agent's, and where its turns are recorded. */
  calls: Pick<CallsService, 'isCallOfAgent' | 'llmCallGrant' | 'recordLlmTurn'>;
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

/** An OpenAI chat completion request as the LLM layer's request. */
export function chatRequestOf(body: ChatCompletionBody, signal: AbortSignal): ChatRequest {
  const tools: ToolDefinition[] | undefined = body.tools?.map((tool) => ({
    name: tool.function.name,
    ...(tool.function.description !== undefined ? { description: tool.function.description } : {}),
    parameters: tool.function.parameters ?? { type: 'object', properties: {} },
  }));
  const maxTokens = body.max_completion_tokens ?? body.max_tokens;
  return {
    messages: toChatMessages(body.messages),
    ...(tools?.length ? { tools } : {}),
    ...(body.tool_choice !== undefined ? { toolChoice: body.tool_choice as ChatRequest['toolChoice'] } : {}),
    ...(body.temperature !== undefined ? { temperature: body.temperature } : {}),
    ...(maxTokens !== undefined ? { maxTokens } : {}),
    signal,
  };
}

/** Text shortened to `max` characters at most, whitespace collapsed, cut at a word and ending in … when cut. */
export function excerptOf(text: string, max = EXCERPT_CHARS): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat.length <= max) return flat;
  const cut = flat.slice(0, max - 1);
  const word = cut.lastIndexOf(' ');
  return `${(word > max / 2 ? cut.slice(0, word) : cut).trimEnd()}…`;
}

/** A retrieved chunk as the proxy's client sees it: where it is, what it says in short, and how well it matched. */
export function knowledgeUsed(chunk: RetrievedChunk): RetrievedKnowledgeChunk {
  return {
    id: chunk.id,
    source: chunk.heading || null,
    excerpt: excerptOf(chunk.content),
    score: Math.round(chunk.score * 10_000) / 10_000,
  };
}

export function createLlmProxyService(deps: LlmProxyDeps) {
  const { clock, agents, agentLlm, calls } = deps;

  return {
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

      const request = chatRequestOf(body, signal);
      // The chunks the turn retrieves, as it retrieves them: no second lookup to tell the client.
      let retrieved: readonly RetrievedChunk[] = [];
      const deltas = agentLlm.agentTurn(
        {
          accountId: caller.accountId,
          agent,
          callId,
          chargeUsage: true,
          turns: calls,
          onKnowledge: (chunks) => {
            retrieved = chunks;
          },
        },
        request,
      );
      // Retrieval comes before the model is asked, so once the first delta is in, so are the chunks.
      const first = await deltas.next();
      return {
        knowledge: retrieved.map(knowledgeUsed),
        id: `chatcmpl-${randomUUID().replaceAll('-', '')}`,
        created: Math.floor(clock.now().getTime() / 1000),
        model: agent.liveLlmId ?? agentLlm.defaultModelName,
        first,
        deltas,
      };
    },
  };
}

export type LlmProxyService = ReturnType<typeof createLlmProxyService>;
export type OpenedTurn = Awaited<ReturnType<LlmProxyService['open']>>;
