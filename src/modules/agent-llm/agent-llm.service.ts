/**
 * The agent's LLM: one turn of an agent's conversation, whoever holds the conversation (the call engine, or a voice
 * platform through the LLM proxy). The turn gets the agent's assembled prompt in front, with the knowledge retrieved
 * for the caller's last words in place of the whole knowledge base, and goes to the agent's model:
 *   liveLlmId null                   -> the deployment's default LLM (LLM_PROVIDER: the playbook engine unless set)
 *   liveLlmId naming a catalog model -> that model: parley-playbook is the built-in engine, openai-compatible is
 *                                       called at the model's baseUrl with its model name and API key
 *   a model the catalog lacks or has turned off -> the default LLM, as the call's pricing does
 */
import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import { AppError } from '../../lib/errors.js';
import {
  createOpenAiLlm,
  createPlaybookLlm,
  PLAYBOOK_ENGINE_NAME,
  type ChatDelta,
  type ChatMessage,
  type ChatRequest,
  type LlmClient,
  type TokenUsage,
} from '../../providers/llm/index.js';
import { ProviderError } from '../../providers/provider-error.js';
import { assembleSystemPrompt } from '../agents/agents.prompt.js';
import type { RetrievedChunk } from '../knowledge/knowledge.service.js';
import type { CatalogForAgentLlm, KnowledgeForAgentLlm, TurnAgent, TurnRecorder } from './agent-llm.ports.js';
import { agentScriptOf, knowledgeQueryOf, turnSystemPrompt, upstreamError } from './agent-llm.prompt.js';

export interface AgentLlmDeps {
  config: Config;
  log: Logger;
  knowledge: KnowledgeForAgentLlm;
  catalog: CatalogForAgentLlm;
  /** What answers agents without a model of their own. */
  defaultLlm: LlmClient;
}

/** One turn's circumstances: the agent, the call it belongs to (if any), and whether its tokens are charged here. */
export interface TurnContext {
  accountId: string;
  agent: TurnAgent;
  callId: string | null;
  /** The engine prices its own calls' tokens when they end; a proxied turn is charged as it ends. */
  chargeUsage: boolean;
  /** Where a named call's turns are recorded: the calls module's writer, handed down with the turn. */
  turns?: TurnRecorder;
  /** Told the knowledge retrieved for the turn before the model is asked (the proxy shows it to its client). */
  onKnowledge?: (chunks: readonly RetrievedChunk[]) => void;
}

const UPSTREAM_CLIENTS_KEPT = 100;
const PROMPTS_KEPT = 1_000;

export function createAgentLlmService(deps: AgentLlmDeps) {
  const { config, log, knowledge, catalog, defaultLlm } = deps;
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
    const query = knowledgeQueryOf(agent, messages);
    if (!query) return [];
    try {
      return await knowledge.retrieve(accountId, agent.id, query);
    } catch (error) {
      // A turn without knowledge beats no turn at all.
      log.warn({ err: error, agentId: agent.id }, 'knowledge retrieval failed; the turn goes on without it');
      return [];
    }
  }

  /**
   * One turn of the agent, streamed. `request.messages` is the conversation (system messages of the caller's own
   * included); the agent's prompt and knowledge go in front. A named call gets the turn recorded when it retrieved
   * knowledge or is charged.
   */
  async function* agentTurn(context: TurnContext, request: ChatRequest): AsyncGenerator<ChatDelta> {
    const { accountId, agent, callId } = context;
    const [chunks, client] = await Promise.all([
      retrieve(accountId, agent, request.messages),
      clientFor(agent.liveLlmId),
    ]);
    context.onKnowledge?.(chunks);
    const messages: ChatMessage[] = [
      { role: 'system', content: turnSystemPrompt(agent, chunks, promptOf(agent)) },
      ...request.messages,
    ];
    let usage: TokenUsage | null = null;
    try {
      for await (const delta of client.chat({ ...request, messages, agent: request.agent ?? agentScriptOf(agent) })) {
        if (delta.type === 'done') {
          usage = delta.usage;
          if (callId && context.turns && (chunks.length > 0 || context.chargeUsage)) {
            await context.turns.recordLlmTurn(accountId, callId, {
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

    /** For the call engine: the agent's LLM for one of its calls (its tokens are priced with the call). */
    forCall(context: { accountId: string; agent: TurnAgent; callId: string | null; turns: TurnRecorder }): LlmClient {
      return { name: 'llm-proxy', chat: (request) => agentTurn({ ...context, chargeUsage: false }, request) };
    },

    /**
     * The agent's model for work outside a conversation (a call's analysis): the same model its turns use, asked
     * directly, without the agent's prompt; null when the built-in playbook engine would answer, which is no model.
     */
    async modelFor(liveLlmId: string | null): Promise<LlmClient | null> {
      const client = await clientFor(liveLlmId);
      return client.name === PLAYBOOK_ENGINE_NAME ? null : client;
    },

    /** The name of the model that answers agents without one of their own. */
    defaultModelName: defaultLlm.name,
  };
}

export type AgentLlmService = ReturnType<typeof createAgentLlmService>;
