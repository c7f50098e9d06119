/**
 * parley-playbook: the built-in, deterministic conversation engine. No model: it follows the agent's
 * prompt parts (see playbook-script.ts for how to write them) and the conversation so far, and answers
 * the next agent turn. Same input, same output. It calls the `end_call` tool to hang up.
 *
 * One turn, in order of precedence, on the other side's last words:
 *   nothing said yet       -> the first message (or the first step)
 *   an answering machine   -> the voicemail message, end_call(voicemail)
 *   "stop calling me"      -> an apology, end_call(do_not_call)
 *   "can I talk to a person" (or words of the agent's transfer rule), when transfer_call is offered
 *                          -> "let me transfer you", transfer_call
 *   a known objection      -> its answer, once; the same objection again ends the call (not_interested)
 *   "call me back later"   -> end_call(callback_requested)
 *   "bye"                  -> end_call(interested if they agreed earlier, else not_interested)
 *   a refusal              -> end_call(not_interested)
 *   a question             -> the FAQ answer it matches (or a promise to follow up), then the next step
 *   agreement              -> the next step; once the steps are done (or on a clear "sign me up"),
 *                             a closer and end_call(interested)
 *   anything else          -> the next step; once the steps are done, a check-in, then a goodbye
 * Silence (no new words) gets one "are you still there?", then end_call(callback_requested).
 */
import { ProviderError } from '../provider-error.js';
import {
  CHARS_PER_TOKEN,
  estimateInputTokens,
  estimateTokens,
  type CallDisposition,
  type ChatDelta,
  type ChatMessage,
  type ChatRequest,
  type LlmClient,
} from './chat.js';
import {
  bestPair,
  keywords,
  parseScript,
  scriptFromSystemPrompt,
  type AgentScript,
  type ParsedScript,
} from './playbook-script.js';

export const PLAYBOOK_ENGINE_NAME = 'parley-playbook';

/** A conversation this long is wound up politely rather than left to loop. */
const MAX_AGENT_TURNS = 30;

const LINES = {
  greeting: 'Hello!',
  stillThere: 'Are you still there?',
  doNotCall: "I'm sorry to have bothered you. I'll make sure you're not called again. Goodbye.",
  callback: "Of course, I'll call you back at a better time. Thank you, goodbye!",
  goodbye: 'Thank you for your time. Goodbye!',
  refusal: 'I understand. Thank you for your time, and have a good day. Goodbye!',
  followUp: "That's a good question. I'll make sure someone follows up with you on that.",
  checkIn: 'Does that sound like something you would be interested in?',
  wrapUp: "Wonderful, thank you! We'll follow up with the details. Goodbye!",
  wrapUpLong: "I'll let you go now. Thank you for your time, goodbye!",
  transfer: 'Of course. Let me transfer you to a colleague now, please hold.',
};

const VOICEMAIL =
  /leave (?:me |us )?(?:a|your) (?:message|name)|after the (?:tone|beep)|voice ?mail|mailbox|(?:not available|unable) to take your call|can(?:no|')?t (?:take|come to) (?:your|the) (?:call|phone)|record your message/;
const DO_NOT_CALL =
  /stop calling|(?:don'?t|do not|never) (?:ever )?call (?:me|us|here|this number)|remove (?:me|us|my number|this number)|take (?:me|us|my number) off|unsubscribe|(?:put|add) (?:me|us|my number) on (?:the|your) (?:do not call|do-not-call|dnc)|no more calls|lose (?:this|my) number/;
const CALLBACK =
  /call (?:me |us )?(?:back|later|tomorrow|another time|next week|in an hour)|(?:try|ring) (?:me |us )?(?:again )?later|(?:bad|busy) time|not a good time|in a meeting|(?:driving|busy) right now|can'?t talk (?:right )?now/;
const GOODBYE = /\b(?:bye|goodbye|hanging up|hang up)\b/;
const REFUSAL =
  /^(?:no|nope|nah)\b(?!,? (?:problem|worries))|not interested|no,? thanks|no,? thank you|don'?t want|not for (?:me|us)|we'?re (?:good|fine|all set)|i'?m (?:good|fine|all set)|i'?ll pass|pass on (?:it|this|that)/;
const WANTS_A_PERSON =
  /(?:speak|talk) (?:to|with) (?:a |an |the |your )?(?:real |actual |live )?(?:person|human|manager|supervisor|someone|somebody|representative|agent)|real person|human being/;
const STRONG_AGREEMENT =
  /sign (?:me|us) up|book (?:it|me|us|that)|i'?m interested|we'?re interested|let'?s do (?:it|that)|go ahead/;
const AGREEMENT =
  /^(?:yes|yeah|yep|yup|sure|ok|okay|alright|all right|absolutely|definitely|certainly|of course|sounds (?:good|great)|great|perfect|that works|why not|i'?d like that|please do)\b/;
const QUESTION_START =
  /^(?:(?:hmm+|um+|uh+|oh|ok|okay|so|well|and|but|sorry),?\s+)*(?:what|who|whom|whose|which|when|where|why|how|is|are|do|does|did|can|could|would|will|should|may|have|has)\b/;

type Decision = { say: string; end?: { disposition: CallDisposition; reason: string }; transfer?: { reason: string } };

/** Whether someone asks not to be called again ("stop calling me", "take me off your list"). */
export function asksNotToBeCalled(text: string): boolean {
  return DO_NOT_CALL.test(normalize(text));
}

function normalize(text: string): string {
  return text.toLowerCase().replace(/[’‘]/g, "'").replace(/\s+/g, ' ').trim();
}

function conversation(messages: readonly ChatMessage[]) {
  const agentTurns = messages.filter((m) => m.role === 'assistant').map((m) => normalize(m.content ?? ''));
  const last = messages.at(-1);
  const lastWords = last?.role === 'user' ? normalize(last.content) : '';
  const heardSinceAgent = last?.role === 'user' && lastWords !== '';
  const theirTurns = messages.flatMap((m) => (m.role === 'user' ? [normalize(m.content)] : []));
  return { agentTurns, lastWords, heardSinceAgent, theirTurns };
}

function decide(script: ParsedScript, messages: readonly ChatMessage[], mayTransfer: boolean): Decision {
  const { agentTurns, lastWords, heardSinceAgent, theirTurns } = conversation(messages);
  const said = (line: string) => {
    const wanted = normalize(line);
    return agentTurns.some((turn) => turn.includes(wanted));
  };
  let lastStep = -1;
  script.steps.forEach((step, index) => {
    if (said(step)) lastStep = index;
  });
  const nextStep = script.steps[lastStep + 1];
  const agreedEarlier = theirTurns.slice(0, -1).some((turn) => AGREEMENT.test(turn) || STRONG_AGREEMENT.test(turn));
  const close = (): Decision => {
    const closer = script.closers.find((line) => !said(line));
    return { say: closer ?? LINES.wrapUp, end: { disposition: 'interested', reason: 'They agreed.' } };
  };

  if (!heardSinceAgent) {
    if (agentTurns.length === 0) return { say: script.firstMessage || script.steps[0] || LINES.greeting };
    if (agentTurns.at(-1) !== normalize(LINES.stillThere)) return { say: LINES.stillThere };
    return { say: LINES.goodbye, end: { disposition: 'callback_requested', reason: 'No answer from the other side.' } };
  }
  if (VOICEMAIL.test(lastWords)) {
    return {
      say: script.voicemailMessage,
      end: { disposition: 'voicemail', reason: 'An answering machine picked up.' },
    };
  }
  if (DO_NOT_CALL.test(lastWords)) {
    return { say: LINES.doNotCall, end: { disposition: 'do_not_call', reason: 'They asked not to be called again.' } };
  }
  // They spoke first (the agent waits for them): the opening still comes first.
  if (agentTurns.length === 0) return { say: script.firstMessage || nextStep || LINES.greeting };
  if (mayTransfer && script.transferKeys.size > 0) {
    let overlap = 0;
    for (const key of keywords(lastWords)) if (script.transferKeys.has(key)) overlap++;
    if (WANTS_A_PERSON.test(lastWords) || overlap >= 2)
      return { say: LINES.transfer, transfer: { reason: 'They asked for a person.' } };
  }
  if (agentTurns.length >= MAX_AGENT_TURNS) {
    return {
      say: LINES.wrapUpLong,
      end: { disposition: 'not_interested', reason: 'The conversation ran long without a decision.' },
    };
  }

  const words = keywords(lastWords);
  const objection = bestPair(script.objections, words, 2);
  if (objection) {
    if (!said(objection.pair.answer)) return { say: objection.pair.answer };
    return {
      say: LINES.refusal,
      end: { disposition: 'not_interested', reason: 'They raised the same objection again.' },
    };
  }
  if (CALLBACK.test(lastWords)) {
    return {
      say: LINES.callback,
      end: { disposition: 'callback_requested', reason: 'They asked to be called back later.' },
    };
  }
  if (GOODBYE.test(lastWords)) {
    return {
      say: LINES.goodbye,
      end: agreedEarlier
        ? { disposition: 'interested', reason: 'They agreed, then said goodbye.' }
        : { disposition: 'not_interested', reason: 'They said goodbye.' },
    };
  }
  if (REFUSAL.test(lastWords)) {
    return { say: LINES.refusal, end: { disposition: 'not_interested', reason: 'They declined.' } };
  }

  // The last sentence decides: "Hello? Yes, speaking." is an answer, not a question.
  const lastSentence = lastWords.match(/[^.!?]+[.!?]*\s*$/)?.[0].trim() ?? lastWords;
  const isQuestion = words.size > 0 && (lastSentence.endsWith('?') || QUESTION_START.test(lastSentence));
  const faq = bestPair(script.faq, words, isQuestion ? 1 : 2);
  if (isQuestion || faq) {
    const answer = faq?.pair.answer ?? LINES.followUp;
    return { say: nextStep ? `${answer} ${nextStep}` : answer };
  }

  if (STRONG_AGREEMENT.test(lastWords)) return close();
  if (AGREEMENT.test(lastWords)) return nextStep ? { say: nextStep } : close();
  if (nextStep) return { say: nextStep };
  if (!said(LINES.checkIn)) return { say: LINES.checkIn };
  return { say: LINES.goodbye, end: { disposition: 'not_interested', reason: 'No interest shown after the pitch.' } };
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
      toolArguments = JSON.stringify({ disposition: decision.end.disposition, reason: decision.end.reason });
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
    const scriptText = request.agent ? Object.values(request.agent).filter(Boolean).join('\n') : '';
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
