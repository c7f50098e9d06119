/**
 * Reads an agent's prompt parts into what the playbook engine can say: the steps in order, objections and FAQ lines
 * as trigger -> answer pairs, and the closers by outcome. Plain text in, plain data out. The engine speaks only words
 * meant for the other side: quoted words, or a plain sentence; a line written to a model ("Ask …", "If not, …") is
 * never said as it is.
 *
 * Writing parts the engine follows (each item on its own line; list markers like "1." or "-" are fine):
 *   playbook    one step per line. The quoted words ("…") are said; a line without quotes is said when it is a plain
 *               sentence, turned into a sentence when it is a known instruction (introduce yourself, ask if now is a
 *               good time, offer times, read the booking back, "ask whether/what/when …"), and skipped otherwise
 *   objections  `trigger -> answer`, `trigger: answer`, `If they say X, say Y`, or a `Q:`/`A:` pair of lines
 *   faq         the same forms, or `Question? Answer` on one line
 *   closers     one closing line per outcome, `label: "words"`; a label that is a disposition code
 *               (`appointment_booked: "…"`) is the call's disposition when that closer is said. Labels with no, not,
 *               declined, cancelled or otherwise close a refusal; rescheduled closes a new time; any other closes a yes
 * Blanks said on a call: {{firstName}} and {{lastName}} (the contact's; a missing first name is left out),
 * {{greeting}} (good morning, afternoon or evening in the callee's time zone), {{column}} (a column of the contact),
 * [times] (two concrete times inside the calling window), and [day], [date], [time] (the time the callee accepted).
 * A sentence whose blank cannot be filled is not said.
 */
import { addDays, instantOf, wallClock } from '../../lib/wall-clock.js';

/** What the engine knows of the call, to fill blanks and offer times; every field is optional. */
export interface CallFacts {
  firstName?: string | null;
  lastName?: string | null;
  /** The contact's extra columns, for {{column}} blanks. */
  attributes?: Record<string, string>;
  /** The callee's IANA time zone; times are offered and spoken in it (UTC when unknown). */
  timeZone?: string | null;
  /** When the call was answered (ISO 8601): the moment times are offered from. */
  answeredAt?: string | null;
  direction?: 'outbound' | 'inbound';
}

/** The prompt parts the engine reads; the same names as the agent's fields. */
export interface AgentScript {
  soul?: string | null;
  firstMessage?: string | null;
  mission?: string | null;
  playbook?: string | null;
  objections?: string | null;
  closers?: string | null;
  faq?: string | null;
  notes?: string | null;
  /** Said when an answering machine picks up; without it the call ends without a message. */
  voicemailMessage?: string | null;
  /** When to hand the call to a person (the agent's transfer setting); offered only with the transfer_call tool. */
  whenToTransfer?: string | null;
  /** The call this script is spoken on. */
  call?: CallFacts | null;
}

export interface ScriptPair {
  /** Keywords of the trigger (see keywords()). */
  keys: Set<string>;
  answer: string;
}

/** How a call ended, as a closer's label or the engine's judgement names it. */
export type Outcome = 'agreed' | 'declined' | 'rescheduled' | 'callback';

export interface Closer {
  outcome: Outcome;
  /** The disposition code the label names (`appointment_booked: "…"`), or null. */
  code: string | null;
  say: string;
}

/** A playbook step: words to say, or an instruction the engine turns into words when it knows how. */
export type Step =
  | { kind: 'say'; text: string }
  | { kind: 'intro' | 'check_time' | 'offer_times' | 'read_back' | 'skip'; text: null };

export interface Identity {
  agentName: string | null;
  businessName: string | null;
}

export interface ParsedScript {
  firstMessage: string;
  steps: Step[];
  objections: ScriptPair[];
  faq: ScriptPair[];
  closers: Closer[];
  voicemailMessage: string;
  /** Keywords of the transfer rule; empty when the agent never transfers. */
  transferKeys: Set<string>;
  identity: Identity;
  call: CallFacts;
}

// The headings assembleSystemPrompt puts above each part (agents module); a test keeps the two in step.
const SECTION_HEADINGS: Record<string, keyof AgentScript> = {
  personality: 'soul',
  mission: 'mission',
  playbook: 'playbook',
  'objection handling': 'objections',
  closing: 'closers',
  notes: 'notes',
  faq: 'faq',
};

/** The parts found under "## Heading" lines of an assembled system prompt. */
export function scriptFromSystemPrompt(prompt: string): AgentScript {
  const script: Record<string, string> = {};
  let current: keyof AgentScript | null = null;
  const lines: Partial<Record<keyof AgentScript, string[]>> = {};
  for (const line of prompt.split(/\r?\n/)) {
    const heading = /^##\s+(.+?)\s*$/.exec(line);
    if (heading) {
      current = SECTION_HEADINGS[heading[1]!.toLowerCase()] ?? null;
      continue;
    }
    if (current) (lines[current] ??= []).push(line);
  }
  for (const [part, text] of Object.entries(lines)) script[part] = text.join('\n').trim();
  return script as AgentScript;
}

const LIST_MARKER = /^\s*(?:[-*•]+|\d+[.)]|step\s*\d+\s*[:.)-]?)\s*/i;

function items(text: string | null | undefined): string[] {
  return (text ?? '')
    .split(/\r?\n/)
    .map((line) => line.replace(LIST_MARKER, '').trim())
    .filter(Boolean);
}

const QUOTED = /"([^"]+)"|“([^”]+)”/g;

function quotedParts(line: string): string[] {
  return [...line.matchAll(QUOTED)].map((match) => (match[1] ?? match[2]!).trim()).filter(Boolean);
}

/**
 * A line written to a model rather than to the other side: it starts with an instruction ("Ask …", "Greet …",
 * "If not, …", "Then end the call"), is a labelled instruction ("Budget: ask …"), or talks about the other side
 * ("their time", "the caller").
 */
const INSTRUCTION_START =
  /^(?:(?:then|and|also|first|next|finally|otherwise|always|briefly|politely|gently|kindly|else)[,:]?\s+)*(?:ask|greet|say|tell|offer|confirm|mention|explain|introduce|thank|recap|apologi[sz]e|verify|identify|answer|repeat|remind|state|give|take|walk|read|note|check|record|let them|end|close|open|listen|find|collect|book|use|make|try|wait|stay|follow|handle|summari[sz]e|welcome|route|transfer|pass|send|describe|share|acknowledge|congratulate|gather|qualify|probe|learn|discuss|invite|encourage|reassure|get|keep|never|only|do not|don't|avoid|be|if|when|once|before|after|unless|until|in (?:one|a) sentence|question \d+)\b/i;
const ABOUT_THE_OTHER_SIDE =
  /\b(?:they|them|their|theirs|themselves|the (?:person|caller|customer|lead|prospect|patient|contact|client|callee|homeowner|buyer|seller)(?:'s)?|end the call)\b/i;
const LABELLED = /^[A-Z][\w /-]{0,30}:\s|:\s+(?:ask|say|tell|give|offer|confirm|take|note|read)\b/i;
/** An answer line (objections, FAQ) is spoken unless it is plainly addressed to the model. */
const MODEL_DIRECTED =
  /^(?:(?:then|and|also|first|next|finally|otherwise|politely|briefly|gently)[,:]?\s+)*(?:ask|greet|say|tell|thank them|offer|confirm|mention|explain|introduce|recap|apologi[sz]e|verify|identify|repeat|remind|state|note|record|acknowledge|reassure|end|close|transfer|hang up|move on|do not|don't)\b|\b(?:them|the (?:caller|customer|lead|prospect|person|patient))\b|end the call/i;

export function isInstruction(text: string): boolean {
  const line = text.trim();
  return INSTRUCTION_START.test(line) || ABOUT_THE_OTHER_SIDE.test(line) || LABELLED.test(line);
}

/**
 * What to say for a line: its quoted parts if it quotes something, else the line itself unless it is written to the
 * model (`answer`: the looser test for objection and FAQ answers, which may start "If you…" or mention "they").
 */
export function spokenText(line: string, kind: 'line' | 'answer' = 'line'): string | null {
  const quoted = quotedParts(line);
  if (quoted.length) return quoted.join(' ');
  const plain = line.trim();
  if (!plain) return null;
  return (kind === 'answer' ? MODEL_DIRECTED.test(plain) : isInstruction(plain)) ? null : plain;
}

/** Instructions about the other side, said to them: "what they use" -> "what you use". */
const TO_SECOND_PERSON: Array<[RegExp, string]> = [
  [/\bthe (?:person|caller|customer|lead|prospect|patient|contact|client)'s\b/gi, 'your'],
  [/\bthe (?:person|caller|customer|lead|prospect|patient|contact|client)\b/gi, 'you'],
  [/\b(?:he or she|she or he)\b/gi, 'you'],
  [/\b(?:his or her|her or his)\b/gi, 'your'],
  [/\bthemselves\b/gi, 'yourself'],
  [/\btheirs\b/gi, 'yours'],
  [/\btheir\b/gi, 'your'],
  [/\bthem\b/gi, 'you'],
  [/\bthey\b/gi, 'you'],
  [/\byou (?:is)\b/gi, 'you are'],
  [/\byou (?:was)\b/gi, 'you were'],
  [/\byou has\b/gi, 'you have'],
  [/\byou does\b/gi, 'you do'],
];

function toSecondPerson(text: string): string {
  let result = text;
  for (const [pattern, replacement] of TO_SECOND_PERSON) result = result.replace(pattern, replacement);
  return result.replace(
    /\byou (wants|needs|hopes|likes|prefers|plans|uses|expects|thinks|knows)\b/gi,
    (_, verb: string) => `you ${verb.slice(0, -1)}`,
  );
}

const firstClause = (text: string) => text.split(/(?<=[.;?!])\s|\s+(?:if not|if so|and (?:then )?end|then)\b/i)[0]!;

/** An unquoted playbook line as a step. */
function stepOf(line: string): Step {
  const quoted = quotedParts(line);
  if (quoted.length) return { kind: 'say', text: quoted.join(' ') };
  const text = line.trim();
  if (!isInstruction(text)) return { kind: 'say', text };
  const lower = text.toLowerCase();
  if (
    /stop calling|be removed|not to be (?:contacted|called)|do[- ]not[- ]call|not receive calls|not to receive/.test(
      lower,
    )
  )
    return { kind: 'skip', text: null };
  if (/^(?:greet|introduce|say (?:that )?you are|say who you are|open)\b/.test(lower))
    return { kind: 'intro', text: null };
  if (
    /^(?:ask|check)\b.*\b(?:good (?:moment|time)|now is (?:a good|an? ok(?:ay)?)|permission|willing|have a (?:minute|moment)|a few (?:quick )?questions)\b/.test(
      lower,
    )
  )
    return { kind: 'check_time', text: null };
  if (/^(?:offer|propose|suggest|find)\b.*\b(?:slots|times|days|dates|options|a time)\b/.test(lower))
    return { kind: 'offer_times', text: null };
  if (/^(?:confirm|read|repeat)\b.*\b(?:date|time|day|booking|slot)\b/.test(lower))
    return { kind: 'read_back', text: null };
  // "Label: a question to them?" ("Timeline: when would they like a solution in place?")
  const labelled = /^[A-Z][\w /-]{0,30}:\s+(.+\?)$/.exec(text);
  if (
    labelled &&
    /^(?:what|when|where|which|who|why|how|is|are|do|does|did|can|could|would|will|have|has)\b/i.test(labelled[1]!)
  )
    return sayIfShort(capitalize(toSecondPerson(labelled[1]!)));
  const ask = /^ask (?:them |the \w+ )?((?:whether|if|what|when|where|which|who|why|how)\b.+)$/i.exec(text);
  if (ask) return sayIfShort(`May I ask ${toSecondPerson(firstClause(ask[1]!)).replace(/[.?!:,;]+$/, '')}?`);
  const about = /^ask (?:them |the \w+ )?about (.+)$/i.exec(text);
  if (about)
    return sayIfShort(`Could you tell me about ${toSecondPerson(firstClause(about[1]!)).replace(/[.?!:,;]+$/, '')}?`);
  const tell = /^tell (?:them|the \w+) (?:that )?(?!about\b)(.+)$/i.exec(text);
  if (tell) return sayIfShort(`${capitalize(toSecondPerson(firstClause(tell[1]!)).replace(/[.?!:,;]+$/, ''))}.`);
  return { kind: 'skip', text: null };
}

function sayIfShort(text: string): Step {
  return text.length <= 160 && !/\b(?:you are an ai|the call|end)\b/i.test(text)
    ? { kind: 'say', text }
    : { kind: 'skip', text: null };
}

const capitalize = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

const PAIR_PREFIX = /^(?:q|question|objection|if they say|they say|trigger)\s*[:.-]\s*/i;
const ANSWER_PREFIX = /^(?:a|answer|response|respond|reply|say)\s*[:.-]\s*/i;
const IF_THEY_SAY =
  /^if (?:they|the (?:lead|prospect|customer|caller|contact|person|patient))\s+(?:say|says|ask|asks|mention|mentions|object|objects)\s*(?:that\s*)?(.+?),\s*(?:then\s+)?(?:say|respond|answer|reply|tell them)(?:\s+with)?\s*:?\s*(.+)$/i;

function pair(trigger: string, answer: string): ScriptPair | null {
  const keys = keywords(trigger.replace(/["“”]/g, ''));
  const said = spokenText(answer.replace(ANSWER_PREFIX, ''), 'answer');
  return keys.size && said ? { keys, answer: said } : null;
}

/** trigger -> answer pairs from objection or FAQ text, in the forms listed at the top of this file. */
export function parsePairs(
  text: string | null | undefined,
  { questionSplit }: { questionSplit: boolean },
): ScriptPair[] {
  const lines = items(text);
  const pairs: ScriptPair[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const next = lines[i + 1];
    if (PAIR_PREFIX.test(line) && next && ANSWER_PREFIX.test(next)) {
      const found = pair(line.replace(PAIR_PREFIX, ''), next.replace(ANSWER_PREFIX, ''));
      if (found) pairs.push(found);
      i++;
      continue;
    }
    // A quoted trigger first ("How much is it?": "It's free."): the colon after the quote splits it.
    const quotedTrigger = /^(["“][^"”]+["”])\s*(?:->|=>|→|—|–|:)\s*(.+)$/.exec(line);
    const arrow = /^(.+?)\s*(?:->|=>|→|—|–)\s*(.+)$/.exec(line);
    const conditional = IF_THEY_SAY.exec(line);
    const question = questionSplit ? /^(.+?\?)\s+(.+)$/.exec(line) : null;
    const colon = /^(.+?):\s+(.+)$/.exec(line.replace(PAIR_PREFIX, ''));
    const match = quotedTrigger ?? arrow ?? conditional ?? question ?? colon;
    const found = match ? pair(match[1]!.replace(PAIR_PREFIX, ''), match[2]!) : null;
    if (found) pairs.push(found);
  }
  return pairs;
}

const CODE = /^[a-z][a-z0-9_]{0,63}$/;

function outcomeOf(label: string, words: string): Outcome {
  const text = label.toLowerCase().replace(/_/g, ' ');
  if (/\b(?:no|not|never|declin\w*|cancel\w*|otherwise|refus\w*|lost|unqualified|else|without)\b/.test(text))
    return 'declined';
  if (/\breschedul\w*|\bmoved?\b|\bnew (?:time|date)\b/.test(text)) return 'rescheduled';
  if (/\bcall ?back|\bcallback\b|\blater\b/.test(text)) return 'callback';
  if (!label && /\bcancel/i.test(words)) return 'declined';
  return 'agreed';
}

/**
 * The closers, one per quoted part: `label: "words"`, where the text before a quote is its label. Old-style lines
 * with several outcomes on one line ("For a good fit: "…" Otherwise: "…"") give one closer each.
 */
export function parseClosers(text: string | null | undefined): Closer[] {
  const closers: Closer[] = [];
  for (const line of items(text)) {
    const quotes = [...line.matchAll(QUOTED)];
    if (quotes.length === 0) {
      const plain = spokenText(line);
      if (plain) closers.push({ outcome: 'agreed', code: null, say: plain });
      continue;
    }
    let from = 0;
    let previous: Closer | null = null;
    for (const match of quotes) {
      const before = line
        .slice(from, match.index)
        .replace(/^[\s.,;)]+/, '')
        .trim();
      from = match.index! + match[0].length;
      const words = (match[1] ?? match[2]!).trim();
      // Two quotes with nothing but "and" or a space between are one closer said in two parts.
      if (previous && /^(?:and|then)?$/i.test(before)) {
        previous.say = `${previous.say} ${words}`;
        continue;
      }
      const label =
        /^(?:(?:for|if|when|on|after)\s+(?:a\s+|an\s+|the\s+)?)?(.{1,60}?)\s*[:–—-]?\s*$/i
          .exec(before)?.[1]
          ?.trim()
          .replace(/^or$/i, '')
          .replace(/[:.,]+$/, '') ?? '';
      previous = {
        outcome: outcomeOf(label, words),
        code: CODE.test(label) ? label : null,
        say: words,
      };
      closers.push(previous);
    }
  }
  return closers;
}

const NAME = "[A-Z][a-zA-Z'’-]+";
const BUSINESS = "[A-Z0-9][\\w&'’-]*(?:\\s+(?:[A-Z0-9&][\\w&'’-]*|of|and|the|&))*";

/** The agent's own name and its business's, as its first message or personality says them. */
export function identityOf(script: Pick<AgentScript, 'firstMessage' | 'soul'>): Identity {
  const texts = [script.firstMessage ?? '', script.soul ?? ''];
  let agentName: string | null = null;
  let businessName: string | null = null;
  for (const text of texts) {
    agentName ??=
      new RegExp(`\\b(?:this is|I'm|I am|my name is|You are|it's)\\s+(?!An?\\b|The\\b|AI\\b)(${NAME})\\b`).exec(
        text,
      )?.[1] ?? null;
    businessName ??=
      new RegExp(
        `\\b(?:calling from|calling for|for calling|on behalf of|from|for|at|of|with)\\s+(?!AI\\b|An?\\b|The\\b)(${BUSINESS})`,
      )
        .exec(text)?.[1]
        ?.replace(/['’]s$/, '')
        .replace(/[.,]+$/, '') ?? null;
  }
  return { agentName, businessName };
}

export function parseScript(script: AgentScript): ParsedScript {
  return {
    firstMessage: (script.firstMessage ?? '').trim(),
    steps: items(script.playbook).map(stepOf),
    objections: parsePairs(script.objections, { questionSplit: false }),
    faq: parsePairs(script.faq, { questionSplit: true }),
    closers: parseClosers(script.closers),
    voicemailMessage: (script.voicemailMessage ?? '').trim(),
    transferKeys: keywords(script.whenToTransfer ?? ''),
    identity: identityOf(script),
    call: script.call ?? {},
  };
}

/** A concrete time offered to the callee, in their time zone. */
export interface OfferedTime {
  /** The moment, ISO 8601 in UTC. */
  at: string;
  /** "tomorrow" or the weekday ("Thursday"). */
  day: string;
  /** "March 5" */
  date: string;
  /** "10 am" */
  time: string;
}

/** Offered times fall on weekdays, at these local hours: inside every calling window (8 am to 9 pm). */
const OFFERED_HOURS: readonly number[] = [10, 14];

const WEEKDAY_NAMES = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

function validZone(zone: string | null | undefined): string {
  if (!zone) return 'UTC';
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return zone;
  } catch {
    return 'UTC';
  }
}

/** Two times on the next two weekdays after the call (10 am, then 2 pm, local); null without the call's time. */
export function offeredTimes(call: CallFacts): [OfferedTime, OfferedTime] | null {
  if (!call.answeredAt) return null;
  const answered = new Date(call.answeredAt);
  if (Number.isNaN(answered.getTime())) return null;
  const zone = validZone(call.timeZone);
  const today = wallClock(zone, answered);
  const times: OfferedTime[] = [];
  for (let ahead = 1; times.length < OFFERED_HOURS.length && ahead < 10; ahead++) {
    const local = wallClock(zone, instantOf(zone, { ...addDays(today, ahead), hour: 12, minute: 0 }));
    if (local.weekday === 0 || local.weekday === 6) continue;
    const hour = OFFERED_HOURS[times.length]!;
    const at = instantOf(zone, { ...local, hour, minute: 0 });
    times.push({
      at: at.toISOString(),
      day: ahead === 1 ? 'tomorrow' : WEEKDAY_NAMES[local.weekday]!,
      date: new Intl.DateTimeFormat('en-US', { timeZone: zone, month: 'long', day: 'numeric' }).format(at),
      time: hour < 12 ? `${hour} am` : hour === 12 ? '12 pm' : `${hour - 12} pm`,
    });
  }
  return times.length === 2 ? [times[0]!, times[1]!] : null;
}

export const spokenTime = (time: OfferedTime) => `${time.day} at ${time.time}`;

/** "Good morning" (before noon), "Good afternoon" (before 6 pm) or "Good evening" in the callee's zone; else "Hello". */
export function timeOfDayGreeting(call: CallFacts): string {
  if (!call.answeredAt) return 'Hello';
  const at = new Date(call.answeredAt);
  if (Number.isNaN(at.getTime())) return 'Hello';
  const hour = wallClock(validZone(call.timeZone), at).hour;
  return hour < 12 ? 'Good morning' : hour < 18 ? 'Good afternoon' : 'Good evening';
}

export interface FillContext {
  call: CallFacts;
  /** The two times offered on this call, for [times]. */
  offered?: readonly [OfferedTime, OfferedTime] | null;
  /** The time the callee accepted, for [day], [date] and [time]. */
  accepted?: OfferedTime | null;
}

const squash = (key: string) => key.toLowerCase().replace(/[^a-z0-9]/g, '');

/** A value filled in at `offset` of `text` starts a sentence (or a quotation), so it starts with a capital. */
export function capitalizedAt(text: string, offset: number, value: string): string {
  const before = text.slice(0, offset);
  return /(?:^|[.!?]["”)]?\s+|(?:^|\s)["“])$/.test(before) ? capitalize(value) : value;
}

/** "a" before a filled blank reads "an" when the value starts with a vowel sound: "an Acme", "an appointment". */
export function articleBefore(article: string, value: string): string {
  const vowelSound = /^(?:[aio]|e(?!u)|u(?!ni|se|sa|su|ro|ti|k)|hour|honest)/i.test(value) && !/^one\b/i.test(value);
  return vowelSound ? `${article}n` : article;
}

/** Splits text into sentences, keeping closing quotes and brackets with their sentence. */
export function sentencesOf(text: string): string[] {
  return (
    text
      .match(/[^.!?]+(?:[.!?]+["”')\]]*|$)\s*/g)
      ?.map((s) => s.trim())
      .filter(Boolean) ?? []
  );
}

/**
 * The words with their blanks filled from the call; a sentence whose blank cannot be filled is left out, and null
 * comes back when nothing is left. A missing first name is simply not said ("Hi {{firstName}}," -> "Hi,").
 */
export function fillSpoken(text: string, context: FillContext): string | null {
  const { call, offered, accepted } = context;
  const firstName = call.firstName?.trim();
  // Without a first name, a greeting's "Hi {{firstName}}," reads "Hi,"; any other sentence with it is not said.
  let filled = firstName
    ? text.replace(/\{\{\s*first_?name\s*\}\}/gi, firstName)
    : text.replace(
        /(?:,\s*|(?<=\b(?:hi|hello|hey|dear|morning|afternoon|evening|\{\{\s*greeting\s*\}\}))\s+)\{\{\s*first_?name\s*\}\}(?=\s*[,.!?])/gi,
        '',
      );
  filled = filled.replace(/\{\{\s*greeting\s*\}\}/gi, timeOfDayGreeting(call));
  filled = filled.replace(
    /(\b[Aa] )?\{\{\s*([\w .-]+?)\s*\}\}/g,
    (whole, article: string | undefined, key: string, offset: number, text: string) => {
      const column = Object.entries(call.attributes ?? {}).find(([name]) => squash(name) === squash(key));
      const value = squash(key) === 'lastname' ? call.lastName?.trim() : column?.[1]?.trim();
      if (!value) return whole;
      return article ? `${articleBefore(article.trim(), value)} ${value}` : capitalizedAt(text, offset, value);
    },
  );
  if (offered)
    filled = filled.replace(/\[(?:times|slots)\]/gi, `${spokenTime(offered[0])} or ${spokenTime(offered[1])}`);
  if (accepted) {
    filled = filled
      .replace(/\bon \[day\]/gi, accepted.day === 'tomorrow' ? 'tomorrow' : `on ${accepted.day}`)
      .replace(/\[day\]/gi, accepted.day)
      .replace(/\[date\]/gi, accepted.date)
      .replace(/\[time\]/gi, accepted.time);
  }
  const kept = sentencesOf(filled)
    .filter((sentence) => !/\{\{[^}]*\}\}|\[[^\]]*\]/.test(sentence))
    .map((sentence) => sentence.replace(/^[,;\s]+/, ''));
  return kept.length ? kept.join(' ') : null;
}

const STOPWORDS = new Set(
  (
    'a an the i me my mine we us our you your yours he him his she her it its they them their this that these those ' +
    'is are was were be been being am do does did done have has had having to of in on at for with about as by from ' +
    'up out into over and or but so if then than just also too very really quite much many any some all each ' +
    'what which who whom whose how when where why can could would should will shall may might must ' +
    'there here now then again ever yes yeah yep ok okay oh um uh hmm well hey hi hello please thanks thank ' +
    'no nope get got like know think say said tell let make go going one thing things sure right'
  ).split(' '),
);
const NEGATIONS = new Set(['not', 'never']);
const INTENSIFIERS = new Set([
  'really',
  'very',
  'quite',
  'even',
  'actually',
  'so',
  'too',
  'that',
  'at',
  'all',
  'a',
  'the',
]);

function stem(word: string): string {
  for (const suffix of ['ing', 'ed', 'es', 's', 'ly', 'e']) {
    if (word.endsWith(suffix) && word.length - suffix.length >= 3) return word.slice(0, -suffix.length);
  }
  return word;
}

/**
 * Content words of a text, lower-cased and stemmed, stopwords dropped; a negation joins the word after
 * it ("not interested" -> "not_interest", "don't really need" -> "not_need"), so "not sure" and
 * "not interested" do not match each other.
 */
export function keywords(text: string): Set<string> {
  const words = text
    .toLowerCase()
    .replace(/n['’]t\b/g, ' not')
    .replace(/['’](?:s|m|re|ve|ll|d)\b/g, '')
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean);
  const result = new Set<string>();
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!;
    if (NEGATIONS.has(word)) {
      while (i + 1 < words.length && INTENSIFIERS.has(words[i + 1]!)) i++;
      const next = words[++i];
      if (next && !NEGATIONS.has(next)) result.add(`not_${stem(next)}`);
      continue;
    }
    if (!STOPWORDS.has(word)) result.add(stem(word));
  }
  return result;
}

export interface PairMatch {
  index: number;
  pair: ScriptPair;
  overlap: number;
}

/**
 * The pair whose trigger shares the most keywords with the text (ties: the larger share of the trigger,
 * then the earlier line), if it shares at least `minOverlap` or half the trigger's keywords.
 */
export function bestPair(pairs: readonly ScriptPair[], words: Set<string>, minOverlap: number): PairMatch | null {
  let best: (PairMatch & { share: number }) | null = null;
  pairs.forEach((pair, index) => {
    let overlap = 0;
    for (const key of pair.keys) if (words.has(key)) overlap++;
    if (!overlap) return;
    const share = overlap / pair.keys.size;
    if (overlap < minOverlap && share < 0.5) return;
    if (!best || overlap > best.overlap || (overlap === best.overlap && share > best.share))
      best = { index, pair, overlap, share };
  });
  return best;
}
