import type { Auth } from '../../lib/caller.js';
import { AppError } from '../../lib/errors.js';
import { collectChat, type LlmClient } from '../../providers/llm/index.js';
import { ProviderError } from '../../providers/provider-error.js';
import type { AgentsService } from '../agents/agents.service.js';
import { CHECKED_PARTS, runSafetyRules, type AgentDefinition, type CheckedPart, type Finding } from './safety.rules.js';
import type { SafetyCheckInput } from './safety.schemas.js';

export { runSafetyRules, SAFETY_RULES, type AgentDefinition, type Finding } from './safety.rules.js';

const REVIEW_SCHEMA = {
  type: 'object',
  properties: {
    findings: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          severity: { type: 'string', enum: ['error', 'warning'] },
          part: { type: 'string', enum: [...CHECKED_PARTS] },
          excerpt: { type: 'string' },
          message: { type: 'string' },
          suggestion: { type: 'string' },
        },
        required: ['severity', 'part', 'excerpt', 'message', 'suggestion'],
        additionalProperties: false,
      },
    },
  },
  required: ['findings'],
  additionalProperties: false,
};

const REVIEW_INSTRUCTIONS = `You review the instructions of an AI phone agent for compliance and caller safety before it goes live.
Report only real problems not already obvious from fixed rules: deception, unfair or abusive practices, privacy risks,
misleading claims, missing consent or disclosures, and anything a regulator (TCPA, FDCPA, HIPAA, GDPR) would object to.
Quote the exact text (excerpt) and name the part it is in. Answer with JSON only. An empty list is a fine answer.`;

const MAX_REVIEW_FINDINGS = 20;
const clip = (text: unknown, max: number) => (typeof text === 'string' ? text.slice(0, max) : '');

/** The model's answer, kept only where it has the expected shape; a line number is found from the excerpt. */
function reviewFindings(raw: string, definition: AgentDefinition): Finding[] {
  const parsed = JSON.parse(raw) as { findings?: unknown };
  if (!Array.isArray(parsed.findings)) throw new Error('the review has no findings list');
  return parsed.findings.slice(0, MAX_REVIEW_FINDINGS).flatMap((item: Record<string, unknown>) => {
    if (typeof item !== 'object' || item === null || typeof item.message !== 'string') return [];
    const part = (CHECKED_PARTS as readonly string[]).includes(item.part as string) ? (item.part as CheckedPart) : null;
    const excerpt = clip(item.excerpt, 200) || null;
    const text = part ? partText(definition, part) : '';
    const index = excerpt && text ? text.split(/\r?\n/).findIndex((line) => line.includes(excerpt.slice(0, 60))) : -1;
    return [
      {
        code: 'llm_review' as const,
        severity: item.severity === 'error' ? ('error' as const) : ('warning' as const),
        part,
        line: index >= 0 ? index + 1 : null,
        excerpt,
        message: clip(item.message, 500),
        suggestion: clip(item.suggestion, 500),
        source: 'llm' as const,
      },
    ];
  });
}

function partText(definition: AgentDefinition, part: CheckedPart): string {
  if (part === 'transfer.whenToTransfer') return definition.transfer?.whenToTransfer ?? '';
  if (part === 'voicemail.message') return definition.voicemail?.message ?? '';
  if (part === 'transfer.number') return definition.transfer?.number ?? '';
  return definition[part] ?? '';
}

function definitionText(definition: AgentDefinition): string {
  return CHECKED_PARTS.map((part) => `### ${part}\n${partText(definition, part).trim() || '(empty)'}`).join('\n\n');
}

/**
 * The safety check: the fixed rules always run; when an LLM is configured (not the built-in playbook engine) it
 * reviews the definition too and adds its findings. A failed review is reported, never an error of the request.
 */
export function createSafetyService(deps: {
  agents: Pick<AgentsService, 'get'>;
  llm: LlmClient;
  llmConfigured: boolean;
}) {
  const { agents, llm, llmConfigured } = deps;

  async function review(definition: AgentDefinition) {
    if (!llmConfigured)
      return {
        findings: [] as Finding[],
        llmReview: { status: 'not_configured' as const, model: null, message: null },
      };
    try {
      const turn = await collectChat(
        llm.chat({
          messages: [
            { role: 'system', content: REVIEW_INSTRUCTIONS },
            { role: 'user', content: definitionText(definition) },
          ],
          temperature: 0,
          maxTokens: 2000,
          responseFormat: { name: 'safety_review', schema: REVIEW_SCHEMA },
        }),
      );
      const findings = reviewFindings(turn.message.content ?? '', definition);
      return { findings, llmReview: { status: 'done' as const, model: llm.name, message: null } };
    } catch (error) {
      const message =
        error instanceof ProviderError
          ? error.message
          : `the model's answer could not be read (${(error as Error).message})`;
      return {
        findings: [] as Finding[],
        llmReview: { status: 'failed' as const, model: llm.name, message: message.slice(0, 300) },
      };
    }
  }

  /** The rules alone, for callers that only need a pass or fail (the templates' own check). */
  function checkRules(definition: AgentDefinition) {
    const findings = runSafetyRules(definition);
    return { passed: !findings.some((f) => f.severity === 'error'), findings };
  }

  return {
    checkRules,

    async check(auth: Auth, input: SafetyCheckInput) {
      if ((input.agentId === undefined) === (input.agent === undefined)) {
        const fields = ['body/agentId', 'body/agent'].map((field) => ({
          field,
          message: 'send exactly one of agentId or agent',
        }));
        throw new AppError('validation_failed', 'Invalid request: send exactly one of agentId or agent', { fields });
      }
      const definition: AgentDefinition = input.agent ?? (await agents.get(auth, input.agentId!));
      const rules = runSafetyRules(definition);
      const reviewed = await review(definition);
      const findings = [...rules, ...reviewed.findings];
      const counts = {
        error: findings.filter((f) => f.severity === 'error').length,
        warning: findings.filter((f) => f.severity === 'warning').length,
      };
      return {
        result: counts.error > 0 ? ('fail' as const) : ('pass' as const),
        findings,
        counts,
        llmReview: reviewed.llmReview,
      };
    },
  };
}

export type SafetyService = ReturnType<typeof createSafetyService>;
