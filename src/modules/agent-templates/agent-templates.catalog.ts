/**
 * The built-in agent templates. Their text has blanks ({{businessName}}) that a template's variables fill; a
 * blank without an answer reads the variable's default, so every template renders to a complete agent.
 */
import { VERSIONED_FIELDS, type VersionedFields } from '../agents/agents.prompt.js';
import { articleBefore, capitalizedAt } from '../../providers/llm/playbook-script.js';
import type { AgentTemplate } from './agent-templates.types.js';
import { appointmentSetting, leadQualification, realEstateFollowUp, surveys } from './agent-templates.sales.js';
import {
  appointmentReminders,
  compliantCollections,
  dentalReception,
  inboundSupport,
} from './agent-templates.customer-care.js';

export const AGENT_TEMPLATES: readonly AgentTemplate[] = [
  appointmentSetting,
  leadQualification,
  inboundSupport,
  appointmentReminders,
  surveys,
  compliantCollections,
  realEstateFollowUp,
  dentalReception,
];

export const TEMPLATE_IDS = AGENT_TEMPLATES.map((template) => template.id);

export function findTemplate(id: string): AgentTemplate | undefined {
  return AGENT_TEMPLATES.find((template) => template.id === id);
}

/** The tones the wizard and the generator offer, each as the line added to the personality. */
export const TONES = {
  warm: 'Speak in a warm, friendly and reassuring tone.',
  professional: 'Speak in a polished, professional and concise tone.',
  upbeat: 'Speak in an upbeat, energetic and positive tone, without being pushy.',
  calm: 'Speak in a calm, patient and steady tone.',
} as const;
export type Tone = keyof typeof TONES;
export const TONE_NAMES = Object.keys(TONES) as Tone[];

const BLANK = /(\b[Aa] )?\{\{(\w+)\}\}/g;

/**
 * The text with every blank filled: the given value, else the variable's default ("a {{x}}" reads "an" before a vowel
 * sound; a value that starts a sentence or a quotation starts with a capital). Blanks of no variable stay: the call-time ones ({{firstName}}, {{greeting}}, contact columns) are filled on
 * each call.
 */
export function fillBlanks(text: string, template: AgentTemplate, values: Record<string, string>): string {
  return text.replace(BLANK, (whole, article: string | undefined, key: string, offset: number) => {
    const value = values[key]?.trim() || template.variables.find((variable) => variable.key === key)?.default;
    if (value === undefined) return whole;
    return article ? `${articleBefore(article.trim(), value)} ${value}` : capitalizedAt(text, offset, value);
  });
}

export interface RenderedTemplate extends VersionedFields {
  name: string;
  transfer: { whenToTransfer: string };
  voicemail: { action: 'hang_up' | 'leave_message'; message: string };
}

/** The template as an agent definition, its blanks filled; a tone other than the template's own is added to the personality. */
export function renderTemplate(template: AgentTemplate, values: Record<string, string>, tone?: Tone): RenderedTemplate {
  const parts = Object.fromEntries(
    VERSIONED_FIELDS.map((name) => [name, fillBlanks(template.parts[name], template, values)]),
  ) as VersionedFields;
  if (tone && tone !== template.tone) parts.soul = `${parts.soul}\n${TONES[tone]}`;
  return {
    name: `${fillBlanks('{{businessName}}', template, values)} – ${template.name}`.slice(0, 120),
    ...parts,
    transfer: { whenToTransfer: fillBlanks(template.transfer.whenToTransfer, template, values) },
    voicemail: { action: template.voicemail.action, message: fillBlanks(template.voicemail.message, template, values) },
  };
}
