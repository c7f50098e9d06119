/**
 * LLM provider: one streamed chat turn at a time. Two adapters: `openai` (any OpenAI-compatible
 * /chat/completions server) and `parley-playbook`, a deterministic engine that follows the agent's
 * playbook offline and is never presented as a model.
 */
import type { LlmConfig } from '../../config.js';
import type { LlmClient } from './chat.js';
import { createOpenAiLlm } from './openai-llm.js';
import { createPlaybookLlm } from './playbook-llm.js';

export * from './chat.js';
export type { AgentScript } from './playbook-script.js';
export { createOpenAiLlm, type OpenAiLlmOptions } from './openai-llm.js';
export { asksNotToBeCalled, createPlaybookLlm, PLAYBOOK_ENGINE_NAME } from './playbook-llm.js';

export function createLlmClient(config: LlmConfig): LlmClient {
  if (config.provider === 'openai') {
    return createOpenAiLlm({
      baseUrl: config.baseUrl,
      apiKey: config.apiKey,
      model: config.model,
      timeoutMs: config.timeoutMs,
    });
  }
  return createPlaybookLlm();
}
export {
  cosineSimilarity,
  createEmbeddingsClient,
  type EmbeddingsClient,
  type EmbeddingsOptions,
} from './embeddings.js';
