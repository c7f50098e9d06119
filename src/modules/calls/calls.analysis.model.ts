/**
 * The post-call analysis written by the agent's LLM: the request (the transcript, the agent's mission, the callee's
 * local time and the fields to extract, with a JSON schema the answer must follow) and the reading of its answer. A
 * value of the wrong type is replaced by the built-in extractor's; an answer that is not the JSON asked for is refused
 * (the caller then keeps the built-in analysis). A callback time is asked for as the callee's wall-clock time and
 * turned into an instant here, so the zone arithmetic is never the model's.
 */
import type { AnalysisField } from '../agents/agents.tables.js';
import type { ChatRequest } from '../../providers/llm/index.js';
import type { AnalysisInput, AnalysisResult } from './calls.analysis.extractor.js';
import { localNowText } from './calls.analysis.extractor.js';
import { readCallbackTime } from './calls.analysis.rules.js';
import { instantOf } from '../../lib/wall-clock.js';
import { ANALYSIS_OUTCOMES, type AnalysisFieldValue, type AnalysisOutcome } from './calls.tables.js';

const MAX_SUMMARY = 2000;
const MAX_STEP = 300;
const MAX_STEPS = 10;
const MAX_TEXT_VALUE = 500;

const FIELD_SCHEMA: Record<AnalysisField['type'], Record<string, unknown>> = {
  string: { type: ['string', 'null'] },
  number: { type: ['number', 'null'] },
  boolean: { type: ['boolean', 'null'] },
  date: { type: ['string', 'null'], description: 'YYYY-MM-DD' },
  email: { type: ['string', 'null'], description: 'An email address, as confirmed on the call' },
};

/** The JSON schema the model's answer follows (OpenAI's strict structured output: every property required). */
export function analysisSchema(fields: AnalysisField[]): Record<string, unknown> {
  return {
    type: 'object',
    additionalProperties: false,
    required: ['summary', 'outcome', 'missionSucceeded', 'missionReason', 'nextSteps', 'callback', 'fields'],
    properties: {
      summary: { type: 'string', description: 'Two to four plain sentences on what happened on the call.' },
      outcome: { type: 'string', enum: [...ANALYSIS_OUTCOMES] },
      missionSucceeded: { type: 'boolean' },
      missionReason: { type: 'string', description: "One sentence: why the agent's mission succeeded or not." },
      nextSteps: { type: 'array', items: { type: 'string' }, description: 'What the team should do next.' },
      callback: {
        description: 'Null unless the person asked to be called back.',
        anyOf: [
          {
            type: 'object',
            additionalProperties: false,
            required: ['asked', 'localTime'],
            properties: {
              asked: { type: 'string', description: 'The words the person used for when ("tomorrow after 3").' },
              localTime: {
                type: ['string', 'null'],
                description: "The person's local time asked for, YYYY-MM-DDTHH:MM; null when they named no time.",
              },
            },
          },
          { type: 'null' },
        ],
      },
      fields: {
        type: 'object',
        additionalProperties: false,
        required: fields.map((field) => field.name),
        properties: Object.fromEntries(
          fields.map((field) => [field.name, { ...FIELD_SCHEMA[field.type], description: field.description }]),
        ),
      },
    },
  };
}

const OUTCOME_MEANINGS: Record<AnalysisOutcome, string> = {
  interested: 'the person agreed to what the agent asked',
  callback_requested: 'the person asked to be called back',
  not_interested: 'the person declined',
  do_not_call: 'the person asked not to be called again',
  transferred: 'the call was handed to a person',
  person_requested: 'the person asked for a human and none took the call',
  voicemail: 'an answering machine took the call',
  hung_up: 'the person hung up before a conversation',
  undecided: 'the call ended without a decision',
};

/** The chat request that asks the agent's model for the analysis. */
export function analysisRequest(input: AnalysisInput): ChatRequest {
  const speaker = (name: string) => (name === 'agent' ? 'Agent' : name === 'caller' ? 'Person' : null);
  const lines = input.transcript
    .map((turn) => ({ who: speaker(turn.speaker), text: turn.text.trim() }))
    .filter((turn) => turn.who !== null && turn.text)
    .map((turn) => `${turn.who}: ${turn.text}`);
  const fieldLines = input.fields.map((field) => `- ${field.name} (${field.type}): ${field.description}`);
  const context = [
    `Agent: ${input.agentName ?? 'unnamed'}. Its mission: ${input.mission.trim() || 'not stated'}`,
    `Direction: ${input.direction === 'inbound' ? 'the person called the agent' : 'the agent called the person'}.`,
    `The call ended (${input.endReason ?? 'unknown reason'}) after ${input.durationSeconds ?? 0} seconds, with the disposition ${input.disposition ?? 'none'}.`,
    `The person's local time when the call ended: ${localNowText(input.endedAt, input.timeZone)}, time zone ${input.timeZone}.`,
    fieldLines.length > 0 ? `Values to extract (null when the call did not say them):\n${fieldLines.join('\n')}` : '',
    `Transcript:\n${lines.join('\n') || '(nothing was said)'}`,
  ].filter(Boolean);
  return {
    messages: [
      {
        role: 'system',
        content: [
          'You analyse a finished phone call between an AI phone agent and a person, for the team that runs the agent.',
          'Answer with one JSON object that follows the schema, and nothing else. Base every statement on the transcript.',
          `Outcomes: ${ANALYSIS_OUTCOMES.map((outcome) => `${outcome} (${OUTCOME_MEANINGS[outcome]})`).join('; ')}.`,
          'A callback time is the local time of the person: resolve "tomorrow", "after 3", "next Tuesday morning" from their local time given below; a day without a time is 10:00.',
        ].join('\n'),
      },
      { role: 'user', content: context.join('\n\n') },
    ],
    temperature: 0,
    maxTokens: 800,
    responseFormat: { name: 'call_analysis', schema: analysisSchema(input.fields) },
  };
}

const isText = (value: unknown): value is string => typeof value === 'string' && value.trim() !== '';

function fieldValue(field: AnalysisField, value: unknown): AnalysisFieldValue | undefined {
  if (value === null) return null;
  switch (field.type) {
    case 'number': {
      const number = typeof value === 'string' ? Number(value.replace(/[$,\s]/g, '')) : value;
      return typeof number === 'number' && Number.isFinite(number) ? number : undefined;
    }
    case 'boolean':
      return typeof value === 'boolean' ? value : undefined;
    case 'date': {
      if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(value)) return undefined;
      const date = new Date(`${value}T00:00:00.000Z`);
      return Number.isNaN(date.getTime()) || date.toISOString().slice(0, 10) !== value ? undefined : value;
    }
    case 'email': {
      if (typeof value !== 'string') return undefined;
      const email = value.trim().toLowerCase();
      return /^[^\s@]+@[^\s@]+\.[a-z]{2,}$/.test(email) ? email : undefined;
    }
    default:
      return isText(value) ? value.trim().slice(0, MAX_TEXT_VALUE) : undefined;
  }
}

/** The local time the model named, as an instant in the callee's zone; null when it is not one. */
function localTimeInstant(value: unknown, zone: string): Date | null {
  if (typeof value !== 'string') return null;
  const match = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})/.exec(value.trim());
  if (!match) return null;
  const [year, month, day, hour, minute] = match.slice(1).map(Number) as [number, number, number, number, number];
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59) return null;
  return instantOf(zone, { year, month, day, hour, minute });
}

/**
 * The analysis in the model's answer; a value that does not fit is the built-in extractor's (`fallback`). Throws when
 * the answer is not the JSON object asked for.
 */
export function readModelAnalysis(answer: string, input: AnalysisInput, fallback: AnalysisResult): AnalysisResult {
  const json = answer
    .trim()
    .replace(/^```(?:json)?\s*/i, '')
    .replace(/```$/, '')
    .trim();
  const parsed: unknown = JSON.parse(json);
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new Error('the answer is not a JSON object');
  const body = parsed as Record<string, unknown>;
  if (!isText(body.summary)) throw new Error('the answer has no summary');
  const outcome = (ANALYSIS_OUTCOMES as readonly unknown[]).includes(body.outcome)
    ? (body.outcome as AnalysisOutcome)
    : fallback.outcome;
  const nextSteps = Array.isArray(body.nextSteps)
    ? body.nextSteps
        .filter(isText)
        .map((step) => step.trim().slice(0, MAX_STEP))
        .slice(0, MAX_STEPS)
    : fallback.nextSteps;

  let callback: AnalysisResult['callback'];
  if (body.callback === null) callback = null;
  else if (body.callback && typeof body.callback === 'object') {
    const { asked, localTime } = body.callback as Record<string, unknown>;
    const words = isText(asked) ? asked.trim().slice(0, 200) : (fallback.callback?.asked ?? '');
    const at =
      localTimeInstant(localTime, input.timeZone) ??
      (words ? (readCallbackTime(words, input.endedAt, input.timeZone)?.at ?? null) : null);
    callback = { asked: words, at: at && at.getTime() > input.endedAt.getTime() ? at : null };
  } else callback = fallback.callback;

  const given =
    body.fields && typeof body.fields === 'object' ? (body.fields as Record<string, unknown>) : ({} as const);
  const fields: Record<string, AnalysisFieldValue> = {};
  for (const field of input.fields) {
    const value = field.name in given ? fieldValue(field, given[field.name]) : undefined;
    fields[field.name] = value === undefined ? (fallback.fields[field.name] ?? null) : value;
  }

  return {
    summary: body.summary.trim().slice(0, MAX_SUMMARY),
    outcome,
    missionSucceeded: typeof body.missionSucceeded === 'boolean' ? body.missionSucceeded : fallback.missionSucceeded,
    missionReason: isText(body.missionReason) ? body.missionReason.trim().slice(0, MAX_STEP) : fallback.missionReason,
    nextSteps,
    callback,
    fields,
  };
}
