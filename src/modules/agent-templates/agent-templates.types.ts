import type { VersionedFields } from '../agents/agents.prompt.js';
import type { DefaultDisposition } from '../dispositions/dispositions.defaults.js';

export const QUESTION_TYPES = ['text', 'longtext', 'select', 'phone', 'boolean'] as const;
export type QuestionType = (typeof QUESTION_TYPES)[number];

/** A blank in a template's text ({{key}}), and the wizard question that fills it. */
export interface TemplateVariable {
  key: string;
  label: string;
  type: QuestionType;
  help: string;
  required: boolean;
  /** What the blank reads when no answer is given; required variables have one too, for previews. */
  default: string;
  options?: readonly string[];
}

/** A disposition code a template's calls end with; added to the account's codes when an agent is made from it. */
export type TemplateDisposition = Omit<DefaultDisposition, 'system'>;

export interface AgentTemplate {
  id: string;
  name: string;
  description: string;
  direction: 'inbound' | 'outbound';
  /** The tone the soul is written in; the wizard may change it. */
  tone: string;
  variables: readonly TemplateVariable[];
  parts: VersionedFields;
  transfer: { whenToTransfer: string };
  voicemail: { action: 'hang_up' | 'leave_message'; message: string };
  /**
   * The outcomes its calls end with, beyond the codes every account has: its closers are labelled with them
   * (`confirmed: "…"`), and they are added to the account's disposition codes when an agent is made from it.
   */
  dispositions: readonly TemplateDisposition[];
  /** Columns of the contact its text reads on a call ({{appointmentTime}} reads "Appointment Time"); a sentence with a column the contact lacks is not said. */
  contactColumns: readonly string[];
}

/** Blanks filled on each call rather than when the agent is made: the contact's name and the time of day. */
export const CALL_BLANKS = ['firstName', 'lastName', 'greeting'] as const;

/** The variables every template has. */
export const BUSINESS_NAME: TemplateVariable = {
  key: 'businessName',
  label: 'Business name',
  type: 'text',
  help: 'The name callers know you by.',
  required: true,
  default: 'Northwind Services',
};
export const AGENT_NAME: TemplateVariable = {
  key: 'agentName',
  label: "The agent's first name",
  type: 'text',
  help: 'What the agent calls itself; it always says it is an AI assistant too.',
  required: false,
  default: 'Ava',
};

export const APPOINTMENT_BOOKED: TemplateDisposition = {
  code: 'appointment_booked',
  label: 'Appointment booked',
  category: 'positive',
  description: 'A meeting or demo was booked.',
};

/** Lines shared by every template's notes: the rules every agent keeps, whatever its job. */
export const COMPLIANCE_NOTES = `- You are an AI assistant. If anyone asks whether you are a person, a recording or a machine, say plainly that you are an AI assistant for {{businessName}}.
- If the person asks you to stop calling, to be removed from the list, or not to be contacted again: apologise, confirm they will not be called again, and end the call politely. Never argue or try to change their mind.
- Never ask for card numbers, security codes, Social Security numbers, passwords or one-time codes. If a payment or identity check is needed, offer a secure link or a transfer to a person.
- Never promise medical, legal or financial results. Refer those questions to a qualified person at {{businessName}}.
- Only offer call-backs between 8 am and 9 pm in the person's local time.
- Keep answers short: one or two sentences, then let the other person speak. If you do not know something, say so and offer to have someone follow up.`;
