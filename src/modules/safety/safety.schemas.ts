import { Type, type Static } from 'typebox';
import { Nullable, SingleLineText, Uuid } from '../../http/schemas.js';
import { PROMPT_LIMITS, VERSIONED_FIELDS } from '../agents/agents.prompt.js';
import { CHECKED_PARTS, SAFETY_RULES, SAFETY_SEVERITIES } from './safety.rules.js';

const partLimit = (name: string) =>
  name === 'knowledgeBase'
    ? PROMPT_LIMITS.knowledgeBase
    : name === 'firstMessage'
      ? PROMPT_LIMITS.firstMessage
      : PROMPT_LIMITS.part;

/** An agent as text: the prompt parts, the first message and the settings the check reads. Nothing is saved. */
export const AgentDefinition = Type.Object(
  {
    name: Type.Optional(SingleLineText({ maxLength: 120 })),
    ...Object.fromEntries(
      VERSIONED_FIELDS.map((name) => [name, Type.Optional(Type.String({ maxLength: partLimit(name) }))]),
    ),
    transfer: Type.Optional(
      Type.Object(
        {
          number: Type.Optional(
            Nullable(
              Type.String({
                maxLength: 40,
                description: 'Checked, not refused: a number that is not E.164 is a finding.',
              }),
            ),
          ),
          whenToTransfer: Type.Optional(Type.String({ maxLength: PROMPT_LIMITS.shortText })),
        },
        { additionalProperties: false },
      ),
    ),
    voicemail: Type.Optional(
      Type.Object(
        {
          action: Type.Optional(Type.String({ maxLength: 40 })),
          message: Type.Optional(Type.String({ maxLength: PROMPT_LIMITS.shortText })),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false, description: 'An agent definition: the same field names as an agent.' },
);

export const SafetyCheckBody = Type.Object(
  {
    agentId: Type.Optional(Uuid),
    agent: Type.Optional(AgentDefinition),
  },
  {
    additionalProperties: false,
    description: 'Exactly one of agentId (a saved agent of this account) or agent (a definition).',
  },
);
export type SafetyCheckInput = Static<typeof SafetyCheckBody>;

const RuleCode = Type.Enum([...(Object.keys(SAFETY_RULES) as (keyof typeof SAFETY_RULES)[]), 'llm_review']);

export const Finding = Type.Object(
  {
    code: RuleCode,
    severity: Type.Enum([...SAFETY_SEVERITIES], { description: 'error fails the check; warning does not.' }),
    part: Nullable(Type.Enum([...CHECKED_PARTS, 'transfer.number'])),
    line: Nullable(Type.Integer({ minimum: 1 })),
    excerpt: Nullable(Type.String()),
    message: Type.String(),
    suggestion: Type.String(),
    source: Type.Enum(['rules', 'llm'], {
      description: 'rules: the fixed rules (same input, same findings); llm: the model review.',
    }),
  },
  { title: 'SafetyFinding', description: 'One problem the safety check found, where it is and how to fix it.' },
);

export const SafetyReport = Type.Object({
  result: Type.Enum(['pass', 'fail'], { description: 'fail when any finding is an error.' }),
  findings: Type.Array(Finding),
  counts: Type.Object({ error: Type.Integer(), warning: Type.Integer() }),
  llmReview: Type.Object({
    status: Type.Enum(['done', 'not_configured', 'failed']),
    model: Nullable(Type.String()),
    message: Nullable(Type.String()),
  }),
});
