import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyzeTranscript, fieldKeywords, type AnalysisInput } from './calls.analysis.extractor.js';

const ENDED = new Date('2026-03-02T15:00:26.000Z');
const turns = (...lines: string[]) =>
  lines.map((line) => {
    const [speaker, ...text] = line.split(': ');
    return { speaker: speaker as 'agent' | 'caller', text: text.join(': ') };
  });

const base: AnalysisInput = {
  transcript: [],
  direction: 'outbound',
  endReason: 'agent_hangup',
  disposition: null,
  dispositionCategory: null,
  durationSeconds: 26,
  endedAt: ENDED,
  agentName: 'Sales Sally',
  mission: 'Book a short demo.',
  fields: [],
  contactFirstName: 'Ada',
  timeZone: 'America/New_York',
};

const INTERESTED = turns(
  'agent: Hi, this is Sally from Acme. Do you have a minute?',
  'caller: Yes, this is Ada. Sure, I have a minute.',
  'agent: We help teams book more demos with AI phone agents.',
  'caller: Oh, that sounds interesting. How much does it cost?',
  'agent: It starts at 49 dollars a month. Would you like a short demo next week?',
  'caller: Okay, that sounds good. Yes, I would like that.',
  'agent: Great, I will send you an invite.',
);

test('an interested callee: agreed, mission succeeded, the question asked and the promise to keep', () => {
  const analysis = analyzeTranscript({ ...base, transcript: INTERESTED, disposition: 'interested' });
  assert.equal(analysis.outcome, 'interested');
  assert.equal(analysis.missionSucceeded, true);
  assert.equal(analysis.missionReason, 'The callee agreed: "Okay, that sounds good. Yes, I would like that.".');
  assert.equal(
    analysis.summary,
    'Sales Sally called Ada; the call lasted 26 seconds. Ada asked "How much does it cost?". Ada agreed ("Okay, that sounds good. Yes, I would like that.").',
  );
  assert.deepEqual(analysis.nextSteps, ['Do what the agent promised: "Great, I will send you an invite."']);
  assert.equal(analysis.callback, null);
});

test('a callback request: the time asked for, in the callee’s zone, in the summary and the next steps', () => {
  const analysis = analyzeTranscript({
    ...base,
    disposition: 'callback_requested',
    transcript: turns(
      'agent: Hi, this is Sally from Acme. Do you have a minute?',
      "caller: Sorry, I'm in a meeting right now. Can you call me back tomorrow?",
      "agent: Of course, I'll call you back at a better time. Thank you, goodbye!",
    ),
  });
  assert.equal(analysis.outcome, 'callback_requested');
  assert.equal(analysis.missionSucceeded, false);
  assert.deepEqual(analysis.callback, { asked: 'tomorrow', at: new Date('2026-03-03T15:00:00.000Z') });
  assert.match(
    analysis.summary,
    /Ada asked to be called back tomorrow \(Tuesday 3 March, 10:00 \(America\/New_York\)\)\./,
  );
  assert.deepEqual(analysis.nextSteps, ['Call Ada back at Tuesday 3 March, 10:00 (America/New_York).']);
  const berlin = analyzeTranscript({
    ...base,
    timeZone: 'Europe/Berlin',
    transcript: turns('agent: Do you have a minute?', 'caller: Not now. Call me back tomorrow after 3.'),
  });
  assert.deepEqual(berlin.callback, { asked: 'tomorrow after 3', at: new Date('2026-03-03T14:00:00.000Z') });
  const vague = analyzeTranscript({
    ...base,
    transcript: turns('agent: Do you have a minute?', "caller: It's a bad time, call me back later."),
  });
  assert.deepEqual(vague.callback, { asked: "It's a bad time, call me back later.", at: null });
  assert.deepEqual(vague.nextSteps, ['Call Ada back at a better time (no time was named).']);
});

test('the outcome follows the last intent: a hesitant callee who asked for a person and said goodbye is not interested', () => {
  const hesitant = turns(
    'agent: Hi, this is Sally from Acme. Do you have a minute?',
    'caller: Yes, speaking. I have a minute, I guess.',
    'agent: We help teams book more demos with AI phone agents.',
    "caller: Hmm, I'm not sure. It sounds too expensive for us.",
    'agent: Most teams earn it back in the first month.',
    "caller: I don't know. We already use another provider.",
    'agent: Would you like a short demo next week?',
    'caller: Could I speak to a real person about this?',
    "agent: That's a good question. I'll make sure someone follows up with you on that.",
  );
  const goodbye = analyzeTranscript({
    ...base,
    disposition: 'interested',
    transcript: [...hesitant, ...turns('caller: Okay. Thank you, bye.')],
  });
  assert.equal(goodbye.outcome, 'person_requested');
  assert.equal(goodbye.missionSucceeded, false);
  assert.deepEqual(goodbye.nextSteps, ['Have a person call Ada back.']);
  assert.match(goodbye.summary, /Ada objected: "Hmm, I'm not sure\." and "It sounds too expensive for us\."/);
  const agreed = analyzeTranscript({
    ...base,
    disposition: 'interested',
    transcript: [
      ...hesitant,
      ...turns("caller: Okay, yes, I'd like that.", 'agent: Great, I will send you an invite.'),
    ],
  });
  assert.equal(agreed.outcome, 'interested');
  assert.deepEqual(agreed.nextSteps, [
    'Do what the agent promised: "Great, I will send you an invite."',
    'Ada asked to speak to a person: have one follow up.',
  ]);
});

test('declines, do-not-call, voicemail, an early hang-up and a transfer', () => {
  const declined = analyzeTranscript({
    ...base,
    transcript: turns('agent: Do you have a minute?', "caller: No thanks, I'm not interested."),
  });
  assert.equal(declined.outcome, 'not_interested');
  assert.equal(declined.missionReason, 'The callee was not interested: "No thanks, I\'m not interested.".');
  const dnc = analyzeTranscript({
    ...base,
    disposition: 'do_not_call',
    transcript: turns('agent: Do you have a minute?', 'caller: Please stop calling me. Take me off your list.'),
  });
  assert.equal(dnc.outcome, 'do_not_call');
  assert.deepEqual(dnc.nextSteps, ['Do not call this number again.']);
  const voicemail = analyzeTranscript({
    ...base,
    endReason: 'voicemail',
    disposition: 'voicemail',
    durationSeconds: 12,
    transcript: turns(
      "caller: Hi, you've reached Ada. I can't take your call right now. Please leave a message after the beep.",
      'agent: Hi, this is Sally from Acme. Please call us back at your convenience.',
    ),
  });
  assert.equal(voicemail.outcome, 'voicemail');
  assert.equal(
    voicemail.summary,
    "Sales Sally reached Ada's voicemail and left a message; the call lasted 12 seconds.",
  );
  const hungUp = analyzeTranscript({
    ...base,
    endReason: 'caller_hangup',
    durationSeconds: 4,
    transcript: turns('caller: Hello?', 'agent: Hi, this is Sally from Acme. Do you have a minute?'),
  });
  assert.equal(hungUp.outcome, 'hung_up');
  assert.equal(hungUp.missionSucceeded, false);
  const transferred = analyzeTranscript({
    ...base,
    endReason: 'transferred',
    transcript: turns('agent: Do you have a minute?', 'caller: Can I talk to a manager?'),
  });
  assert.equal(transferred.outcome, 'transferred');
  const positiveCode = analyzeTranscript({
    ...base,
    disposition: 'confirmed',
    dispositionCategory: 'positive',
    transcript: turns('agent: Is 10 am tomorrow still good for your appointment?', 'caller: Yep, see you then.'),
  });
  assert.equal(positiveCode.missionSucceeded, true);
  assert.equal(positiveCode.missionReason, 'The call ended with the positive disposition "confirmed".');
});

test('declared fields are found in what the callee said about them or their answers to the agent’s questions', () => {
  const fields = [
    { name: 'budget', type: 'number' as const, description: 'The monthly budget in dollars' },
    { name: 'email', type: 'email' as const, description: 'Where to send the invite, read back' },
    { name: 'preferredDate', type: 'date' as const, description: 'The day that suits them for the demo' },
    { name: 'usesCrm', type: 'boolean' as const, description: 'Whether they use a CRM today' },
    { name: 'company', type: 'string' as const, description: 'The company they work for' },
    { name: 'teamSize', type: 'number' as const, description: 'People on the sales team' },
  ];
  const analysis = analyzeTranscript({
    ...base,
    fields,
    transcript: turns(
      'agent: What budget do you have in mind?',
      'caller: About five thousand dollars a month.',
      'agent: And which company are you with?',
      'caller: Northwind Traders.',
      'agent: Do you use a CRM today?',
      'caller: Yes, we do.',
      'agent: What is the best email for the invite?',
      "caller: It's ada dot lovelace at northwind dot com.",
      'agent: So that is ada.lovelace@northwind.com, right?',
      "caller: That's right.",
      'agent: Which day suits you for the demo?',
      'caller: Next Tuesday would be great.',
    ),
  });
  assert.deepEqual(analysis.fields, {
    budget: 5000,
    email: 'ada.lovelace@northwind.com',
    preferredDate: '2026-03-03',
    usesCrm: true,
    company: 'Northwind Traders.',
    teamSize: null,
  });
  assert.deepEqual(fieldKeywords(fields[2]!), ['preferred', 'date', 'day', 'suit', 'demo']);
});

test('the callback time is read first from the words that asked for it', () => {
  const analysis = analyzeTranscript({
    ...base,
    transcript: turns(
      'agent: How many locations do you run?',
      'caller: We are at 3 locations now.',
      'agent: Would you like a demo?',
      "caller: I'm busy right now, call me back on Friday morning.",
      'agent: Of course.',
      'caller: Thanks, bye.',
    ),
  });
  assert.equal(analysis.outcome, 'callback_requested');
  assert.deepEqual(analysis.callback, { asked: 'on friday morning', at: new Date('2026-03-06T14:00:00.000Z') });
});
