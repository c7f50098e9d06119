/**
 * What the agents say, read as a listener would: every built-in template and both demo agents talk to every persona
 * of the simulated network through the real conversation loop and the playbook engine (no HTTP, no database, a
 * virtual clock), and each transcript is checked for what an agent must never do: speak an instruction written to a
 * model, leave a blank unfilled, close twice, or leave a question unanswered; and each call ends with the
 * disposition its last decision calls for.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createVirtualClock } from '../../lib/clock.js';
import { createPlaybookLlm } from '../../providers/llm/index.js';
import { createNoTts } from '../../providers/tts/index.js';
import { createSimVoiceProvider, SIM_PERSONAS, type SimPersona } from '../../providers/voice/index.js';
import { assembleSystemPrompt, type VersionedFields } from '../agents/agents.prompt.js';
import { AGENT_TEMPLATES, findTemplate, renderTemplate } from '../agent-templates/agent-templates.catalog.js';
import { DEFAULT_DISPOSITIONS } from '../dispositions/dispositions.defaults.js';
import { demoAgents } from '../../demo/demo-agents.js';
import { converse } from './calls.conversation.js';
import type { CallAgent } from './calls.ports.js';

/** 9:05 am in Los Angeles (the numbers' zone), a Tuesday. */
const ANSWERED_AT = new Date('2026-03-03T17:05:00Z');

interface Speaker {
  name: string;
  direction: 'outbound' | 'inbound';
  parts: VersionedFields;
  voicemail: { action: 'hang_up' | 'leave_message'; message: string };
  /** Disposition codes and their categories: the defaults, and the template's own. */
  categories: Map<string, string>;
}

const DEFAULT_CATEGORIES = DEFAULT_DISPOSITIONS.map((d) => [d.code, d.category] as const);

function fromTemplate(templateId: string, name: string, overrides: Record<string, unknown> = {}): Speaker {
  const template = findTemplate(templateId)!;
  const rendered = renderTemplate(template, {});
  const { name: _name, transfer: _transfer, voicemail, ...parts } = { ...rendered, ...overrides };
  return {
    name,
    direction: template.direction,
    parts: parts as VersionedFields,
    voicemail: voicemail as Speaker['voicemail'],
    categories: new Map([...DEFAULT_CATEGORIES, ...template.dispositions.map((d) => [d.code, d.category] as const)]),
  };
}

/** A playbook written for a model, as the templates were before: instructions, unquoted, with blanks to fill. */
const WRITTEN_FOR_A_MODEL: Speaker = {
  name: 'a playbook written for a model',
  direction: 'outbound',
  parts: {
    soul: 'You are Ava, an AI assistant calling on behalf of Northwind Services.',
    mission: 'Book a free 30-minute consultation.',
    playbook: [
      '1. Greet the person by name, say you are an AI assistant calling from Northwind Services, and mention why you are calling: they recently asked about our services.',
      '2. Ask if now is a good moment for a one-minute chat. If not, offer a better time between 8 am and 9 pm their time and end the call.',
      '3. In one sentence, explain what a free 30-minute consultation covers and what they get out of it.',
      '4. Ask one or two short questions to check fit: what prompted their interest, and when they hope to get started.',
      '5. Offer two concrete slots (weekdays between 9 am and 5 pm), as a video call. If neither works, ask what suits them.',
      '6. Confirm the date, time, time zone and the best email for the invitation. Read them back once.',
      '7. If the person asks to stop calling or to be removed, apologise, confirm it, and end the call.',
    ].join('\n'),
    examples: '',
    objections: [
      `- "I'm busy": "Understood. Would a quick call back later today or tomorrow suit you better?"`,
      '- "How much does it cost?": "The consultation itself is free."',
      `- "Not interested": thank them, and end the call without pushing.`,
    ].join('\n'),
    closers:
      'Recap the booking: "You\'re booked for a free 30-minute consultation on [day] at [time] (video call). You\'ll get a confirmation by email." Thank them and say goodbye. If no time was booked, thank them for their time and close without pushing.',
    notes: '',
    faq: '',
    knowledgeBase: '',
    firstMessage:
      'Hi, this is Ava, an AI assistant calling from Northwind Services. You recently asked about our services. Do you have a minute to find a time for a free 30-minute consultation?',
  },
  voicemail: { action: 'leave_message', message: 'Hi, this is Ava from Northwind Services. Please call us back.' },
  categories: new Map(DEFAULT_CATEGORIES),
};

const SPEAKERS: Speaker[] = [
  ...AGENT_TEMPLATES.map((template) => fromTemplate(template.id, `template ${template.id}`)),
  ...demoAgents().map((demo) => fromTemplate(demo.templateId, `demo agent "${demo.overrides.name}"`, demo.overrides)),
  WRITTEN_FOR_A_MODEL,
];

type Line = 'person' | 'voicemail' | 'hangs_up_early';
interface Call {
  speaker: Speaker;
  persona: SimPersona;
  line: Line;
  firstName: string | null;
  transferNumber: string | null;
}

interface Turn {
  speaker: 'agent' | 'caller';
  text: string;
}

async function run(call: Call) {
  const clock = createVirtualClock({ start: ANSWERED_AT });
  const voice = createSimVoiceProvider({ clock, tts: createNoTts() });
  const phone = { person: '+14155550100', voicemail: '+14155550105', hangs_up_early: '+14155550109' }[call.line];
  const farEnd = { phone, firstName: call.firstName, lastName: 'Lovelace', attributes: { Persona: call.persona } };
  const signal = new AbortController().signal;
  const line =
    call.speaker.direction === 'inbound'
      ? await voice.answerCall({ callId: 'c', to: '+14155550000', from: phone, farEnd, signal })
      : await (async () => {
          const dial = await voice.placeCall(
            { callId: 'c', from: '+14155550000', to: phone, farEnd, signal },
            { ringing: async () => {} },
          );
          assert.equal(dial.status, 'answered');
          return (dial as { line: import('../../providers/voice/index.js').FarEndLine }).line;
        })();
  const agent: CallAgent = {
    id: 'agent',
    name: call.speaker.name,
    status: 'active',
    version: 1,
    voiceId: null,
    liveLlmId: null,
    parts: call.speaker.parts,
    systemPrompt: assembleSystemPrompt(call.speaker.parts),
    transfer: { number: call.transferNumber, whenToTransfer: '' },
    voicemail: call.speaker.voicemail,
  } as CallAgent;
  const turns: Turn[] = [];
  const result = await converse({
    agent,
    line,
    direction: call.speaker.direction,
    farEnd,
    clock: line.clock,
    llm: createPlaybookLlm(),
    tts: createNoTts(),
    answeredAt: line.clock.now(),
    maxDurationMs: 600_000,
    signal,
    onTurn: async (turn) => {
      turns.push({ speaker: turn.speaker === 'agent' ? 'agent' : 'caller', text: turn.text });
    },
  });
  line.hangup();
  await voice.close();
  return { turns, endReason: result.endReason, disposition: result.disposition };
}

/** A sentence written to a model, not to the person on the line. */
const INSTRUCTION =
  /^(?:(?:then|and|also|first|next|finally|otherwise)[,:]?\s+)?(?:ask|greet|say|tell (?:them|the)|offer|confirm|mention|explain|introduce|thank (?:them|the)|recap|apologi[sz]e|verify|identify|repeat|remind (?:them|the)|state|note|record|read (?:it|them|the)|walk|give|if (?:they|not|so|the|no)|question \d)\b|\b(?:the (?:person|caller|customer|lead|prospect|patient)\b|their time|end the call|ask them|tell them|they recently)/i;
const BLANK = /\{\{|\}\}|\[[^\]]*\]/;
const FAREWELL = /\b(?:bye|goodbye|take care|have a (?:good|great|nice|lovely) day)\b/i;

/** The other side's questions, and what an answer to each must say. */
const ANSWERS: Array<[RegExp, RegExp]> = [
  [/^(?:hello|hello, yes)\?$|are you there\?/i, /./],
  [/who is this|what is it about/i, /\bAI (?:assistant|receptionist)\b/],
  [/how much does it cost/i, /\b(?:costs?|price|pricing|free|fee|charge|pay|estimate|quote|nothing)\b/i],
  [/speak to a real person/i, /\b(?:transfer|call you back)\b/i],
  [/call me back/i, /\bcall you back\b/i],
];

const sentences = (text: string) => text.match(/[^.!?]+[.!?]*["”)]*/g)?.map((s) => s.trim()) ?? [];

function problemsOf(call: Call, turns: Turn[], disposition: string | null, endReason: string): string[] {
  const problems: string[] = [];
  const agentTurns = turns.filter((turn) => turn.speaker === 'agent');
  for (const turn of agentTurns) {
    for (const sentence of sentences(turn.text))
      if (INSTRUCTION.test(sentence)) problems.push(`an instruction spoken aloud: "${sentence}"`);
    if (BLANK.test(turn.text)) problems.push(`an unfilled blank: "${turn.text}"`);
  }
  const farewells = agentTurns.filter((turn) => FAREWELL.test(turn.text));
  if (farewells.length > 1)
    problems.push(`${farewells.length} closers: ${farewells.map((t) => `"${t.text}"`).join(', ')}`);
  if (endReason === 'agent_hangup' && call.line === 'person' && farewells.at(-1) !== agentTurns.at(-1))
    problems.push('the agent hung up without a closing line');
  turns.forEach((turn, i) => {
    if (turn.speaker !== 'caller' || !turn.text.includes('?')) return;
    const rule = ANSWERS.find(([question]) => question.test(turn.text));
    if (!rule) return problems.push(`a question this test does not know: "${turn.text}"`);
    const reply = turns.slice(i + 1).find((next) => next.speaker === 'agent');
    if (call.line === 'hangs_up_early' && !reply) return;
    if (!reply || !rule[1].test(reply.text)) problems.push(`"${turn.text}" is left unanswered: "${reply?.text ?? ''}"`);
  });

  const category = disposition ? call.speaker.categories.get(disposition) : undefined;
  if (!disposition || !category) problems.push(`the disposition ${disposition} is not a code of the account`);
  const expected: Record<SimPersona, (code: string) => boolean> = {
    interested: () => category === 'positive',
    // Who asked for a person is transferred, or promised a call back; before that, a hesitant caller is no yes.
    hesitant: (code) =>
      turns.some((turn) => turn.speaker === 'caller' && /real person/.test(turn.text))
        ? code === (call.transferNumber ? 'transferred' : 'callback_requested')
        : category !== 'positive',
    callback: (code) => code === 'callback_requested',
    not_interested: () => category === 'negative',
    stop_calling: (code) => code === 'do_not_call',
  };
  const fits =
    call.line === 'voicemail'
      ? disposition === 'voicemail'
      : call.line === 'hangs_up_early'
        ? disposition === 'hung_up'
        : disposition !== null && expected[call.persona](disposition);
  if (!fits) problems.push(`the disposition ${disposition} does not fit a ${call.line} ${call.persona} call`);
  return problems;
}

const calls: Call[] = SPEAKERS.flatMap((speaker) => [
  ...SIM_PERSONAS.map((persona) => ({
    speaker,
    persona,
    line: 'person' as const,
    firstName: 'Ada',
    transferNumber: null,
  })),
  { speaker, persona: 'interested' as const, line: 'person' as const, firstName: null, transferNumber: null },
  { speaker, persona: 'hesitant' as const, line: 'person' as const, firstName: 'Ada', transferNumber: '+14155550199' },
  ...(speaker.direction === 'outbound'
    ? [
        { speaker, persona: 'interested' as const, line: 'voicemail' as const, firstName: 'Ada', transferNumber: null },
        {
          speaker,
          persona: 'interested' as const,
          line: 'hangs_up_early' as const,
          firstName: 'Ada',
          transferNumber: null,
        },
      ]
    : []),
]);

const label = (call: Call) =>
  `${call.speaker.name} × ${call.line === 'person' ? call.persona : call.line}${call.firstName ? '' : ' (no first name)'}${call.transferNumber ? ' (with a transfer number)' : ''}`;
const show = (turns: Turn[]) => turns.map((turn) => `  ${turn.speaker}: ${turn.text}`).join('\n');

test('every template and demo agent, against every persona: nothing an agent would not say, and the right disposition', async (t) => {
  const failures: string[] = [];
  for (const call of calls) {
    const { turns, endReason, disposition } = await run(call);
    const problems = problemsOf(call, turns, disposition, endReason);
    if (process.env.SHOW_TRANSCRIPTS) t.diagnostic(`${label(call)} -> ${disposition}\n${show(turns)}`);
    if (problems.length)
      failures.push(
        `${label(call)} (${endReason}, ${disposition}):\n${problems.map((p) => `- ${p}`).join('\n')}\n${show(turns)}`,
      );
  }
  t.diagnostic(`${calls.length} conversations read`);
  assert.deepEqual(failures, [], failures.join('\n\n'));
});

test('the callee greets first on an outbound call; the agent answers with its first message, the name filled in', async () => {
  const speaker = fromTemplate('appointment-setting', 'template');
  const { turns } = await run({
    speaker,
    persona: 'interested',
    line: 'person',
    firstName: 'Ada',
    transferNumber: null,
  });
  assert.deepEqual(
    turns.slice(0, 2).map((turn) => turn.speaker),
    ['caller', 'agent'],
  );
  assert.equal(turns[0]!.text, 'Hello?');
  assert.match(turns[1]!.text, /^Good morning, Ada! This is Ava, an AI assistant calling from Northwind Services\./);
  const booked = turns.at(-1)!.text;
  assert.match(booked, /^You're booked for a free 30-minute consultation tomorrow at 10 am, as a video call\./);

  const inbound = await run({
    speaker: fromTemplate('dental-reception', 'template'),
    persona: 'interested',
    line: 'person',
    firstName: 'Ada',
    transferNumber: null,
  });
  assert.equal(inbound.turns[0]!.speaker, 'agent', 'on an inbound call the agent picked up, and speaks first');
});
