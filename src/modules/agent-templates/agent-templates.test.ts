/**
 * Agent templates, the wizard and the offline generator, through HTTP: templates are listed and read, agents are made
 * from templates and wizard answers, a draft is generated without saving, and bad answers are one 400 naming each
 * field. The templates' content and the rules that fill and check them are tested in agent-templates.rules.test.ts.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, call, errorBody, signUp, type SignedUp, type TestApp } from '../../../test/helpers.js';
import { VERSIONED_FIELDS } from '../agents/agents.prompt.js';
import { TEMPLATE_IDS, findTemplate } from './agent-templates.catalog.js';

let t: TestApp;
let owner: SignedUp;
before(async () => {
  t = await buildTestApp();
  owner = await signUp(t.app);
});
after(async () => t.close());

async function ok(response: { statusCode: number; body: string; json(): any }) {
  assert.equal(response.statusCode, 200, response.body);
  return response.json();
}

test('every template is listed and readable by id; an agent created from one passes the safety check', async () => {
  const { templates } = await ok(await call(owner, 'GET', '/agent-templates'));
  assert.deepEqual(
    templates.map((tpl: { id: string }) => tpl.id),
    TEMPLATE_IDS,
  );
  for (const item of templates) {
    const template = await ok(await call(owner, 'GET', `/agent-templates/${item.id}`));
    assert.deepEqual(template.parts, findTemplate(item.id)!.parts, `${item.id}: its parts, blanks and all`);
    assert.deepEqual(
      template.variables.map((v: { key: string }) => v.key),
      item.variables,
    );
  }
  const agent = await ok(await call(owner, 'POST', '/agents/from-template', { templateId: 'compliant-collections' }));
  assert.deepEqual(
    [...new Set([...JSON.stringify(agent).matchAll(/\{\{(\w+)\}\}/g)].map((m) => m[1]))].sort(),
    ['amountDue', 'dueDate', 'firstName', 'lastName'],
    "no blank left but those filled on each call (the contact's name and columns)",
  );
  const report = await ok(await call(owner, 'POST', '/agents/safety-check', { agentId: agent.id }));
  assert.equal(report.result, 'pass', JSON.stringify(report.findings));
  assert.deepEqual(report.findings, []);
});

test("an agent made from a template adds the template's disposition codes to the account; a refused one adds none", async () => {
  const account = await signUp(t.app);
  const codes = async () =>
    ((await ok(await call(account, 'GET', '/disposition-codes?limit=100'))).dispositionCodes as { code: string }[])
      .map((c) => c.code)
      .sort();
  const detail = await ok(await call(account, 'GET', '/agent-templates/appointment-reminders'));
  assert.deepEqual(
    detail.dispositions.map((d: { code: string }) => d.code),
    ['confirmed', 'rescheduled', 'cancelled'],
  );
  assert.deepEqual(detail.contactColumns, ['appointmentTime']);

  const refused = await call(account, 'POST', '/agents/from-template', {
    templateId: 'appointment-reminders',
    overrides: { voice: 'no-such-voice' },
  });
  assert.equal(refused.statusCode, 400, refused.body);
  assert.ok(!(await codes()).includes('confirmed'), 'a refused agent adds no codes');

  await ok(await call(account, 'POST', '/agents/from-template', { templateId: 'appointment-reminders' }));
  const added = await codes();
  for (const code of ['confirmed', 'rescheduled', 'cancelled', 'hung_up']) assert.ok(added.includes(code), code);
  // A second agent from it finds them there: nothing doubles, and a code the account turned off stays off.
  const confirmed = (
    (await ok(await call(account, 'GET', '/disposition-codes?limit=100'))).dispositionCodes as Array<{
      id: string;
      code: string;
    }>
  ).find((c) => c.code === 'confirmed')!;
  await ok(await call(account, 'PATCH', `/disposition-codes/${confirmed.id}`, { active: false }));
  await ok(
    await call(account, 'POST', '/wizard/agents', {
      templateKey: 'appointment-reminders',
      answers: { businessName: 'Acme', appointmentType: 'eye test' },
    }),
  );
  assert.deepEqual(await codes(), added);
  const after = await ok(await call(account, 'GET', '/disposition-codes?limit=100&active=false'));
  assert.deepEqual(
    after.dispositionCodes.map((c: { code: string }) => c.code),
    ['confirmed'],
  );
});

test('from-template fills blanks from variables and lays overrides over the template', async () => {
  const agent = await ok(
    await call(owner, 'POST', '/agents/from-template', {
      templateId: 'dental-reception',
      variables: { businessName: 'Bright Smile Dental', agentName: 'Mia' },
      overrides: { name: 'Front desk', status: 'active', voice: 'en-us+f3', transfer: { number: '+14155550123' } },
    }),
  );
  assert.equal(agent.name, 'Front desk');
  assert.equal(agent.status, 'active');
  assert.equal(agent.voiceId, 'en-us+f3');
  assert.deepEqual(agent.transfer.number, '+14155550123');
  assert.ok(agent.transfer.whenToTransfer.includes('dental emergency'), "the template's transfer rule stays");
  assert.equal(
    agent.firstMessage,
    "Thank you for calling Bright Smile Dental. This is Mia, the practice's AI receptionist. How can I help you today?",
  );
  assert.equal(agent.version, 1);

  const listed = await ok(await call(owner, 'GET', `/agents/${agent.id}`));
  assert.equal(
    listed.systemPrompt.startsWith('## Personality\nYou are Mia, the AI receptionist of Bright Smile Dental'),
    true,
  );

  const missing = await call(owner, 'POST', '/agents/from-template', { templateId: 'no-such-template' });
  assert.equal(missing.statusCode, 404);
  const unknownVariable = await call(owner, 'POST', '/agents/from-template', {
    templateId: 'surveys',
    variables: { colour: 'red', size: 'L' },
  });
  assert.equal(unknownVariable.statusCode, 400);
  assert.deepEqual(
    (errorBody(unknownVariable).details.fields as { field: string }[]).map((f) => f.field),
    ['body/variables/colour', 'body/variables/size'],
  );
  const badVoice = await call(owner, 'POST', '/agents/from-template', {
    templateId: 'surveys',
    overrides: { voice: 'no-such-voice' },
  });
  assert.equal(badVoice.statusCode, 400);
  assert.equal((errorBody(badVoice).details.fields as { field: string }[])[0]!.field, 'body/voice');
  assert.equal((await call(owner, 'GET', '/agent-templates/no-such-template')).statusCode, 404);
});

test('the wizard: question sets per use case, answers become an agent', async () => {
  const { templates } = await ok(await call(owner, 'GET', '/wizard/templates'));
  assert.equal(templates.length, 8);
  const wizard = await ok(await call(owner, 'GET', '/wizard/templates/appointment-setting'));
  const byKey = Object.fromEntries(wizard.questions.map((q: { key: string }) => [q.key, q]));
  assert.deepEqual(byKey.businessName, {
    key: 'businessName',
    label: 'Business name',
    type: 'text',
    help: 'The name callers know you by.',
    required: true,
    default: 'Northwind Services',
    options: null,
  });
  assert.deepEqual(byKey.meetingFormat.options, ['video call', 'phone call', 'visit in person']);
  assert.equal(byKey.tone.type, 'select');
  assert.equal(byKey.transferNumber.type, 'phone');
  assert.equal(byKey.leaveVoicemail.type, 'boolean');
  assert.equal(byKey.leaveVoicemail.default, true);

  const agent = await ok(
    await call(owner, 'POST', '/wizard/agents', {
      templateKey: 'appointment-setting',
      answers: {
        businessName: 'Sunny Solar',
        offering: 'a free rooftop solar assessment',
        meetingFormat: 'visit in person',
        tone: 'upbeat',
        transferNumber: '+14155550199',
        leaveVoicemail: false,
        voice: 'en-us',
      },
    }),
  );
  assert.equal(agent.name, 'Sunny Solar – Appointment setter');
  assert.ok(agent.mission.includes('a free rooftop solar assessment with Sunny Solar'));
  assert.ok(agent.soul.endsWith('Speak in an upbeat, energetic and positive tone, without being pushy.'));
  assert.ok(agent.playbook.includes('as a visit in person'));
  assert.ok(agent.closers.includes('as a visit in person'));
  assert.deepEqual(agent.transfer.number, '+14155550199');
  assert.deepEqual(agent.voicemail.action, 'hang_up');
  assert.equal(agent.voiceId, 'en-us');
  assert.equal((await call(owner, 'GET', '/wizard/templates/nope')).statusCode, 404);
});

test('wizard answers that are unknown, missing or invalid are one 400 naming each field, and nothing is created', async () => {
  const before = (await ok(await call(owner, 'GET', '/agents'))).total;
  const response = await call(owner, 'POST', '/wizard/agents', {
    templateKey: 'compliant-collections',
    answers: {
      favouriteColour: 'blue',
      tone: 'angry',
      transferNumber: '555-0199',
      leaveVoicemail: 'yes',
      paymentPlans: null,
    },
  });
  assert.equal(response.statusCode, 400);
  const body = errorBody(response);
  assert.equal(body.error, 'validation_failed');
  assert.deepEqual(
    (body.details.fields as { field: string }[]).map((f) => f.field),
    [
      'body/answers/favouriteColour',
      'body/answers/businessName',
      'body/answers/paymentLink',
      'body/answers/tone',
      'body/answers/transferNumber',
      'body/answers/leaveVoicemail',
    ],
  );
  assert.match(body.message, /body\/answers\/tone must be one of: warm, professional, upbeat, calm/);
  const unknownVoice = await call(owner, 'POST', '/wizard/agents', {
    templateKey: 'surveys',
    answers: { businessName: 'X', experience: 'your stay', voice: 'robot-9' },
  });
  assert.equal(unknownVoice.statusCode, 400);
  assert.equal((errorBody(unknownVoice).details.fields as { field: string }[])[0]!.field, 'body/voice');
  assert.equal((await ok(await call(owner, 'GET', '/agents'))).total, before);
});

test('generate offline: a draft from the closest template, with its safety report; nothing is saved', async () => {
  const input = {
    businessDescription:
      'Harbor Family Dentistry is a dental practice in Portland with three dentists and late opening on Thursdays.',
    goal: 'Answer the phone and book cleanings and check-ups for new and existing patients.',
    tone: 'calm',
    language: 'Spanish',
  };
  const first = await ok(await call(owner, 'POST', '/agents/wizard/generate', input));
  assert.deepEqual(first.generator, {
    kind: 'builtin',
    model: null,
    templateId: 'dental-reception',
    fallbackReason: null,
  });
  for (const part of VERSIONED_FIELDS) assert.equal(typeof first.definition[part], 'string');
  assert.ok(first.definition.firstMessage.includes('Harbor Family Dentistry'));
  assert.deepEqual(first.safety, { result: 'pass', findings: [] });
  assert.equal(
    (await ok(await call(owner, 'GET', '/agents'))).agents.some((a: { name: string }) => a.name.includes('Harbor')),
    false,
    'nothing saved',
  );

  const bad = await call(owner, 'POST', '/agents/wizard/generate', { businessDescription: 'short', tone: 'shouty' });
  assert.equal(bad.statusCode, 400);
  assert.deepEqual((errorBody(bad).details.fields as { field: string }[]).map((f) => f.field).sort(), [
    'body/businessDescription',
    'body/goal',
    'body/tone',
  ]);
});
