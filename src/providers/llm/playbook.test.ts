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
import { keywords, parseScript, scriptFromSystemPrompt } from './playbook-script.js';

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
    'Am I speaking with the person who handles appointments?',
    'We have openings next week for a cleaning.',
    'Would Tuesday or Thursday work better for you?',
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
    'Perfect, I have you down for next week. You will get a text confirmation. Goodbye!',
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
  assert.deepEqual(said, [
    agent.firstMessage,
    'Am I speaking with the person who handles appointments?',
    'We have openings next week for a cleaning.',
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
  assert.equal(first.said[1], 'Your first cleaning is covered by most insurance plans, so it usually costs nothing.');
  assert.equal(first.said[2], "That's great; many of our patients keep theirs and use us for evenings.");
  assert.equal(first.said[3], 'Am I speaking with the person who handles appointments?');
  assert.equal(first.end, null);

  const twice = await converse(["I'm not interested.", "Like I said, I'm not interested."]);
  assert.equal(twice.said[1], 'I understand. Can I ask if it is the timing or the service?');
  assert.equal(twice.end?.disposition, 'not_interested');
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

test('after the last step, a neutral answer gets one check-in, then a polite goodbye', async () => {
  const { said, end } = await converse(['Yes.', 'Right.', 'Hmm.', 'I see.', 'Maybe.']);
  assert.deepEqual(said.slice(4), [
    'Does that sound like something you would be interested in?',
    'Thank you for your time. Goodbye!',
  ]);
  assert.equal(end?.disposition, 'not_interested');
});

test('a clear yes closes at once; the agent that waits opens after the callee speaks', async () => {
  const eager = await converse(['Sign me up!']);
  assert.equal(eager.said[1], 'Perfect, I have you down for next week. You will get a text confirmation. Goodbye!');
  assert.equal(eager.end?.disposition, 'interested');

  const waiting = await turn([{ role: 'user', content: 'Hello?' }], { ...agent, firstMessage: '' });
  assert.equal(waiting.say, 'Am I speaking with the person who handles appointments?');
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
  const text = 'Yes, we accept most major insurance plans. Am I speaking with the person who handles appointments?';
  assert.deepEqual(
    first.filter((d) => d.type === 'text').map((d) => (d as { text: string }).text),
    ['Yes, we accept most major insurance plans. ', 'Am I speaking with the person who handles appointments?'],
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
  assert.equal(
    viaPrompt.say,
    'There is free parking behind the building. Am I speaking with the person who handles appointments?',
  );
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
