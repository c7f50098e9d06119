/**
 * The agent prompt: nine parts, assembled in this order into the system prompt.
 * The API calls the knowledge part `knowledgeBase`; everything here uses the API names.
 */
export const PROMPT_PART_ORDER = [
  'soul',
  'mission',
  'playbook',
  'examples',
  'objections',
  'closers',
  'notes',
  'faq',
  'knowledgeBase',
] as const;

export type PromptPartName = (typeof PROMPT_PART_ORDER)[number];
export type PromptParts = Record<PromptPartName, string>;

/** What a saved version holds: the prompt parts and the first message, the fields whose change bumps `version`. */
export type VersionedFieldName = PromptPartName | 'firstMessage';
export const VERSIONED_FIELDS: readonly VersionedFieldName[] = [...PROMPT_PART_ORDER, 'firstMessage'];
export type VersionedFields = Record<VersionedFieldName, string>;

/**
 * Length limits in characters. A part is instructions read on every turn, so 20k characters (~5k tokens)
 * is already generous; the knowledge base is retrieved in chunks, so it may be ten times that.
 * The first message and the short settings texts are spoken or read in one go.
 */
export const PROMPT_LIMITS = {
  part: 20_000,
  knowledgeBase: 200_000,
  firstMessage: 2_000,
  shortText: 2_000,
} as const;

const HEADINGS: Record<PromptPartName, string> = {
  soul: 'Personality',
  mission: 'Mission',
  playbook: 'Playbook',
  examples: 'Examples',
  objections: 'Objection handling',
  closers: 'Closing',
  notes: 'Notes',
  faq: 'FAQ',
  knowledgeBase: 'Knowledge base',
};

/**
 * The system prompt the model receives: every non-blank part, in the order above, each under a "## Heading".
 * Blank parts are left out entirely, so an agent with only a mission gets a one-section prompt.
 */
export function assembleSystemPrompt(parts: Partial<Record<PromptPartName, string | null>>): string {
  return PROMPT_PART_ORDER.flatMap((name) => {
    const text = parts[name]?.trim();
    return text ? [`## ${HEADINGS[name]}\n${text}`] : [];
  }).join('\n\n');
}
