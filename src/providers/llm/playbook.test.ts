import { test } from 'node:test';
import assert from 'node:assert/strict';
import { assembleSystemPrompt } from '../../modules/agents/agents.prompt.js';
import {
  collectChat,
  createPlaybookLlm,
  END_CALL_TOOL,
  type AgentScript,
  type ChatDelta,
  type ChatMessage,
} from './index.js';
import {
  fillSpoken,
  identityOf,
  keywords,
  offeredTimes,
  parseScript,
  scriptFromSystemPrompt,
  type CallFacts,
} from './playbook-script.js';

const engine = createPlaybookLlm();

const agent: AgentScript = {
  firstMessage: 'Hi, this is Sam from Acme Dental. Do you have a minute?',
  mission: 'Book a cleaning appointment.',
  playbook: [
    '1. Confirm who you are talking to: "Am I speaking with the person who handles appointments?"',
    '2. "We have openings next week for a cleaning."',
    '3. Ask which day suits: "Would Tuesday or Thursday work better for you?"',
  ].join('\n'),
  objections: [
    '- Too expensive -> Your first cleaning is covered by most insurance plans, so it usually costs nothing.',
    '- If they say they already have a dentist, say "That\'s great; many of our patients keep theirs and use us for evenings."',
    'Q: I am not interested',
    'A: I understand. Can I ask if it is the timing or the service?',
  ].join('\n'),
  faq: [
    'Where are you located? We are at 12 Main Street, next to the library.',
    'Do you take insurance? Yes, we accept most major insurance plans.',
    'Parking: There is free parking behind the building.',
  ].join('\n'),
  closers: 'Perfect, I have you down for next week. You will get a text confirmation. Goodbye!',
  notes: 'Never discuss prices over the phone.',
  voicemailMessage: 'Hi, this is Sam from Acme Dental. Please call us back at 555-0100.',
};

/** Plays one turn and returns what the agent said, and the end_call arguments when it hangs up. */
async function turn(messages: ChatMessage[], script: AgentScript | undefined = agent) {
  const result = await collectChat(
    engine.chat({ messages, tools: [END_CALL_TOOL], ...(script ? { agent: script } : {}) }),
  );
  const end = result.message.toolCalls.find((call) => call.name === 'end_call');
  return {
    say: result.message.content ?? '',
    end: end ? (JSON.parse(end.arguments) as { disposition: string; reason: string }) : null,
    result,
  };
}

/** Runs a whole conversation: the other side's lines in order; returns the agent's lines and how it ended. */
async function converse(lines: string[], script: AgentScript = agent) {
  const messages: ChatMessage[] = [];
  const said: string[] = [];
  let next = await turn(messages, script);
  for (const line of [...lines, null]) {
    said.push(next.say);
    messages.push({ role: 'assistant', content: next.say });
    if (next.end || line === null) return { said, end: next.end };
    messages.push({ role: 'user', content: line });
    next = await turn(messages, script);
  }
  throw new Error('unreachable');
}

test('the playbook is parsed into steps, objection and FAQ pairs, and closers', () => {
  const parsed = parseScript(agent);
  assert.deepEqual(parsed.steps, [
    { kind: 'say', text: 'Am I speaking with the person who handles appointments?' },
    { kind: 'say', text: 'We have openings next week for a cleaning.' },
    { kind: 'say', text: 'Would Tuesday or Thursday work better for you?' },
  ]);
  assert.deepEqual(
    parsed.objections.map((pair) => [[...pair.keys], pair.answer]),
    [
      [['expensiv'], 'Your first cleaning is covered by most insurance plans, so it usually costs nothing.'],
      [['already', 'dentist'], "That's great; many of our patients keep theirs and use us for evenings."],
      [['not_interest'], 'I understand. Can I ask if it is the timing or the service?'],
    ],
  );
  assert.deepEqual(
    parsed.faq.map((pair) => pair.answer),
    [
      'We are at 12 Main Street, next to the library.',
      'Yes, we accept most major insurance plans.',
      'There is free parking behind the building.',
    ],
  );
  assert.deepEqual(parsed.closers, [
    {
      outcome: 'agreed',
      code: null,
      say: 'Perfect, I have you down for next week. You will get a text confirmation. Goodbye!',
    },
  ]);
  // Negations stick to their word, so "not sure" does not look like "not interested".
  assert.deepEqual([...keywords("I'm not sure, we don't really need it")], ['not_sur', 'not_need']);
});

test('a willing callee: opener, every step in order, an FAQ answer on the way, then the closer and end_call(interested)', async () => {
  const { said, end } = await converse([
    'Hello? Yes, speaking.',
    'Oh, okay.',
    'Hmm, where are you located?',
    'Yes, Tuesday works.',
  ]);
  // A statement runs on into the question after it; a question of theirs is answered, then the open one asked again.
  assert.deepEqual(said, [
    agent.firstMessage,
    'Am I speaking with the person who handles appointments?',
    'We have openings next week for a cleaning. Would Tuesday or Thursday work better for you?',
    'We are at 12 Main Street, next to the library. Would Tuesday or Thursday work better for you?',
    'Perfect, I have you down for next week. You will get a text confirmation. Goodbye!',
  ]);
  assert.equal(end?.disposition, 'interested');
});

test('objections are answered once by keyword overlap; the same objection twice ends the call', async () => {
  const first = await converse([
    'Sorry, this sounds too expensive for me.',
    'We already have a dentist we like.',
    'Sure, go on.',
  ]);
  // Each answer, then the question still open (asked again once), then the next step.
  assert.equal(
    first.said[1],
    'Your first cleaning is covered by most insurance plans, so it usually costs nothing. Do you have a minute?',
  );
  assert.equal(
    first.said[2],
    "That's great; many of our patients keep theirs and use us for evenings. Am I speaking with the person who handles appointments?",
  );
  assert.equal(
    first.said[3],
    'We have openings next week for a cleaning. Would Tuesday or Thursday work better for you?',
  );
  assert.equal(first.end, null);

  const twice = await converse(["I'm not interested.", "Like I said, I'm not interested."]);
  assert.equal(twice.said[1], 'I understand. Can I ask if it is the timing or the service?');
  assert.equal(twice.end?.disposition, 'not_interested');
  assert.equal(twice.said.at(-1), 'I understand. Thank you for your time, and have a good day. Goodbye!');
});

test('every way a call ends: do not call, voicemail, call back, refusal, goodbye, silence', async () => {
  const cases: [string[], string, RegExp | string][] = [
    [['Take me off your list and stop calling me.'], 'do_not_call', /not called again/],
    [["Hi, you've reached Ada. Please leave a message after the tone."], 'voicemail', agent.voicemailMessage!],
    [["I'm in a meeting, can you call me back tomorrow?"], 'callback_requested', /call you back/],
    [['No thanks.'], 'not_interested', /Thank you for your time/],
    [['Yes, speaking.', 'Sure.', 'Okay bye.'], 'interested', /Goodbye/],
    [['Who is this? Bye.'], 'not_interested', /Goodbye/],
  ];
  for (const [lines, disposition, lastLine] of cases) {
    const { said, end } = await converse(lines);
    assert.equal(end?.disposition, disposition, lines.join(' / '));
    assert.ok(end?.reason, 'a reason comes with the disposition');
    if (typeof lastLine === 'string') assert.equal(said.at(-1), lastLine);
    else assert.match(said.at(-1)!, lastLine);
  }

  // Nothing heard after the agent spoke: one check, then a hang-up.
  const silent: ChatMessage[] = [{ role: 'assistant', content: agent.firstMessage! }];
  const check = await turn(silent);
  assert.equal(check.say, 'Are you still there?');
  assert.equal(check.end, null);
  const gone = await turn([...silent, { role: 'assistant', content: check.say }, { role: 'user', content: '  ' }]);
  assert.equal(gone.end?.disposition, 'callback_requested');

  // Without a voicemail message the agent hangs up saying nothing.
  const quiet = await turn(
    [{ role: 'user', content: 'The person you are calling is not available to take your call.' }],
    { ...agent, voicemailMessage: '' },
  );
  assert.equal(quiet.say, '');
  assert.equal(quiet.end?.disposition, 'voicemail');
});

test('after the last step, a neutral answer gets one check-in, then a goodbye by their last decision', async () => {
  const { said, end } = await converse(['Yes.', 'Right.', 'Hmm.', 'I see.', 'Maybe.']);
  assert.deepEqual(said.slice(3), [
    'I understand. Would Tuesday or Thursday work better for you?',
    'Is there anything else I can help you with?',
    'I understand. Thank you for your time, and have a good day. Goodbye!',
  ]);
  assert.equal(end?.disposition, 'not_interested', 'a yes to "do you have a minute?" is no decision');
});

test('a clear yes closes at once; the agent that waits opens after the callee speaks', async () => {
  const eager = await converse(['Sign me up!']);
  assert.equal(eager.said[1], 'Perfect, I have you down for next week. You will get a text confirmation. Goodbye!');
  assert.equal(eager.end?.disposition, 'interested');

  const waiting = await turn([{ role: 'user', content: 'Hello?' }], { ...agent, firstMessage: '' });
  assert.equal(waiting.say, 'Hello, this is an AI assistant. Am I speaking with the person who handles appointments?');
});

test('same input, same output: deltas are identical, and usage follows the documented estimate', async () => {
  const messages: ChatMessage[] = [
    { role: 'assistant', content: agent.firstMessage! },
    { role: 'user', content: 'Do you take insurance?' },
  ];
  const run = async () => {
    const deltas: ChatDelta[] = [];
    for await (const delta of engine.chat({ messages, agent, tools: [END_CALL_TOOL] })) deltas.push(delta);
    return deltas;
  };
  const first = await run();
  assert.deepEqual(await run(), first);
  const text = 'Yes, we accept most major insurance plans. Do you have a minute?';
  assert.deepEqual(
    first.filter((d) => d.type === 'text').map((d) => (d as { text: string }).text),
    ['Yes, we accept most major insurance plans. ', 'Do you have a minute?'],
  );
  const scriptChars = Object.values(agent).join('\n').length;
  const inputTokens =
    4 +
    Math.ceil(agent.firstMessage!.length / 4) +
    4 +
    Math.ceil('Do you take insurance?'.length / 4) +
    Math.ceil(scriptChars / 4);
  assert.deepEqual(first.at(-1), {
    type: 'done',
    usage: { inputTokens, outputTokens: Math.ceil(text.length / 4) },
    finishReason: 'stop',
  });
  assert.equal(engine.name, 'parley-playbook');
});

test('the engine reads the assembled system prompt when no prompt parts are passed (the proxy path)', async () => {
  const system = assembleSystemPrompt({ soul: 'Warm and brief.', ...agent });
  const parsed = scriptFromSystemPrompt(system);
  for (const part of ['mission', 'playbook', 'objections', 'closers', 'notes', 'faq'] as const) {
    assert.equal(parsed[part], agent[part], `${part} is found under its heading`);
  }
  const viaPrompt = await turn(
    [
      { role: 'system', content: system },
      { role: 'assistant', content: agent.firstMessage! },
      { role: 'user', content: 'Is there parking?' },
    ],
    undefined,
  );
  assert.equal(viaPrompt.say, 'There is free parking behind the building. Do you have a minute?');
});

test('end_call is only called when offered; maxTokens cuts the turn short', async () => {
  const messages: ChatMessage[] = [
    { role: 'assistant', content: agent.firstMessage! },
    { role: 'user', content: 'Stop calling me.' },
  ];
  const noTool = await collectChat(
    engine.chat({ messages, agent, tools: [{ name: 'lookup', parameters: { type: 'object' } }] }),
  );
  assert.deepEqual(noTool.message.toolCalls, []);
  assert.equal(noTool.finishReason, 'stop');
  const withTool = await collectChat(engine.chat({ messages, agent }));
  assert.equal(withTool.message.toolCalls[0]?.name, 'end_call');
  assert.equal(withTool.finishReason, 'tool_calls');

  const short = await collectChat(engine.chat({ messages, agent, maxTokens: 3 }));
  assert.equal(short.message.content, "I'm sorry to");
  assert.equal(short.finishReason, 'length');
  assert.deepEqual(short.message.toolCalls, []);
});

test('a line written to a model is never said as it is: it becomes a sentence when the engine knows how, else it is skipped', () => {
  const parsed = parseScript({
    playbook: [
      '1. Greet the person by name, say you are an AI assistant calling from Northwind, and mention why you are calling.',
      '2. Ask if now is a good moment for a one-minute chat. If not, offer a better time and end the call.',
      '3. In one sentence, explain what the consultation covers and what they get out of it.',
      '4. Ask when they hope to get started. If they are unsure, move on.',
      '5. Timeline: when would they like a solution in place?',
      '6. Offer two concrete slots (weekdays between 9 am and 5 pm).',
      '7. Confirm the date, time and the best email for the invitation.',
      '8. Tell them they will receive written validation.',
      '9. If the person asks to stop calling, apologise, confirm it, and end the call.',
      '10. We have openings next week.',
      '11. Ask about the budget: "Is there a budget set aside for this?"',
    ].join('\n'),
    objections: [
      '- "Not interested": thank them, and end the call without pushing.',
      '- "Too busy": "I understand; when would suit you better?" Then offer a call back.',
    ].join('\n'),
  });
  assert.deepEqual(parsed.steps, [
    { kind: 'intro', text: null },
    { kind: 'check_time', text: null },
    { kind: 'skip', text: null },
    { kind: 'say', text: 'May I ask when you hope to get started?' },
    { kind: 'say', text: 'When would you like a solution in place?' },
    { kind: 'offer_times', text: null },
    { kind: 'read_back', text: null },
    { kind: 'say', text: 'You will receive written validation.' },
    { kind: 'skip', text: null },
    { kind: 'say', text: 'We have openings next week.' },
    { kind: 'say', text: 'Is there a budget set aside for this?' },
  ]);
  assert.deepEqual(
    parsed.objections.map((pair) => pair.answer),
    ['I understand; when would suit you better?'],
    'an answer written as an instruction is no answer',
  );
});

test('closers: one per outcome, labelled by a disposition code or by words; old one-line forms are split', () => {
  const closers = parseScript({
    closers: [
      'confirmed: "Great, you\'re all set. See you then!"',
      'cancelled: "Your appointment is cancelled. Thanks for letting us know."',
      'rescheduled: "Done: you\'re moved to [day] at [time]."',
      'For a good fit: "Shall I book a specialist?" Otherwise: "Thanks for your time."',
      '"Great, you\'re confirmed for [day]." or "Your visit is now cancelled."',
      'Thank them and say goodbye.',
    ].join('\n'),
  }).closers;
  assert.deepEqual(
    closers.map((c) => [c.outcome, c.code, c.say.slice(0, 20)]),
    [
      ['agreed', 'confirmed', "Great, you're all se"],
      ['declined', 'cancelled', 'Your appointment is '],
      ['rescheduled', 'rescheduled', "Done: you're moved t"],
      ['agreed', null, 'Shall I book a speci'],
      ['declined', null, 'Thanks for your time'],
      ['agreed', null, "Great, you're confir"],
      ['declined', null, 'Your visit is now ca'],
    ],
  );
});

const CALL: CallFacts = {
  firstName: 'Ada',
  lastName: 'Lovelace',
  attributes: { 'Appointment Time': 'Friday at 9 am', Persona: 'interested' },
  timeZone: 'America/New_York',
  answeredAt: '2026-03-06T19:30:00Z', // a Friday, 2:30 pm in New York
  direction: 'outbound',
};

test('blanks are filled from the call, or the sentence is left out', () => {
  const offered = offeredTimes(CALL)!;
  assert.deepEqual(
    offered.map((time) => [time.at, time.day, time.date, time.time]),
    [
      ['2026-03-09T14:00:00.000Z', 'Monday', 'March 9', '10 am'],
      ['2026-03-10T18:00:00.000Z', 'Tuesday', 'March 10', '2 pm'],
    ],
    "the next two weekdays, at 10 am and 2 pm in the callee's zone",
  );
  const nameless = { ...CALL, firstName: null };
  const cases: Array<[string, CallFacts, string | null]> = [
    ['{{greeting}}, {{firstName}}! This is Ava.', CALL, 'Good afternoon, Ada! This is Ava.'],
    ['{{greeting}}, {{firstName}}! This is Ava.', nameless, 'Good afternoon! This is Ava.'],
    ['Hi {{firstName}}, this is Ava.', nameless, 'Hi, this is Ava.'],
    ['This is Ava. May I speak with {{firstName}} {{lastName}}?', nameless, 'This is Ava.'],
    ['May I speak with {{firstName}} {{lastName}}?', CALL, 'May I speak with Ada Lovelace?'],
    ["It's booked for {{appointmentTime}}. See you!", CALL, "It's booked for Friday at 9 am. See you!"],
    ['It is {{amountDue}}. Thank you.', CALL, 'Thank you.'],
    ['I can offer [times]. Which suits you?', CALL, 'I can offer Monday at 10 am or Tuesday at 2 pm. Which suits you?'],
    ["You're booked on [day] at [time]. Bye!", CALL, 'Bye!'],
    ['Booked for {{kind}}.', { ...CALL, attributes: { kind: 'appointment' } }, 'Booked for appointment.'],
    [
      'You have a {{kind}} with us.',
      { ...CALL, attributes: { kind: 'appointment' } },
      'You have an appointment with us.',
    ],
    ['Only [this].', CALL, null],
    ['{{greeting}}!', { ...CALL, timeZone: null }, 'Good evening!'],
    ['{{greeting}}!', { firstName: 'Ada' }, 'Hello!'],
  ];
  for (const [text, call, expected] of cases) assert.equal(fillSpoken(text, { call, offered }), expected, text);
  assert.equal(
    fillSpoken("You're booked on [day] at [time].", { call: CALL, accepted: offered[1] }),
    "You're booked on Tuesday at 2 pm.",
  );
  assert.equal(
    fillSpoken("You're booked on [day] at [time].", {
      call: CALL,
      accepted: { ...offered[0], day: 'tomorrow' },
    }),
    "You're booked tomorrow at 10 am.",
  );
});

test("the agent's name and its business's come from its first message or personality", () => {
  const cases: Array<[Parameters<typeof identityOf>[0], string | null, string | null]> = [
    [
      { firstMessage: 'Hi, this is Ava, an AI assistant calling from Northwind Services. Do you have a minute?' },
      'Ava',
      'Northwind Services',
    ],
    [
      { firstMessage: "Thanks for calling Bright Smile Dental. I'm Mia, an AI assistant." },
      'Mia',
      'Bright Smile Dental',
    ],
    [{ soul: 'You are Sam, an AI assistant on the sales team at Acme & Sons.' }, 'Sam', 'Acme & Sons'],
    [{ firstMessage: 'Hello!' }, null, null],
  ];
  for (const [script, agentName, businessName] of cases)
    assert.deepEqual(identityOf(script), { agentName, businessName });
});

const booking: AgentScript = {
  firstMessage: '{{greeting}}, {{firstName}}! This is Ava from Acme Dental. Do you have a minute?',
  playbook: '1. "We have openings for a cleaning." "I can offer [times]. Which would suit you better?"',
  objections: '- "How much does it cost?": "Your first cleaning is free."',
  closers: [
    'appointment_booked: "You\'re booked on [day] at [time]. See you then!"',
    'rescheduled: "Done: you\'re moved to [day] at [time]. Goodbye!"',
    'not_interested: "No problem. Have a good day!"',
  ].join('\n'),
  call: CALL,
};

test('times: two concrete ones are offered, the one accepted is said in the closer and recorded on end_call', async () => {
  const { said, end } = await converse(['Yes, sure.', 'Tuesday works for me.', 'Great.'], booking);
  assert.deepEqual(said, [
    'Good afternoon, Ada! This is Ava from Acme Dental. Do you have a minute?',
    'We have openings for a cleaning. I can offer Monday at 10 am or Tuesday at 2 pm. Which would suit you better?',
    "You're booked on Tuesday at 2 pm. See you then!",
  ]);
  assert.deepEqual(end, {
    disposition: 'appointment_booked',
    reason: 'They accepted a time.',
    appointmentAt: '2026-03-10T18:00:00.000Z',
  });

  // A yes before any time was offered: two times first, then the closer with the one taken.
  const eager = await converse(['Sign me up!', 'Yes please.'], { ...booking, playbook: '' });
  assert.deepEqual(eager.said.slice(1), [
    'Wonderful. I can offer Monday at 10 am or Tuesday at 2 pm. Which would suit you better?',
    "You're booked on Monday at 10 am. See you then!",
  ]);

  // Moving an appointment: two new times, then the closer of a new time.
  const moving = await converse(["Sorry, I can't make it. Can we move it to another day?", 'Monday, please.'], booking);
  assert.equal(
    moving.said[1],
    'Of course. I can offer Monday at 10 am or Tuesday at 2 pm. Which would suit you better?',
  );
  assert.equal(moving.said[2], "Done: you're moved to Monday at 10 am. Goodbye!");
  assert.equal(moving.end?.disposition, 'rescheduled');
});

test('a request for a person: a transfer when there is a number, else the promise of a call back, recorded as such', async () => {
  const transferring = await collectChat(
    engine.chat({
      messages: [
        { role: 'assistant', content: 'Hi, this is Sam.' },
        { role: 'user', content: 'Can I speak to a real person?' },
      ],
      agent,
      tools: [END_CALL_TOOL, { name: 'transfer_call', parameters: { type: 'object' } }],
    }),
  );
  assert.equal(transferring.message.toolCalls[0]?.name, 'transfer_call');

  const { said, end } = await converse(['Yes.', 'Can I speak to a real person?', 'Yes, please.'], booking);
  assert.equal(
    said[2],
    "I'm an AI assistant, so I can't put you through on this call, but I can ask someone from Acme Dental to call you back. Would that be all right?",
  );
  assert.equal(said[3], 'Thank you. Someone from Acme Dental will call you back soon. Goodbye!');
  assert.deepEqual(end, {
    disposition: 'callback_requested',
    reason: 'They asked to speak with a person; someone will call them back.',
  });
});

test('the disposition follows their last decision, and a call back keeps the time they asked for', async () => {
  const changedMind = await converse(['Sign me up!', 'Hmm, actually, no thanks.'], booking);
  assert.equal(changedMind.end?.disposition, 'not_interested');
  assert.equal(changedMind.said.at(-1), 'No problem. Have a good day!', 'the refusal closer, and only it');

  const askedForPerson = await converse(['Yes.', 'Could I talk to a real person?', 'Hmm, bye.'], booking);
  assert.equal(askedForPerson.end?.disposition, 'callback_requested');

  const later = await converse(["I'm driving right now, call me back after 3 pm."], booking);
  assert.deepEqual(later.end, {
    disposition: 'callback_requested',
    reason: 'They asked to be called back later.',
    callbackWhen: 'after 3 pm',
  });
  assert.equal(later.said.at(-1), "Of course, I'll call you back after 3 pm. Thank you, goodbye!");
});
