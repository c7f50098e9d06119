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
import { AGENT_TEMPLATES, TONES, fillBlanks, findTemplate, renderTemplate } from './agent-templates.catalog.js';
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
    const blanks = new Set([...JSON.stringify(item).matchAll(/\{\{(\w+)\}\}/g)].map((m) => m[1]));
    assert.deepEqual(
      [...blanks].filter((key) => !item.variables.some((v) => v.key === key)),
      [],
      `${item.id} defines every blank`,
    );
    const rendered = renderTemplate(item, {});
    assert.ok(!JSON.stringify(rendered).includes('{{'), `${item.id} has no blank left`);
    assert.deepEqual(runSafetyRules(rendered), [], `${item.id} has no findings, not even warnings`);
  }
});

test('fillBlanks: the given value (trimmed), else the default; a blank of no variable stays', () => {
  const dental = template('dental-reception');
  const cases: [string, Record<string, string>, string][] = [
    [
      '{{businessName}} and {{agentName}}',
      { businessName: ' Bright Smile ', agentName: 'Mia' },
      'Bright Smile and Mia',
    ],
    ['{{businessName}}', { businessName: '   ' }, 'Northwind Services'],
    ['{{agentName}}', {}, 'Ava'],
    ['{{colour}}', { colour: 'red' }, 'red'],
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
