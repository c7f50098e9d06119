/**
 * The built-in post-call analysis: what a call came to, read from its transcript and how it ended, without a model.
 * Deterministic: the same call always gives the same analysis.
 *
 * - The outcome follows the callee's last clear intent (agreeing, asking for a callback or a person, declining,
 *   asking not to be called), then the call's end (voicemail, a transfer, a hang-up before any conversation), then
 *   the disposition the call ended with.
 * - The mission succeeded when the callee agreed, or the call's disposition is one of the account's positive codes.
 * - A declared field is looked for in what the callee said about it, or in their answer to the agent's question
 *   about it: the words of its name and description find both. An email is the last address said, or read back by
 *   the agent and confirmed.
 */
import type { AnalysisField } from '../agents/agents.tables.js';
import { asksNotToBeCalled } from '../../providers/llm/index.js';
import {
  normalizeSpeech,
  readCallbackTime,
  readDate,
  readEmail,
  readNumber,
  readYesNo,
} from './calls.analysis.rules.js';
import { wallClock } from '../../lib/wall-clock.js';
import type { AnalysisFieldValue, AnalysisOutcome, TranscriptSpeaker } from './calls.tables.js';

export interface AnalysisTurn {
  speaker: TranscriptSpeaker;
  text: string;
}

/** What the analysis of one call reads. */
export interface AnalysisInput {
  transcript: AnalysisTurn[];
  direction: 'inbound' | 'outbound';
  endReason: string | null;
  disposition: string | null;
  /** The category of the call's disposition among the account's codes (positive, neutral, negative, compliance). */
  dispositionCategory: string | null;
  durationSeconds: number | null;
  endedAt: Date;
  agentName: string | null;
  mission: string;
  fields: AnalysisField[];
  contactFirstName: string | null;
  /** The callee's IANA time zone: callback times and dates are read in it. */
  timeZone: string;
}

export interface AnalysisResult {
  summary: string;
  outcome: AnalysisOutcome;
  missionSucceeded: boolean;
  missionReason: string;
  nextSteps: string[];
  /** Null when no callback was asked for; `at` null when the words named no time. */
  callback: { asked: string; at: Date | null } | null;
  fields: Record<string, AnalysisFieldValue>;
}

const CALLBACK =
  /\b(?:call (?:me |us )?back|call (?:me |us )?(?:again )?(?:later|tomorrow|another time|next)|ring (?:me )?back|try (?:me |us )?(?:again )?(?:later|tomorrow|another time|next)|another time|(?:bad|not a good|busy) (?:time|moment|right now)|in a meeting|(?:i'm|i am|we're) busy|can't talk (?:right )?now)\b/;
const PERSON =
  /\b(?:speak|talk|connect me|transfer me|put me through)(?: to| with)? (?:a |an |the |your |some )?(?:real |actual |live )?(?:person|human|someone|somebody|manager|supervisor|representative|agent|sales ?person)\b/;
const DECLINE =
  /\b(?:not interested|no thanks|no,? thank you|don't need|do not need|not for (?:us|me)|we're (?:good|fine)|i'm (?:good|fine), thanks|no need|not right now, thanks)\b/;
const AGREE =
  /\b(?:sign me up|let's do it|let us do it|i'd like that|i would like that|i'd love (?:that|to)|sounds good|that works|count me in|book (?:me|it)|go ahead|deal|yes,? please|sure,? let's|i'm in|absolutely)\b/;
const OBJECTION =
  /\b(?:too expensive|too much|can't afford|not sure|don't know|already (?:use|have|work with)|no time|not convinced|not the right time)\b/;
/** Questions that are only a greeting or a check on the line, not something the callee wanted to know. */
const SMALL_TALK = /^(?:hello|hi|yes|who is (?:this|it)|are you (?:still )?there|sorry|what|huh|pardon)\b/;
const PROMISE = /\b(?:i will|i'll|we will|we'll|you'll (?:get|receive)|you will (?:get|receive)|expect)\b/;

type Intent = 'agree' | 'callback' | 'person' | 'decline' | 'do_not_call';

function intentOf(text: string): Intent | null {
  if (asksNotToBeCalled(text)) return 'do_not_call';
  const said = normalizeSpeech(text);
  if (PERSON.test(said)) return 'person';
  if (CALLBACK.test(said)) return 'callback';
  if (DECLINE.test(said)) return 'decline';
  if (AGREE.test(said)) return 'agree';
  return null;
}

const sentencesOf = (text: string) =>
  text
    .split(/(?<=[.!?])\s+/)
    .map((sentence) => sentence.trim())
    .filter(Boolean);

const quote = (text: string) => `"${text.trim().replace(/"/g, "'")}"`;
const joinList = (items: string[]) =>
  items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;
const capitalize = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

const STOP_WORDS = new Set(
  'the a an and or of to in on at for by with from as is are be was were it its this that what which who whom how when where why their they them his her our your you the caller callee call calls contact customer person value name number amount said says say ask asks asked any if about into per one'.split(
    ' ',
  ),
);

/** The words that find a field: those of its name (budget, preferredDate -> preferred, date) and its description. */
export function fieldKeywords(field: AnalysisField): string[] {
  const nameWords = field.name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/_/g, ' ')
    .toLowerCase()
    .split(' ');
  const descriptionWords = field.description.toLowerCase().match(/[a-z]+/g) ?? [];
  const extra = field.type === 'email' ? ['email', 'e-mail', 'mail', 'address'] : [];
  const stems = [...nameWords, ...descriptionWords, ...extra]
    .filter((word) => word.length >= 3 && !STOP_WORDS.has(word))
    .map((word) => word.replace(/(?:ies|s)$/, ''));
  return [...new Set(stems)];
}

const mentions = (text: string, keywords: string[]) => {
  const words = normalizeSpeech(text).match(/[a-z-]+/g) ?? [];
  return words.some((word) => keywords.some((keyword) => word.startsWith(keyword)));
};

interface Said {
  index: number;
  speaker: TranscriptSpeaker;
  text: string;
}

/** The value of one declared field, or null when the call did not say it. */
export function extractField(field: AnalysisField, turns: Said[], input: Pick<AnalysisInput, 'endedAt' | 'timeZone'>) {
  const keywords = fieldKeywords(field);
  const spoken = turns.filter((turn) => turn.speaker === 'agent' || turn.speaker === 'caller');
  if (field.type === 'email') {
    let found: string | null = null;
    spoken.forEach((turn, i) => {
      const email = readEmail(turn.text);
      if (!email) return;
      if (turn.speaker === 'caller') found = email;
      // Read back by the agent and confirmed.
      else if (spoken[i + 1]?.speaker === 'caller' && readYesNo(spoken[i + 1]!.text) === true) found = email;
    });
    return found;
  }
  // The callee's words about the field, and their answers to the agent's questions about it.
  const answers: Array<{ turn: Said; answer: boolean }> = [];
  spoken.forEach((turn, i) => {
    if (turn.speaker !== 'caller') return;
    const asked = spoken[i - 1]?.speaker === 'agent' && mentions(spoken[i - 1]!.text, keywords);
    if (asked || mentions(turn.text, keywords)) answers.push({ turn, answer: asked });
  });
  for (const { turn, answer } of answers.reverse()) {
    switch (field.type) {
      case 'number': {
        const value = readNumber(turn.text);
        if (value !== null) return value;
        break;
      }
      case 'date': {
        const value = readDate(turn.text, input.endedAt, input.timeZone);
        if (value !== null) return value;
        break;
      }
      case 'boolean': {
        const value = readYesNo(turn.text);
        if (value !== null && answer) return value;
        break;
      }
      default: {
        const text = answer
          ? turn.text
          : (sentencesOf(turn.text).find((sentence) => mentions(sentence, keywords)) ?? turn.text);
        return text.trim().slice(0, 200);
      }
    }
  }
  return null;
}

const LOCAL_TIME = new Map<string, Intl.DateTimeFormat>();
/** "Tuesday 3 March, 10:00" in the zone, for people to read. */
export function localTimeText(at: Date, zone: string): string {
  let format = LOCAL_TIME.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-GB', {
      timeZone: zone,
      weekday: 'long',
      day: 'numeric',
      month: 'long',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    });
    if (LOCAL_TIME.size > 500) LOCAL_TIME.clear();
    LOCAL_TIME.set(zone, format);
  }
  return `${format.format(at).replace(' at ', ', ')} (${zone})`;
}

/** The analysis of a call from its transcript and its end (see the module comment). */
export function analyzeTranscript(input: AnalysisInput): AnalysisResult {
  const turns: Said[] = input.transcript
    .map((turn, index) => ({ index, speaker: turn.speaker, text: turn.text.trim() }))
    .filter((turn) => turn.text && (turn.speaker === 'agent' || turn.speaker === 'caller'));
  const callee = input.contactFirstName?.trim() || (input.direction === 'inbound' ? 'The caller' : 'The callee');
  const calleeLower = input.contactFirstName?.trim() || (input.direction === 'inbound' ? 'the caller' : 'the callee');
  const agent = input.agentName?.trim() || 'The agent';
  const voicemail = input.endReason === 'voicemail' || input.disposition === 'voicemail';
  const firstAgentTurn = turns.findIndex((turn) => turn.speaker === 'agent');
  // What the callee said once the agent had spoken (a greeting before that is not a conversation).
  const replies = turns.filter(
    (turn, i) => turn.speaker === 'caller' && (firstAgentTurn < 0 ? input.direction === 'inbound' : i > firstAgentTurn),
  );

  // The outcome: the last clear intent, else how the call ended.
  let lastIntent: { intent: Intent; turn: Said } | null = null;
  let askedForPerson = false;
  for (const turn of replies) {
    const intent = intentOf(turn.text);
    if (intent === 'person') askedForPerson = true;
    if (intent) lastIntent = { intent, turn };
  }
  const dnc = input.disposition === 'do_not_call' || replies.some((turn) => asksNotToBeCalled(turn.text));
  let outcome: AnalysisOutcome;
  if (voicemail) outcome = 'voicemail';
  else if (dnc) outcome = 'do_not_call';
  else if (input.endReason === 'transferred') outcome = 'transferred';
  else if (lastIntent?.intent === 'agree') outcome = 'interested';
  else if (lastIntent?.intent === 'callback') outcome = 'callback_requested';
  else if (lastIntent?.intent === 'person') outcome = 'person_requested';
  else if (lastIntent?.intent === 'decline') outcome = 'not_interested';
  else if (replies.length === 0) outcome = 'hung_up';
  else if (input.disposition === 'interested') outcome = 'interested';
  else if (input.disposition === 'callback_requested') outcome = 'callback_requested';
  else if (input.disposition === 'not_interested') outcome = 'not_interested';
  else outcome = 'undecided';

  // A callback: the time the callee named, in their zone.
  let callback: AnalysisResult['callback'] = null;
  if (outcome === 'callback_requested') {
    // The words that asked for the callback first, then the rest of what the callee said, the latest first.
    const asking = [...replies]
      .reverse()
      .sort((a, b) => Number(intentOf(b.text) === 'callback') - Number(intentOf(a.text) === 'callback'));
    let found: { words: string; at: Date } | null = null;
    for (const turn of asking) {
      const time = readCallbackTime(turn.text, input.endedAt, input.timeZone);
      if (time) {
        found = time;
        break;
      }
    }
    const words = lastIntent?.intent === 'callback' ? lastIntent.turn.text : (asking[0]?.text ?? '');
    callback = found ? { asked: found.words, at: found.at } : { asked: words.slice(0, 200), at: null };
  }

  const fields: Record<string, AnalysisFieldValue> = {};
  for (const field of input.fields) fields[field.name] = extractField(field, turns, input);

  const positive = input.dispositionCategory === 'positive';
  const mission = missionOf(outcome, { lastIntent, positive, disposition: input.disposition, callback, input });
  const summary = summaryOf({ input, turns, replies, outcome, callee, calleeLower, agent, callback, lastIntent });
  const nextSteps = nextStepsOf({ outcome, calleeLower, callback, turns, input, askedForPerson });
  return {
    summary,
    outcome,
    missionSucceeded: mission.succeeded,
    missionReason: mission.reason,
    nextSteps,
    callback,
    fields,
  };
}

function callbackText(callback: AnalysisResult['callback'], zone: string): string {
  if (!callback) return '';
  if (!callback.at) return ' (no time was named)';
  return ` ${callback.asked} (${localTimeText(callback.at, zone)})`;
}

function missionOf(
  outcome: AnalysisOutcome,
  context: {
    lastIntent: { intent: Intent; turn: Said } | null;
    positive: boolean;
    disposition: string | null;
    callback: AnalysisResult['callback'];
    input: AnalysisInput;
  },
): { succeeded: boolean; reason: string } {
  const said = context.lastIntent ? `: ${quote(context.lastIntent.turn.text)}` : '';
  switch (outcome) {
    case 'interested':
      return { succeeded: true, reason: `The callee agreed${said}.` };
    case 'do_not_call':
      return { succeeded: false, reason: 'The callee asked not to be called again.' };
    case 'voicemail':
      return { succeeded: false, reason: 'Voicemail answered: nobody was reached.' };
    case 'hung_up':
      return { succeeded: false, reason: 'The callee hung up before the conversation began.' };
    default:
      break;
  }
  if (context.positive && context.disposition)
    return { succeeded: true, reason: `The call ended with the positive disposition "${context.disposition}".` };
  switch (outcome) {
    case 'callback_requested':
      return {
        succeeded: false,
        reason: `The callee asked to be called back${callbackText(context.callback, context.input.timeZone)}.`,
      };
    case 'not_interested':
      return { succeeded: false, reason: `The callee was not interested${said}.` };
    case 'person_requested':
      return { succeeded: false, reason: `The callee asked for a person${said}.` };
    case 'transferred':
      return { succeeded: false, reason: 'The call was transferred to a person before the agent reached its goal.' };
    default:
      return { succeeded: false, reason: 'The call ended without a decision.' };
  }
}

function summaryOf(context: {
  input: AnalysisInput;
  turns: Said[];
  replies: Said[];
  outcome: AnalysisOutcome;
  callee: string;
  calleeLower: string;
  agent: string;
  callback: AnalysisResult['callback'];
  lastIntent: { intent: Intent; turn: Said } | null;
}): string {
  const { input, replies, outcome, callee, calleeLower, agent, callback, lastIntent } = context;
  const seconds = input.durationSeconds;
  const lasted = seconds === null ? '' : `; the call lasted ${seconds} second${seconds === 1 ? '' : 's'}`;
  const sentences: string[] = [];
  if (outcome === 'voicemail') {
    const left = context.turns.some((turn) => turn.speaker === 'agent');
    const possessive = input.contactFirstName?.trim() ? `${input.contactFirstName.trim()}'s` : 'the';
    sentences.push(
      `${agent} reached ${possessive} voicemail and ${left ? 'left a message' : 'hung up without a message'}${lasted}.`,
    );
    return sentences.join(' ');
  }
  sentences.push(
    input.direction === 'inbound' ? `${callee} called ${agent}${lasted}.` : `${agent} called ${calleeLower}${lasted}.`,
  );
  if (outcome === 'hung_up') {
    sentences.push(`${callee} hung up before saying anything to the agent.`);
    return sentences.join(' ');
  }
  const questions = replies
    .flatMap((turn) => sentencesOf(turn.text))
    .filter((sentence) => sentence.endsWith('?') && !SMALL_TALK.test(normalizeSpeech(sentence)))
    .filter((sentence) => intentOf(sentence) === null)
    .slice(0, 2);
  if (questions.length > 0) sentences.push(`${callee} asked ${joinList(questions.map(quote))}.`);
  const objections = replies
    .flatMap((turn) => sentencesOf(turn.text))
    .filter((sentence) => OBJECTION.test(normalizeSpeech(sentence)))
    .slice(0, 2);
  if (objections.length > 0) sentences.push(`${callee} objected: ${joinList(objections.map(quote))}.`);
  const said = lastIntent ? ` (${quote(lastIntent.turn.text)})` : '';
  const ending: Record<AnalysisOutcome, string> = {
    interested: `${callee} agreed${said}.`,
    callback_requested: `${callee} asked to be called back${callbackText(callback, input.timeZone)}.`,
    not_interested: `${callee} was not interested${said}.`,
    do_not_call: `${callee} asked not to be called again; the number is on the do-not-call list.`,
    transferred: 'The call was transferred to a person.',
    person_requested: `${callee} asked to speak to a person${said}.`,
    voicemail: '',
    hung_up: '',
    undecided: `The call ended without a decision${input.endReason ? ` (${input.endReason})` : ''}.`,
  };
  sentences.push(capitalize(ending[outcome]));
  return sentences.filter(Boolean).join(' ');
}

function nextStepsOf(context: {
  outcome: AnalysisOutcome;
  calleeLower: string;
  callback: AnalysisResult['callback'];
  turns: Said[];
  input: AnalysisInput;
  askedForPerson: boolean;
}): string[] {
  const { outcome, calleeLower, callback, turns, input } = context;
  const steps: string[] = [];
  switch (outcome) {
    case 'interested': {
      const promises = turns
        .filter((turn) => turn.speaker === 'agent')
        .flatMap((turn) => sentencesOf(turn.text))
        .filter((sentence) => PROMISE.test(normalizeSpeech(sentence)) && !/goodbye|bye\b/i.test(sentence));
      const promise = promises.at(-1);
      steps.push(
        promise ? `Do what the agent promised: ${quote(promise)}` : `Confirm what was agreed with ${calleeLower}.`,
      );
      break;
    }
    case 'callback_requested':
      steps.push(
        callback?.at
          ? `Call ${calleeLower} back at ${localTimeText(callback.at, input.timeZone)}.`
          : `Call ${calleeLower} back at a better time (no time was named).`,
      );
      break;
    case 'person_requested':
      steps.push(`Have a person call ${calleeLower} back.`);
      break;
    case 'transferred':
      steps.push('Check with the person the call was transferred to.');
      break;
    case 'not_interested':
      steps.push(`No follow-up: ${calleeLower} is not interested.`);
      break;
    case 'do_not_call':
      steps.push('Do not call this number again.');
      break;
    case 'voicemail':
      steps.push(`Call ${calleeLower} again later.`);
      break;
    case 'hung_up':
      steps.push(`Try ${calleeLower} again at another time.`);
      break;
    case 'undecided':
      steps.push(`Follow up with ${calleeLower} to reach a decision.`);
      break;
  }
  if (
    context.askedForPerson &&
    outcome !== 'person_requested' &&
    outcome !== 'transferred' &&
    outcome !== 'do_not_call'
  )
    steps.push(`${capitalize(calleeLower)} asked to speak to a person: have one follow up.`);
  return steps;
}

/** The local date and time of `at` in `zone`, as the model is told the present: "2026-03-02 10:00 (Monday)". */
export function localNowText(at: Date, zone: string): string {
  const wall = wallClock(zone, at);
  const days = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
  const pad = (value: number) => String(value).padStart(2, '0');
  return `${wall.year}-${pad(wall.month)}-${pad(wall.day)} ${pad(wall.hour)}:${pad(wall.minute)} (${days[wall.weekday]})`;
}
