/**
 * The wizard: one question set per template. The questions are the template's variables plus the settings every
 * agent has (tone, transfer number, voice, voicemail); the answers become an agent.
 */
import { AppError } from '../../lib/errors.js';
import type { AgentTemplate, QuestionType, TemplateVariable } from './agent-templates.types.js';
import { TONE_NAMES, type Tone } from './agent-templates.catalog.js';

export interface WizardQuestion {
  key: string;
  label: string;
  type: QuestionType;
  help: string;
  required: boolean;
  default: string | boolean | null;
  options: readonly string[] | null;
}

/** The pattern agents accept for a transfer number. */
const E164 = /^\+[1-9]\d{6,14}$/;

const TEXT_LIMITS: Record<QuestionType, number> = { text: 200, longtext: 2000, select: 100, phone: 20, boolean: 0 };

function settingQuestions(template: AgentTemplate): WizardQuestion[] {
  return [
    {
      key: 'tone',
      label: 'Tone of voice',
      type: 'select',
      help: 'How the agent sounds.',
      required: false,
      default: template.tone,
      options: TONE_NAMES,
    },
    {
      key: 'transferNumber',
      label: 'Transfer number',
      type: 'phone',
      help: 'Where the agent hands calls to a person, in E.164 (+14155550123). Leave blank for none.',
      required: false,
      default: null,
      options: null,
    },
    {
      key: 'voice',
      label: 'Voice',
      type: 'text',
      help: 'A voice id from the voice list; blank for the default voice.',
      required: false,
      default: null,
      options: null,
    },
    {
      key: 'leaveVoicemail',
      label: 'Leave a voicemail message',
      type: 'boolean',
      help: "When voicemail answers, leave the template's message instead of hanging up.",
      required: false,
      default: template.voicemail.action === 'leave_message',
      options: null,
    },
  ];
}

const fromVariable = (variable: TemplateVariable): WizardQuestion => ({
  key: variable.key,
  label: variable.label,
  type: variable.type,
  help: variable.help,
  required: variable.required,
  default: variable.default,
  options: variable.options ?? null,
});

export function wizardQuestions(template: AgentTemplate): WizardQuestion[] {
  return [...template.variables.map(fromVariable), ...settingQuestions(template)];
}

export interface WizardAnswers {
  values: Record<string, string>;
  tone: Tone;
  transferNumber: string | null;
  voice: string | null;
  leaveVoicemail: boolean;
}

/** Checks every answer against its question; one 400 names every failing field (unknown, missing or invalid). */
export function readAnswers(template: AgentTemplate, answers: Record<string, unknown>): WizardAnswers {
  const questions = wizardQuestions(template);
  const problems: { field: string; message: string }[] = [];
  const field = (key: string) => `body/answers/${key}`;
  for (const key of Object.keys(answers)) {
    if (!questions.some((question) => question.key === key))
      problems.push({ field: field(key), message: `is not a question of the ${template.id} wizard` });
  }
  const given: Record<string, string | boolean | null> = {};
  for (const question of questions) {
    const raw = answers[question.key];
    const blank = raw === undefined || raw === null || (typeof raw === 'string' && raw.trim() === '');
    if (blank) {
      if (question.required) problems.push({ field: field(question.key), message: 'is required' });
      given[question.key] = question.default;
      continue;
    }
    if (question.type === 'boolean') {
      if (typeof raw !== 'boolean') problems.push({ field: field(question.key), message: 'must be true or false' });
      else given[question.key] = raw;
      continue;
    }
    if (typeof raw !== 'string') {
      problems.push({ field: field(question.key), message: 'must be text' });
      continue;
    }
    const value = raw.trim();
    if (value.length > TEXT_LIMITS[question.type])
      problems.push({
        field: field(question.key),
        message: `must be at most ${TEXT_LIMITS[question.type]} characters`,
      });
    else if (question.type !== 'longtext' && /[\r\n]/.test(value))
      problems.push({ field: field(question.key), message: 'must be one line' });
    else if (question.options && !question.options.includes(value))
      problems.push({ field: field(question.key), message: `must be one of: ${question.options.join(', ')}` });
    else if (question.type === 'phone' && !E164.test(value))
      problems.push({ field: field(question.key), message: 'must be an E.164 number, e.g. +14155550123' });
    else given[question.key] = value;
  }
  if (problems.length > 0) {
    throw new AppError(
      'validation_failed',
      `Invalid request: ${problems.map((p) => `${p.field} ${p.message}`).join('; ')}`,
      { fields: problems },
    );
  }
  const values = Object.fromEntries(
    template.variables.map((variable) => [variable.key, String(given[variable.key] ?? '')]),
  );
  return {
    values,
    tone: given.tone as Tone,
    transferNumber: (given.transferNumber as string | null) ?? null,
    voice: (given.voice as string | null) ?? null,
    leaveVoicemail: given.leaveVoicemail === true,
  };
}
