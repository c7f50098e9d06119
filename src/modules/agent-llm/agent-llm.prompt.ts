/**
 * The rules of an agent's turn that need no model: the script the playbook engine follows, the system prompt the
 * model receives, the words knowledge is looked up by, and a provider failure as the caller sees it.
 */
import { AppError } from '../../lib/errors.js';
import type { AgentScript, ChatMessage } from '../../providers/llm/index.js';
import type { ProviderError } from '../../providers/provider-error.js';
import { assembleSystemPrompt } from '../agents/agents.prompt.js';
import type { RetrievedChunk } from '../knowledge/knowledge.service.js';
import type { TurnAgent } from './agent-llm.ports.js';

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

/**
 * What knowledge is looked up by: the caller's last words. Empty (no lookup at all) for an agent without a knowledge
 * base, which has nothing indexed, and for a conversation with nothing said by the caller yet.
 */
export function knowledgeQueryOf(agent: Pick<TurnAgent, 'parts'>, messages: readonly ChatMessage[]): string {
  if (!agent.parts.knowledgeBase.trim()) return '';
  const lastUser = [...messages].reverse().find((message) => message.role === 'user')?.content ?? '';
  return lastUser.trim() ? lastUser : '';
}

/** A provider failure as the caller sees it: what went wrong upstream, without its address or key. */
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
