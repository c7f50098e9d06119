/**
 * Drafts a whole agent from a business description and a goal. With an LLM configured, the model writes it as a
 * JSON object constrained by a JSON schema; offline (or when the model fails) a deterministic generator adapts the
 * closest template. Nothing is saved.
 */
import { PROMPT_LIMITS, VERSIONED_FIELDS, type VersionedFields } from '../agents/agents.prompt.js';
import { collectChat, type LlmClient } from '../../providers/llm/index.js';
import { AGENT_TEMPLATES, TONES, renderTemplate, type RenderedTemplate, type Tone } from './agent-templates.catalog.js';
import { COMPLIANCE_NOTES } from './agent-templates.types.js';

export interface GenerateInput {
  businessDescription: string;
  goal: string;
  tone?: Tone;
  language?: string;
}

/** Words that point at each template, strongest use case first when scores tie. */
const TEMPLATE_KEYWORDS: Record<string, RegExp> = {
  'dental-reception': /\b(dental|dentist\w*|teeth|tooth|orthodont\w*|hygienist)\b/gi,
  'compliant-collections': /\b(collect\w*|overdue|debts?|past[- ]due|outstanding balance|unpaid|arrears|invoices?)\b/gi,
  'appointment-reminders': /\b(remind\w*|no[- ]shows?|confirm (the |their )?appointments?)\b/gi,
  surveys: /\b(surveys?|feedback|nps|satisfaction|net promoter)\b/gi,
  'real-estate-follow-up':
    /\b(real[- ]estate|realtors?|propert(y|ies)|listings?|homes?|houses?|buyers?|sellers?|brokerage)\b/gi,
  'lead-qualification': /\b(qualif\w*|leads?|prospects?|pipeline|bant)\b/gi,
  'inbound-support':
    /\b(support|help ?desk|customer service|troubleshoot\w*|answer (the )?(phone|calls)|inbound|questions)\b/gi,
  'appointment-setting': /\b(book\w*|appointments?|schedul\w*|consultations?|demos?|meetings?)\b/gi,
};

const count = (pattern: RegExp, text: string) => text.match(pattern)?.length ?? 0;

/** The template whose keywords the goal (counted twice) and the description mention most. */
export function closestTemplate(input: GenerateInput) {
  let best = AGENT_TEMPLATES.find((template) => template.id === 'appointment-setting')!;
  let bestScore = 0;
  for (const [id, pattern] of Object.entries(TEMPLATE_KEYWORDS)) {
    const score = 2 * count(pattern, input.goal) + count(pattern, input.businessDescription);
    if (score > bestScore) {
      bestScore = score;
      best = AGENT_TEMPLATES.find((template) => template.id === id)!;
    }
  }
  return best;
}

/** "Acme Plumbing is a family business…" -> "Acme Plumbing": the capitalised words a description starts with. */
export function businessNameOf(description: string): string {
  const match =
    /^\s*((?:[A-Z0-9][\w&'’.-]*)(?:\s+(?:[A-Z0-9&][\w&'’.-]*|of|and|the|&)){0,5})(?=\s+(?:is|are|was|has|provides|offers|sells|helps|runs|serves|specializes|specialises)\b|\s*[,:–—(-])/.exec(
      description,
    );
  const name = match?.[1]?.trim().replace(/[.,]$/, '');
  return name && name.length <= 80 && !/^(We|Our|I|My|The|A|An)$/i.test(name) ? name : 'our company';
}

const sentence = (text: string) => {
  const trimmed = text.trim().replace(/\s+/g, ' ');
  return /[.!?]$/.test(trimmed) ? trimmed : `${trimmed}.`;
};

const isEnglish = (language: string | undefined) => !language || /^(en|eng|english)([-_ ].*)?$/i.test(language.trim());

/** The offline draft: the closest template, named for the business, with the goal as its mission. */
export function generateOffline(input: GenerateInput): { definition: RenderedTemplate; templateId: string } {
  const template = closestTemplate(input);
  const businessName = businessNameOf(input.businessDescription);
  const definition = renderTemplate(template, { businessName }, input.tone);
  definition.mission = `${sentence(input.goal)}\n${definition.mission}`;
  definition.knowledgeBase = `About ${businessName}: ${sentence(input.businessDescription)}\n\n${definition.knowledgeBase}`;
  if (!isEnglish(input.language)) {
    definition.notes = `${definition.notes}\n- Speak ${input.language!.trim()} for the whole call, including the greeting. If the person prefers another language, apologise and offer to have someone call back.`;
  }
  return { definition, templateId: template.id };
}

const GENERATED_FIELDS = [...VERSIONED_FIELDS, 'name', 'whenToTransfer', 'voicemailMessage'] as const;

export const AGENT_DEFINITION_SCHEMA = {
  type: 'object',
  properties: Object.fromEntries(GENERATED_FIELDS.map((field) => [field, { type: 'string' }])),
  required: [...GENERATED_FIELDS],
  additionalProperties: false,
};

const WRITER_INSTRUCTIONS = `You write the instructions of an AI phone agent for a business. Answer with one JSON object with these fields:
name (a short agent name), soul (personality and how it speaks), mission (the one goal of the call), playbook (numbered steps),
examples (two or three short example exchanges), objections (objections and answers), closers (how to close and wrap up),
notes (rules to keep), faq (questions callers ask, with answers), knowledgeBase (facts about the business, only from the description),
firstMessage (the first sentence spoken), whenToTransfer (when to hand the call to a person), voicemailMessage (a short voicemail).
Rules the agent must keep, which you must write into it: it says it is an AI assistant in the first message and whenever asked;
if someone asks to stop calling or to be removed, it confirms and ends the call; it never asks for card numbers, Social Security
numbers, passwords or one-time codes; it never promises medical, legal or financial results; it never pressures or threatens;
it offers call-backs only between 8 am and 9 pm local time. Invent no prices, addresses or facts that the description does not give.
The following notes are required and must appear in notes, unchanged apart from the business name:
${COMPLIANCE_NOTES}`;

function limitOf(field: (typeof GENERATED_FIELDS)[number]): number {
  if (field === 'knowledgeBase') return PROMPT_LIMITS.knowledgeBase;
  if (field === 'firstMessage') return PROMPT_LIMITS.firstMessage;
  if (field === 'name') return 120;
  if (field === 'whenToTransfer' || field === 'voicemailMessage') return PROMPT_LIMITS.shortText;
  return PROMPT_LIMITS.part;
}

/** The model's draft; a missing or empty field is filled from the offline draft so the definition is always whole. */
export async function generateWithLlm(
  llm: LlmClient,
  input: GenerateInput,
  signal?: AbortSignal,
): Promise<RenderedTemplate> {
  const request = {
    businessDescription: input.businessDescription,
    goal: input.goal,
    tone: input.tone ? TONES[input.tone] : 'Choose the tone that suits the business.',
    language: input.language ?? 'English',
  };
  const turn = await collectChat(
    llm.chat({
      messages: [
        { role: 'system', content: WRITER_INSTRUCTIONS },
        { role: 'user', content: JSON.stringify(request) },
      ],
      temperature: 0.4,
      maxTokens: 4000,
      responseFormat: { name: 'agent_definition', schema: AGENT_DEFINITION_SCHEMA },
      ...(signal ? { signal } : {}),
    }),
  );
  const parsed = JSON.parse(turn.message.content ?? '') as Record<string, unknown>;
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new Error('the answer is not a JSON object');
  const fallback = generateOffline(input).definition;
  const text = (field: (typeof GENERATED_FIELDS)[number], otherwise: string) => {
    const value = parsed[field];
    return typeof value === 'string' && value.trim()
      ? value
          .replace(/\u0000/g, '')
          .trim()
          .slice(0, limitOf(field))
      : otherwise;
  };
  const parts = Object.fromEntries(
    VERSIONED_FIELDS.map((field) => [field, text(field, fallback[field])]),
  ) as VersionedFields;
  return {
    name: text('name', fallback.name).replace(/[\r\n\t]+/g, ' '),
    ...parts,
    transfer: { whenToTransfer: text('whenToTransfer', fallback.transfer.whenToTransfer) },
    voicemail: { action: 'leave_message', message: text('voicemailMessage', fallback.voicemail.message) },
  };
}
