/**
 * What the agent's LLM needs from other modules: narrow slices of their services (wired in services.ts), and the
 * recorder its callers hand down.
 */
import type { AgentsService } from '../agents/agents.service.js';
import type { CatalogService } from '../catalog/catalog.service.js';
import type { KnowledgeService } from '../knowledge/knowledge.service.js';

/** The agent a turn speaks for, at the version its call runs. */
export type TurnAgent = NonNullable<Awaited<ReturnType<AgentsService['forCall']>>>;
export type KnowledgeForAgentLlm = Pick<KnowledgeService, 'retrieve'>;
export type CatalogForAgentLlm = Pick<CatalogService, 'llmUpstream'>;

/** One finished turn of a call, as the call records it: the knowledge it retrieved and, when charged, its tokens. */
export interface RecordedTurn {
  chunkIds: string[];
  usage?: { inputTokens: number; outputTokens: number };
  modelId: string | null;
}

/**
 * Where a call's turns are recorded: the calls module's own writer of the call's timeline and costs, which the
 * caller (the call engine, the LLM proxy) hands down with each turn.
 */
export interface TurnRecorder {
  recordLlmTurn(accountId: string, callId: string, turn: RecordedTurn): Promise<void>;
}
