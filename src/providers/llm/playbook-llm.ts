/**
 * parley-playbook: the built-in, deterministic conversation engine. No model: it follows the agent's prompt parts
 * (see playbook-script.ts for how to write them) and the conversation so far, and answers the next agent turn. Same
 * input, same output. It says only words meant for the other side (never a line written to a model), fills the
 * call's blanks or leaves the sentence out, and calls the `end_call` tool to hang up, with one closer chosen by how
 * the call went.
 *
 * One turn, in order of precedence, on the other side's last words:
 *   nothing said yet       -> the first message (or an introduction and the first step)
 *   an answering machine   -> the voicemail message, end_call(voicemail)
 *   "stop calling me"      -> an apology, end_call(do_not_call)
 *   their greeting         -> the opening (the callee speaks first on an outbound call)
 *   "are you a robot?"     -> that it is an AI assistant, then the next step
 *   "can I talk to a person" (or words of the agent's transfer rule)
 *                          -> with transfer_call offered: "let me transfer you", transfer_call; else that someone
 *                             will call back, and on their yes end_call(callback_requested)
 *   a known objection      -> its answer, once; the same objection again ends the call (declined)
 *   "call me back later"   -> that the agent will call back when they said, end_call(callback_requested)
 *   "can we move it"       -> two concrete times
 *   "bye"                  -> the closer of their last decision (a yes, a no, a callback), end_call with it
 *   a refusal              -> the refusal closer, end_call(not_interested or the closer's code)
 *   a question             -> the FAQ answer it matches (or a promise to follow up), then the next step
 *   a time offered, then a yes or a named time
 *                          -> that time is accepted; the next step, or the closer with the time
 *   agreement              -> the next step; once the steps are done (or on a clear "sign me up"), the closer of a
 *                             yes (offering times first when it books one) and end_call(interested or its code)
 *   anything else          -> the next step; once the steps are done, a check-in, then a goodbye
 * Silence (no new words) gets one "are you still there?", then end_call(callback_requested).
 */
import { ProviderError } from '../provider-error.js';
import {
  CHARS_PER_TOKEN,
  estimateInputTokens,
  estimateTokens,
  type ChatDelta,
  type ChatMessage,
  type ChatRequest,
  type LlmClient,
} from './chat.js';
import {
  bestPair,
  fillSpoken,
  keywords,
  offeredTimes,
  parseScript,
  scriptFromSystemPrompt,
  sentencesOf,
  spokenTime,
  timeOfDayGreeting,
  type AgentScript,
  type Closer,
  type FillContext,
  type OfferedTime,
  type Outcome,
  type ParsedScript,
  type Step,
} from './playbook-script.js';

export const PLAYBOOK_ENGINE_NAME = 'parley-playbook';

/** A conversation this long is wound up politely rather than left to loop. */
const MAX_AGENT_TURNS = 30;

const LINES = {
  greeting: 'Hello!',
  stillThere: 'Are you still there?',
  doNotCall: "I'm sorry to have bothered you. I'll make sure you're not called again. Goodbye.",
  goodbye: 'Thank you for your time. Goodbye!',
  refusal: 'I understand. Thank you for your time, and have a good day. Goodbye!',
  checkIn: 'Is there anything else I can help you with?',
  wrapUp: "Wonderful, thank you! We'll follow up with the details. Goodbye!",
  wrapUpLong: "I'll let you go now. Thank you for your time, goodbye!",
  transfer: 'Of course. Let me transfer you to a colleague now, please hold.',
  offerTimes: 'I can offer [times]. Which would suit you better?',
  askTime: 'What day and time would suit you best?',
  checkTime: 'Is now a good time for a quick chat?',
};
const team = (business: string | null) => (business ? `someone from ${business}` : 'someone from our team');
const followUp = (business: string | null) =>
  `That's a good question. I'll make sure ${team(business)} follows up with you on that.`;
/** Said when they ask for a person and there is nobody to transfer to: the honest promise, then a question. */
const personOffer = (business: string | null) =>
  `I'm an AI assistant, so I can't put you through on this call, but I can ask ${team(business)} to call you back. Would that be all right?`;
const PERSON_OFFER_MARK = "so i can't put you through on this call";
const personClose = (business: string | null) =>
  `Thank you. ${capitalize(team(business))} will call you back soon. Goodbye!`;
const callbackLine = (when: string | null) =>
  `Of course, I'll call you back ${when ?? 'at a better time'}. Thank you, goodbye!`;

const VOICEMAIL =
  /leave (?:me |us )?(?:a|your) (?:message|name)|after the (?:tone|beep)|voice ?mail|mailbox|(?:not available|unable) to take your call|can(?:no|')?t (?:take|come to) (?:your|the) (?:call|phone)|record your message/;
const DO_NOT_CALL =
  /stop calling|(?:don'?t|do not|never) (?:ever )?call (?:me|us|here|this number)|remove (?:me|us|my number|this number)|take (?:me|us|my number) off|unsubscribe|(?:put|add) (?:me|us|my number) on (?:the|your) (?:do not call|do-not-call|dnc)|no more calls|lose (?:this|my) number/;
const CALLBACK =
  /call (?:me |us )?(?:back|later|tomorrow|another time|next week|in an hour)|(?:try|ring) (?:me |us )?(?:again )?later|(?:bad|busy) time|not a good time|in a meeting|(?:driving|busy) right now|can'?t talk (?:right )?now/;
const WHEN =
  /\b(later today|this (?:morning|afternoon|evening)|tomorrow(?: (?:morning|afternoon|evening))?|next week|in (?:an|one|two|a couple of) hours?|(?:on )?(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)(?: (?:morning|afternoon|evening))?|(?:after|at|around|before) \d{1,2}(?::\d\d)?(?: ?[ap]\.?m\.?)?)\b/;
const RESCHEDULE =
  /\breschedule\b|\bmove (?:it|the appointment|my appointment)\b|(?:another|a different) (?:day|time|date)|can'?t make it|won'?t make it/;
const GOODBYE = /\b(?:bye|goodbye|hanging up|hang up)\b/;
const REFUSAL =
  /^(?:no|nope|nah)\b(?!,? (?:problem|worries))|not interested|no,? thanks|no,? thank you|don'?t want|not for (?:me|us)|we'?re (?:good|fine|all set)|i'?m (?:good|fine|all set)|i'?ll pass|pass on (?:it|this|that)/;
const WANTS_A_PERSON =
  /(?:speak|talk) (?:to|with) (?:a |an |the |your )?(?:real |actual |live )?(?:person|human|manager|supervisor|someone|somebody|representative|agent)|real person|human being/;
const ARE_YOU_AI =
  /\bare you (?:a |an )?(?:robot|machine|recording|real|human|person|ai|bot|computer)\b|\b(?:am i|i'?m) (?:talking|speaking) (?:to|with) (?:a |an )?(?:robot|machine|computer|bot|ai|recording)\b/;
const WHO_IS_THIS =
  /\bwho (?:is|'?s) (?:this|calling|that)\b|\bwho are you\b|\bwhat(?:'s| is) (?:this|it) (?:about|regarding)\b/;
const STRONG_AGREEMENT =
  /sign (?:me|us) up|book (?:it|me|us|that)|i'?m interested|we'?re interested|let'?s do (?:it|that)|go ahead/;
const AGREEMENT =
  /^(?:yes|yeah|yep|yup|sure|ok|okay|alright|all right|absolutely|definitely|certainly|of course|sounds (?:good|great)|great|perfect|that works|why not|i'?d like that|please do)\b/;
const QUESTION_START =
  /^(?:(?:hmm+|um+|uh+|oh|ok|okay|so|well|and|but|sorry),?\s+)*(?:what|who|whom|whose|which|when|where|why|how|is|are|do|does|did|can|could|would|will|should|may|have|has)\b/;
const FAREWELL =
  /\b(?:bye|goodbye|have a (?:good|great|nice|lovely) (?:day|evening|afternoon|one)|take care|see you)\b/i;

const DEFAULT_CODES: Record<Outcome | 'person', string> = {
  agreed: 'interested',
  rescheduled: 'interested',
  declined: 'not_interested',
  callback: 'callback_requested',
  person: 'callback_requested',
};

interface EndCall {
  disposition: string;
  reason: string;
  /** The time the callee accepted (ISO 8601), when the call booked one. */
  appointmentAt?: string;
  /** When they asked to be called back, in their words ("tomorrow", "after 3"). */
  callbackWhen?: string;
}
type Decision = { say: string; end?: EndCall; transfer?: { reason: string } };

/** Whether someone asks not to be called again ("stop calling me", "take me off your list"). */
export function asksNotToBeCalled(text: string): boolean {
  return DO_NOT_CALL.test(normalize(text));
}

function normalize(text: string): string {
  return text.toLowerCase().replace(/[’‘]/g, "'").replace(/\s+/g, ' ').trim();
}

const capitalize = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);
const isQuestion = (text: string) => {
  const last = text.match(/[^.!?]+[.!?]*\s*$/)?.[0].trim() ?? text;
  return last.endsWith('?') || QUESTION_START.test(last);
};
const agrees = (words: string) => AGREEMENT.test(words) || STRONG_AGREEMENT.test(words);

interface HeardTurn {
  speaker: 'agent' | 'them';
  /** Normalized: lower case, straight quotes, single spaces. */
  words: string;
  text: string;
}

/** The conversation as the engine reads it: who said what, in order. */
function transcriptOf(messages: readonly ChatMessage[]) {
  const turns: HeardTurn[] = messages.flatMap((m): HeardTurn[] =>
    m.role === 'assistant'
      ? [{ speaker: 'agent', words: normalize(m.content ?? ''), text: (m.content ?? '').trim() }]
      : m.role === 'user'
        ? [{ speaker: 'them', words: normalize(m.content), text: m.content.trim() }]
        : [],
  );
  const last = turns.at(-1);
  return {
    turns,
    agentTurns: turns.filter((t) => t.speaker === 'agent').map((t) => t.words),
    lastWords: last?.speaker === 'them' ? last.words : '',
    heardSinceAgent: last?.speaker === 'them' && last.words !== '',
  };
}

/**
 * The time the callee accepted: their first answer after the turn that offered two times that names one or says yes
 * (a yes takes the first), unless that yes answers another offer (a person calling back).
 */
function acceptedTime(
  turns: readonly HeardTurn[],
  offered: readonly [OfferedTime, OfferedTime] | null,
): { time: OfferedTime; turn: number } | null {
  if (!offered) return null;
  const [first, second] = offered;
  const offer = [normalize(spokenTime(first)), normalize(spokenTime(second))];
  const offeredAt = turns.findIndex(
    (turn) => turn.speaker === 'agent' && offer.every((time) => turn.words.includes(time)),
  );
  if (offeredAt < 0) return null;
  const names = (time: OfferedTime, words: string) =>
    words.includes(time.day.toLowerCase()) ||
    words.includes(time.time) ||
    (time === second && /\b(?:second|latter|later one|afternoon)\b/.test(words)) ||
    (time === first && /\b(?:first|former|morning)\b/.test(words));
  for (let index = offeredAt + 1; index < turns.length; index++) {
    const turn = turns[index]!;
    if (turn.speaker !== 'them') continue;
    if (names(second, turn.words)) return { time: second, turn: index };
    if (names(first, turn.words)) return { time: first, turn: index };
    const before = turns[index - 1]?.words ?? '';
    if (agrees(turn.words) && !before.includes(PERSON_OFFER_MARK) && !GOODBYE.test(turn.words))
      return { time: first, turn: index };
    if (REFUSAL.test(turn.words) || WANTS_A_PERSON.test(turn.words)) return null;
  }
  return null;
}

function decide(script: ParsedScript, messages: readonly ChatMessage[], mayTransfer: boolean): Decision {
  const { turns, agentTurns, lastWords, heardSinceAgent } = transcriptOf(messages);
  const { identity, call } = script;
  const business = identity.businessName;
  const said = (line: string) => {
    const wanted = normalize(line);
    return agentTurns.some((turn) => turn.includes(wanted));
  };
  const offered = offeredTimes(call);
  const accepted = acceptedTime(turns, offered);
  const context: FillContext = { call, offered, accepted: accepted?.time ?? null };
  const fill = (text: string) => fillSpoken(text, context);
  const lastAgentWords = agentTurns.at(-1) ?? '';
  const offeredJustNow = accepted?.turn === turns.length - 1;

  const stepText = (step: Step): string | null => {
    switch (step.kind) {
      case 'say':
        return fill(step.text);
      case 'intro':
        return agentTurns.length ? null : introduction();
      case 'check_time':
        return agentTurns.some((turn) => turn.includes('?')) ? null : LINES.checkTime;
      case 'offer_times':
        return offered ? fill(LINES.offerTimes) : LINES.askTime;
      case 'read_back':
        return accepted ? `So that's ${spokenTime(accepted.time)}.` : null;
      default:
        return null;
    }
  };
  const steps = script.steps.map(stepText);
  let lastStep = -1;
  steps.forEach((text, index) => {
    if (text && said(text)) lastStep = index;
  });
  /** The next steps to say: statements run on until a question (at most two steps). */
  const nextSteps = (): string | null => {
    const chosen: string[] = [];
    for (let i = lastStep + 1; i < steps.length && chosen.length < 2; i++) {
      const text = steps[i];
      if (!text || said(text)) continue;
      chosen.push(text);
      if (text.trim().endsWith('?')) break;
    }
    return chosen.length ? chosen.join(' ') : null;
  };
  /** The question the agent asked last, when they answered it with a question of their own: asked again, once. */
  const pendingQuestion = (): string | null => {
    const lastAgent = [...turns].reverse().find((turn) => turn.speaker === 'agent');
    const said = lastAgent ? sentencesOf(lastAgent.text) : [];
    const last = said.at(-1);
    if (!last?.endsWith('?') || last === LINES.checkIn) return null;
    // "Which would suit you better?" needs the offer before it.
    const question = /^(?:which|that|this|it)\b/i.test(last) && said.length > 1 ? said.slice(-2).join(' ') : last;
    const times = agentTurns.filter((turn) => turn.includes(normalize(question))).length;
    return times < 2 ? question : null;
  };
  /** An answer to their question, then the question still open, or the next step. */
  const withNext = (answer: string) => {
    if (answer.trim().endsWith('?')) return answer;
    const next = pendingQuestion() ?? nextSteps();
    return next ? `${answer} ${next}` : answer;
  };

  function introduction(): string {
    const name = call.firstName?.trim();
    const who = identity.agentName ? `${identity.agentName}, an AI assistant` : 'an AI assistant';
    if (call.direction === 'inbound')
      return `Thank you for calling${business ? ` ${business}` : ''}. This is ${who}. How can I help you today?`;
    const from = business ? ` calling from ${business}` : '';
    return `${timeOfDayGreeting(call)}${name ? `, ${name}. This` : ', this'} is ${who}${from}.`;
  }
  function opening(): string {
    const first = script.firstMessage ? fill(script.firstMessage) : null;
    if (first) return first;
    const intro = introduction();
    if (intro.endsWith('?')) return intro;
    const firstStep = steps.find((text, i) => text && script.steps[i]!.kind !== 'intro');
    const checkTime = script.steps.some((step) => step.kind === 'check_time');
    return `${intro} ${checkTime ? LINES.checkTime : (firstStep ?? LINES.checkTime)}`;
  }

  const closerFor = (outcome: Outcome): Closer | undefined =>
    script.closers.find((closer) => closer.outcome === outcome && !said(closer.say)) ??
    (outcome === 'rescheduled' ? script.closers.find((c) => c.outcome === 'agreed' && !said(c.say)) : undefined);
  const needsTime = (text: string) => /\[(?:day|date|time)\]/i.test(text);
  const farewell = (text: string) => (FAREWELL.test(text) ? text : `${text} Goodbye!`);

  /** The one closer of the call, for how it went, and end_call with its disposition. */
  function close(outcome: Outcome | 'person', reason: string): Decision {
    if (outcome === 'person') return { say: personClose(business), end: { disposition: DEFAULT_CODES.person, reason } };
    const closer = closerFor(outcome);
    if (outcome === 'callback') {
      const when = WHEN.exec(lastWords)?.[1] ?? null;
      const say = closer ? fill(closer.say) : null;
      return {
        say: say ? farewell(say) : callbackLine(when),
        end: {
          disposition: closer?.code ?? DEFAULT_CODES.callback,
          reason,
          ...(when ? { callbackWhen: when } : {}),
        },
      };
    }
    if ((outcome === 'agreed' || outcome === 'rescheduled') && closer && needsTime(closer.say) && !accepted) {
      // A yes that books a time: offer two before closing (said once; a model would ask the same).
      const offer = offered ? fill(LINES.offerTimes) : LINES.askTime;
      if (offer && !said(offer)) return { say: `Wonderful. ${offer}` };
    }
    // A closer that books a time nobody accepted would confirm nothing: the plain wrap-up instead.
    const words = closer && !(needsTime(closer.say) && !accepted) ? fill(closer.say) : null;
    const fallback = outcome === 'declined' ? LINES.refusal : LINES.wrapUp;
    const bookedAt = accepted && outcome !== 'declined' ? { appointmentAt: accepted.time.at } : {};
    return {
      say: words ? farewell(words) : fallback,
      end: { disposition: closer?.code ?? DEFAULT_CODES[outcome], reason, ...bookedAt },
    };
  }

  /** Their last decision before these words: a yes, a no, a callback or a person, else none. */
  function lastDecision(): Outcome | 'person' | null {
    for (let i = turns.length - 2; i >= 0; i--) {
      const turn = turns[i]!;
      if (turn.speaker !== 'them') continue;
      const before = turns[i - 1]?.words ?? '';
      if (WANTS_A_PERSON.test(turn.words)) return 'person';
      if (CALLBACK.test(turn.words)) return 'callback';
      if (REFUSAL.test(turn.words)) return 'declined';
      // A yes to the opening ("do you have a minute?") is not a decision.
      if (agrees(turn.words) && before !== agentTurns[0])
        return before.includes(PERSON_OFFER_MARK) ? 'person' : 'agreed';
    }
    return null;
  }
  const closeByLastDecision = (reason: string, otherwise: string) => {
    const decision = lastDecision();
    return decision ? close(decision, reason) : close('declined', otherwise);
  };

  if (!heardSinceAgent) {
    if (agentTurns.length === 0) return { say: opening() };
    if (lastAgentWords !== normalize(LINES.stillThere)) return { say: LINES.stillThere };
    return { say: LINES.goodbye, end: { disposition: 'callback_requested', reason: 'No answer from the other side.' } };
  }
  if (VOICEMAIL.test(lastWords)) {
    return {
      say: fill(script.voicemailMessage) ?? '',
      end: { disposition: 'voicemail', reason: 'An answering machine picked up.' },
    };
  }
  if (DO_NOT_CALL.test(lastWords)) {
    return { say: LINES.doNotCall, end: { disposition: 'do_not_call', reason: 'They asked not to be called again.' } };
  }
  // They spoke first (the callee greets when picking up): the opening comes now, and answers "who is this?".
  if (agentTurns.length === 0) return { say: opening() };

  const words = keywords(lastWords);
  const question = words.size > 0 && isQuestion(lastWords);
  if (ARE_YOU_AI.test(lastWords)) {
    const faq = bestPair(script.faq, words, 2);
    const answer = faq ? fill(faq.pair.answer) : null;
    return {
      say: withNext(answer ?? `Yes, I'm an AI assistant${business ? ` for ${business}` : ''}.`),
    };
  }
  let overlap = 0;
  for (const key of words) if (script.transferKeys.has(key)) overlap++;
  if (WANTS_A_PERSON.test(lastWords) || (mayTransfer && overlap >= 2)) {
    if (mayTransfer) return { say: LINES.transfer, transfer: { reason: 'They asked for a person.' } };
    if (!lastAgentWords.includes(PERSON_OFFER_MARK)) return { say: personOffer(business) };
    return close('person', 'They asked to speak with a person; someone will call them back.');
  }
  if (agentTurns.length >= MAX_AGENT_TURNS) {
    const decided = lastDecision();
    const ending = close(decided ?? 'declined', 'The conversation ran long.');
    return { say: LINES.wrapUpLong, ...(ending.end ? { end: ending.end } : {}) };
  }

  if (CALLBACK.test(lastWords)) return close('callback', 'They asked to be called back later.');
  const objection = bestPair(script.objections, words, 2);
  if (objection) {
    const answer = fill(objection.pair.answer);
    if (answer && !said(answer)) return { say: withNext(answer) };
    if (answer) return close('declined', 'They raised the same objection again.');
  }
  if (RESCHEDULE.test(lastWords)) {
    const offer = offered ? fill(LINES.offerTimes) : LINES.askTime;
    if (offer && !said(offer)) return { say: `Of course. ${offer}` };
  }
  if (GOODBYE.test(lastWords)) {
    if (lastAgentWords.includes(PERSON_OFFER_MARK)) return close('person', 'They asked to speak with a person.');
    return closeByLastDecision('They said goodbye after deciding.', 'They said goodbye without a decision.');
  }
  if (REFUSAL.test(lastWords)) {
    if (lastAgentWords.includes(PERSON_OFFER_MARK))
      return close('declined', 'They declined a call back from a person.');
    return close('declined', 'They declined.');
  }

  if (question) {
    const faq = bestPair(script.faq, words, 1);
    const known = faq ? fill(faq.pair.answer) : null;
    const who = WHO_IS_THIS.test(lastWords) ? introduction() : null;
    return { say: withNext(known ?? who ?? followUp(business)) };
  }
  const faq = bestPair(script.faq, words, 2);
  const faqAnswer = faq ? fill(faq.pair.answer) : null;
  if (faqAnswer && !said(faqAnswer)) return { say: withNext(faqAnswer) };

  if (lastAgentWords.includes(PERSON_OFFER_MARK) && agrees(lastWords))
    return close('person', 'They asked to speak with a person; someone will call them back.');
  const rescheduling = accepted && /\bof course\. i can offer\b/.test(lastAgentWords);
  if (offeredJustNow) {
    if (rescheduling) return close('rescheduled', 'They moved to a new time.');
    if (STRONG_AGREEMENT.test(lastWords)) return close('agreed', 'They accepted a time.');
    const next = nextSteps();
    return next ? { say: next } : close('agreed', 'They accepted a time.');
  }
  if (STRONG_AGREEMENT.test(lastWords)) return close('agreed', 'They agreed.');
  const next = nextSteps();
  if (AGREEMENT.test(lastWords)) return next ? { say: next } : close('agreed', 'They agreed.');
  if (next) return { say: next };
  const pending = pendingQuestion();
  if (pending) return { say: `I understand. ${pending}` };
  if (!said(LINES.checkIn)) return { say: LINES.checkIn };
  return closeByLastDecision('The steps are done; they had decided.', 'No interest shown after the pitch.');
}

/** Sentences, so the turn streams in pieces like a model's would. */
function sentences(text: string): string[] {
  return text.match(/[^.!?]+[.!?]+["”)]*\s*|[^.!?]+$/g) ?? [];
}

function scriptOf(request: ChatRequest): AgentScript {
  if (request.agent) return request.agent;
  const system = request.messages.find((m) => m.role === 'system');
  return system?.content ? scriptFromSystemPrompt(system.content) : {};
}

export function createPlaybookLlm(): LlmClient {
  async function* chat(request: ChatRequest): AsyncGenerator<ChatDelta> {
    if (request.signal?.aborted)
      throw new ProviderError(PLAYBOOK_ENGINE_NAME, 'aborted', 'the turn was aborted by the caller');
    const mayTransfer = request.tools?.some((tool) => tool.name === 'transfer_call') ?? false;
    const decision = decide(parseScript(scriptOf(request)), request.messages, mayTransfer);
    const mayEndCall = !request.tools || request.tools.some((tool) => tool.name === 'end_call');

    let text = decision.say;
    let truncated = false;
    if (request.maxTokens !== undefined && estimateTokens(text) > request.maxTokens) {
      text = text.slice(0, request.maxTokens * CHARS_PER_TOKEN);
      truncated = true;
    }
    for (const piece of sentences(text)) yield { type: 'text', text: piece };

    let toolArguments = '';
    const turn = request.messages.filter((m) => m.role === 'assistant').length + 1;
    if (decision.end && mayEndCall && !truncated) {
      toolArguments = JSON.stringify(decision.end);
      yield { type: 'tool_call', index: 0, id: `end_call_${turn}`, name: 'end_call', arguments: toolArguments };
    } else if (decision.transfer && !truncated) {
      toolArguments = JSON.stringify({ reason: decision.transfer.reason });
      yield {
        type: 'tool_call',
        index: 0,
        id: `transfer_call_${turn}`,
        name: 'transfer_call',
        arguments: toolArguments,
      };
    }
    const scriptText = request.agent
      ? Object.values(request.agent)
          .filter((part): part is string => typeof part === 'string' && part !== '')
          .join('\n')
      : '';
    yield {
      type: 'done',
      usage: {
        inputTokens: estimateInputTokens(request.messages) + estimateTokens(scriptText),
        outputTokens: estimateTokens(text) + estimateTokens(toolArguments),
      },
      finishReason: truncated ? 'length' : toolArguments ? 'tool_calls' : 'stop',
    };
  }
  return { name: PLAYBOOK_ENGINE_NAME, chat };
}
