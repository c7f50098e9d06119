/**
 * The templates and what is made from them, without an app or a database: every template is complete and passes
 * the safety rules, blanks are filled from answers or defaults, wizard answers are checked field by field, and the
 * offline generator adapts the closest template the same way every time.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AppError } from '../../lib/errors.js';
import { VERSIONED_FIELDS } from '../agents/agents.prompt.js';
import { runSafetyRules } from '../safety/safety.rules.js';
import { parseScript } from '../../providers/llm/playbook-script.js';
import { DEFAULT_DISPOSITIONS } from '../dispositions/dispositions.defaults.js';
import { AGENT_TEMPLATES, TONES, fillBlanks, findTemplate, renderTemplate } from './agent-templates.catalog.js';
import { CALL_BLANKS } from './agent-templates.types.js';
import { businessNameOf, closestTemplate, generateOffline } from './agent-templates.generate.js';
import { readAnswers, wizardQuestions } from './agent-templates.wizard.js';

const REQUIRED_USE_CASES = [
  'appointment-setting',
  'lead-qualification',
  'inbound-support',
  'appointment-reminders',
  'surveys',
  'compliant-collections',
  'real-estate-follow-up',
  'dental-reception',
];

const template = (id: string) => findTemplate(id)!;

test('the templates: at least the eight use cases, each complete, each blank defined, each passing the safety rules', () => {
  assert.ok(AGENT_TEMPLATES.length >= 8);
  assert.deepEqual(
    REQUIRED_USE_CASES.filter((id) => !findTemplate(id)),
    [],
  );
  for (const item of AGENT_TEMPLATES) {
    for (const part of VERSIONED_FIELDS)
      assert.ok(item.parts[part].trim().length > 80, `${item.id} ${part} is written`);
    const callBlanks = new Set<string>([...CALL_BLANKS, ...item.contactColumns]);
    const blanks = new Set([...JSON.stringify(item).matchAll(/\{\{(\w+)\}\}/g)].map((m) => m[1]!));
    assert.deepEqual(
      [...blanks].filter((key) => !item.variables.some((v) => v.key === key) && !callBlanks.has(key)),
      [],
      `${item.id} defines every blank`,
    );
    const rendered = renderTemplate(item, {});
    const left = [...JSON.stringify(rendered).matchAll(/\{\{(\w+)\}\}/g)].map((m) => m[1]!);
    assert.deepEqual(
      left.filter((key) => !callBlanks.has(key)),
      [],
      `${item.id} has no blank left but those filled on each call`,
    );
    assert.deepEqual(runSafetyRules(rendered), [], `${item.id} has no findings, not even warnings`);
  }
});

test('the templates are written to be spoken: quoted words, closers by outcome with declared codes, "an" before a vowel', () => {
  const systemCodes = new Set(DEFAULT_DISPOSITIONS.filter((d) => d.system).map((d) => d.code));
  for (const item of AGENT_TEMPLATES) {
    const lines = (text: string) =>
      text
        .split('\n')
        .map((line) => line.trim())
        .filter(Boolean);
    for (const line of lines(item.parts.objections))
      assert.match(line, /^- "[^"]+": "[^"]+"$/, `${item.id}: an objection is a quoted trigger and quoted words`);
    for (const line of lines(item.parts.faq).filter((l) => l.startsWith('A:')))
      assert.match(line, /^A: "[^"]+"$/, `${item.id}: an FAQ answer is quoted`);
    const closers = parseScript({ closers: item.parts.closers }).closers;
    assert.equal(closers.length, lines(item.parts.closers).length, `${item.id}: one closer a line`);
    const outcomes = new Set(closers.map((c) => c.outcome));
    assert.ok(outcomes.has('agreed') && outcomes.has('declined'), `${item.id}: a closer for a yes and for a no`);
    const declared = new Set(item.dispositions.map((d) => d.code));
    for (const closer of closers) {
      assert.ok(closer.code, `${item.id}: every closer is labelled with its disposition code`);
      assert.ok(declared.has(closer.code) || systemCodes.has(closer.code), `${item.id}: ${closer.code} is declared`);
    }
    const rendered = JSON.stringify(renderTemplate(item, { businessName: 'Acme' }));
    assert.ok(!/\ba (?:[aeio]|Acme)/i.test(rendered), `${item.id}: "an" before a vowel`);
  }
  const reminders = template('appointment-reminders');
  assert.deepEqual(
    reminders.dispositions.map((d) => d.code),
    ['confirmed', 'rescheduled', 'cancelled'],
  );
  assert.equal(
    fillBlanks('You have a {{appointmentType}} with a {{businessName}} specialist.', reminders, {
      appointmentType: 'eye test',
      businessName: 'Acme Optics',
    }),
    'You have an eye test with an Acme Optics specialist.',
  );
});

test('fillBlanks: the given value (trimmed), else the default, capitalized at a sentence start; a blank of no variable stays', () => {
  const dental = template('dental-reception');
  const cases: [string, Record<string, string>, string][] = [
    [
      '{{businessName}} and {{agentName}}',
      { businessName: ' Bright Smile ', agentName: 'Mia' },
      'Bright Smile and Mia',
    ],
    ['{{businessName}}', { businessName: '   ' }, 'Northwind Services'],
    ['{{agentName}}', {}, 'Ava'],
    ['{{colour}}', { colour: 'red' }, 'Red'],
    ['The {{colour}} one. "{{colour}}," they said.', { colour: 'red' }, 'The red one. "Red," they said.'],
    ['{{colour}}', {}, '{{colour}}'],
  ];
  for (const [text, values, expected] of cases) assert.equal(fillBlanks(text, dental, values), expected, text);
});

test("renderTemplate: named for the business; a tone other than the template's own is added to the personality", () => {
  const setting = template('appointment-setting');
  const plain = renderTemplate(setting, { businessName: 'Sunny Solar' });
  assert.equal(plain.name, 'Sunny Solar – Appointment setter');
  assert.equal(renderTemplate(setting, {}, setting.tone as keyof typeof TONES).soul, renderTemplate(setting, {}).soul);
  const upbeat = renderTemplate(setting, {}, setting.tone === 'upbeat' ? 'calm' : 'upbeat');
  assert.ok(upbeat.soul.startsWith(renderTemplate(setting, {}).soul));
  assert.ok(upbeat.soul.endsWith(setting.tone === 'upbeat' ? TONES.calm : TONES.upbeat));
  assert.equal(renderTemplate(setting, { businessName: 'x'.repeat(200) }).name.length, 120);
});

test("the wizard's questions: the template's variables, then tone, transfer number, voice and voicemail", () => {
  const setting = template('appointment-setting');
  const questions = wizardQuestions(setting);
  assert.deepEqual(
    questions.map((q) => q.key),
    [...setting.variables.map((v) => v.key), 'tone', 'transferNumber', 'voice', 'leaveVoicemail'],
  );
  const byKey = Object.fromEntries(questions.map((q) => [q.key, q]));
  assert.deepEqual(byKey.businessName, {
    key: 'businessName',
    label: 'Business name',
    type: 'text',
    help: 'The name callers know you by.',
    required: true,
    default: 'Northwind Services',
    options: null,
  });
  assert.deepEqual(byKey.meetingFormat!.options, ['video call', 'phone call', 'visit in person']);
  assert.deepEqual([byKey.tone!.type, byKey.tone!.default], ['select', setting.tone]);
  assert.equal(byKey.transferNumber!.type, 'phone');
  assert.deepEqual([byKey.leaveVoicemail!.type, byKey.leaveVoicemail!.default], ['boolean', true]);
});

test('readAnswers: answers become values and settings; blanks read the defaults', () => {
  const answers = readAnswers(template('appointment-setting'), {
    businessName: ' Sunny Solar ',
    offering: 'a free rooftop solar assessment',
    meetingFormat: 'visit in person',
    tone: 'upbeat',
    transferNumber: '+14155550199',
    leaveVoicemail: false,
    voice: 'en-us',
    agentName: '',
  });
  assert.equal(answers.values.businessName, 'Sunny Solar');
  assert.equal(answers.values.meetingFormat, 'visit in person');
  assert.equal(answers.values.agentName, 'Ava');
  assert.deepEqual(
    [answers.tone, answers.transferNumber, answers.voice, answers.leaveVoicemail],
    ['upbeat', '+14155550199', 'en-us', false],
  );
  const defaults = readAnswers(template('surveys'), { businessName: 'X', experience: 'your stay' });
  assert.deepEqual(
    [defaults.tone, defaults.transferNumber, defaults.voice, defaults.leaveVoicemail],
    [template('surveys').tone, null, null, template('surveys').voicemail.action === 'leave_message'],
  );
});

test('readAnswers: one validation error names every unknown, missing and invalid answer', () => {
  const cases: [Record<string, unknown>, { field: string; message: string }[]][] = [
    [
      { favouriteColour: 'blue', tone: 'angry', transferNumber: '555-0199', leaveVoicemail: 'yes', paymentPlans: null },
      [
        { field: 'body/answers/favouriteColour', message: 'is not a question of the compliant-collections wizard' },
        { field: 'body/answers/businessName', message: 'is required' },
        { field: 'body/answers/paymentLink', message: 'is required' },
        { field: 'body/answers/tone', message: 'must be one of: warm, professional, upbeat, calm' },
        { field: 'body/answers/transferNumber', message: 'must be an E.164 number, e.g. +14155550123' },
        { field: 'body/answers/leaveVoicemail', message: 'must be true or false' },
      ],
    ],
    [
      { businessName: 'A\nB', paymentLink: 7 },
      [
        { field: 'body/answers/businessName', message: 'must be one line' },
        { field: 'body/answers/paymentLink', message: 'must be text' },
      ],
    ],
    [
      { businessName: 'x'.repeat(201), paymentLink: 'https://pay.example' },
      [{ field: 'body/answers/businessName', message: 'must be at most 200 characters' }],
    ],
  ];
  for (const [answers, fields] of cases) {
    assert.throws(
      () => readAnswers(template('compliant-collections'), answers),
      (error: unknown) => {
        assert.ok(error instanceof AppError);
        assert.equal(error.code, 'validation_failed');
        assert.deepEqual(error.details.fields, fields);
        return true;
      },
      JSON.stringify(answers),
    );
  }
});

test('generateOffline: the closest template, named for the business, whole, safe, and the same every time', () => {
  const input = {
    businessDescription:
      'Harbor Family Dentistry is a dental practice in Portland with three dentists and late opening on Thursdays.',
    goal: 'Answer the phone and book cleanings and check-ups for new and existing patients.',
    tone: 'calm' as const,
    language: 'Spanish',
  };
  const first = generateOffline(input);
  assert.equal(first.templateId, 'dental-reception');
  for (const part of VERSIONED_FIELDS) assert.ok(first.definition[part].trim(), `${part} is written`);
  assert.ok(first.definition.firstMessage.includes('Harbor Family Dentistry'));
  assert.ok(first.definition.mission.startsWith('Answer the phone and book cleanings'));
  assert.ok(
    first.definition.knowledgeBase.startsWith(
      'About Harbor Family Dentistry: Harbor Family Dentistry is a dental practice',
    ),
  );
  assert.ok(first.definition.notes.includes('Speak Spanish for the whole call'));
  assert.ok(first.definition.soul.endsWith('Speak in a calm, patient and steady tone.'));
  assert.deepEqual(runSafetyRules(first.definition), []);
  assert.deepEqual(generateOffline(input), first);
  assert.ok(!generateOffline({ ...input, language: 'en-GB' }).definition.notes.includes('for the whole call'));

  const collections = generateOffline({
    businessDescription: 'We are a utility company.',
    goal: 'Collect overdue invoices politely.',
  });
  assert.equal(collections.templateId, 'compliant-collections');
  assert.ok(collections.definition.firstMessage.includes('our company'));
});

test('closestTemplate and businessNameOf', () => {
  const closest: [string, string, string][] = [
    ['We sell homes in Austin.', 'Follow up with buyers who viewed a listing.', 'real-estate-follow-up'],
    ['A gym.', 'Ask members for feedback on our classes.', 'surveys'],
    ['A clinic.', 'Remind patients of their appointments to cut no-shows.', 'appointment-reminders'],
    ['A bakery.', 'Say hello.', 'appointment-setting'],
  ];
  for (const [businessDescription, goal, id] of closest)
    assert.equal(closestTemplate({ businessDescription, goal }).id, id, goal);
  const names: [string, string][] = [
    ['Acme Plumbing is a family business.', 'Acme Plumbing'],
    ['Bank of the West, a bank.', 'Bank of the West'],
    ['We are a utility company.', 'our company'],
    ['a small shop that sells tea', 'our company'],
  ];
  for (const [description, name] of names) assert.equal(businessNameOf(description), name, description);
});
