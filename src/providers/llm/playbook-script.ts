/**
 * Reads an agent's prompt parts into what the playbook engine can follow: the steps to say in order,
 * objections and FAQ lines as trigger -> answer pairs, and the closers. Plain text in, plain data out.
 *
 * Writing parts the engine follows (each item on its own line; list markers like "1." or "-" are fine):
 *   playbook    one step per line, the sentence to say; if a line quotes something ("..."), the quote is said
 *   objections  `trigger -> answer`, `trigger: answer`, `If they say X, say Y`, or a `Q:`/`A:` pair of lines
 *   faq         the same forms, or `Question? Answer` on one line
 *   closers     one closing line per line, said when the other side agrees
 */

/** The prompt parts the engine reads; the same names as the agent's fields. */
export interface AgentScript {
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
}

export interface ScriptPair {
  /** Keywords of the trigger (see keywords()). */
  keys: Set<string>;
  answer: string;
}

export interface ParsedScript {
  firstMessage: string;
  steps: string[];
  objections: ScriptPair[];
  faq: ScriptPair[];
  closers: string[];
  voicemailMessage: string;
  /** Keywords of the transfer rule; empty when the agent never transfers. */
  transferKeys: Set<string>;
}

// The headings assembleSystemPrompt puts above each part (agents module); a test keeps the two in step.
const SECTION_HEADINGS: Record<string, keyof AgentScript> = {
  mission: 'mission',
  playbook: 'playbook',
  'objection handling': 'objections',
  closing: 'closers',
  notes: 'notes',
  faq: 'faq',
};

/** The parts found under "## Heading" lines of an assembled system prompt. */
export function scriptFromSystemPrompt(prompt: string): AgentScript {
  const script: AgentScript = {};
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
  for (const [part, text] of Object.entries(lines)) script[part as keyof AgentScript] = text.join('\n').trim();
  return script;
}

const LIST_MARKER = /^\s*(?:[-*•]+|\d+[.)]|step\s*\d+\s*[:.)-]?)\s*/i;

function items(text: string | null | undefined): string[] {
  return (text ?? '')
    .split(/\r?\n/)
    .map((line) => line.replace(LIST_MARKER, '').trim())
    .filter(Boolean);
}

/** What to say for a line: its quoted parts if it quotes something, else the line itself. */
export function spokenText(line: string): string {
  const quoted = [...line.matchAll(/"([^"]+)"|“([^”]+)”/g)].map((match) => (match[1] ?? match[2]!).trim());
  return (quoted.length ? quoted.join(' ') : line).trim();
}

const PAIR_PREFIX = /^(?:q|question|objection|if they say|they say|trigger)\s*[:.-]\s*/i;
const ANSWER_PREFIX = /^(?:a|answer|response|respond|reply|say)\s*[:.-]\s*/i;
const IF_THEY_SAY =
  /^if (?:they|the (?:lead|prospect|customer|caller|contact))\s+(?:say|says|ask|asks|mention|mentions|object|objects)\s*(?:that\s*)?(.+?),\s*(?:then\s+)?(?:say|respond|answer|reply|tell them)(?:\s+with)?\s*:?\s*(.+)$/i;

function pair(trigger: string, answer: string): ScriptPair | null {
  const keys = keywords(trigger.replace(/["“”]/g, ''));
  const said = spokenText(answer);
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
    const arrow = /^(.+?)\s*(?:->|=>|→|—|–)\s*(.+)$/.exec(line);
    const conditional = IF_THEY_SAY.exec(line);
    const question = questionSplit ? /^(.+?\?)\s+(.+)$/.exec(line) : null;
    const colon = /^(.+?):\s+(.+)$/.exec(line.replace(PAIR_PREFIX, ''));
    const match = arrow ?? conditional ?? question ?? colon;
    const found = match ? pair(match[1]!.replace(PAIR_PREFIX, ''), match[2]!) : null;
    if (found) pairs.push(found);
  }
  return pairs;
}

export function parseScript(script: AgentScript): ParsedScript {
  return {
    firstMessage: (script.firstMessage ?? '').trim(),
    steps: items(script.playbook).map(spokenText).filter(Boolean),
    objections: parsePairs(script.objections, { questionSplit: false }),
    faq: parsePairs(script.faq, { questionSplit: true }),
    closers: items(script.closers).map(spokenText).filter(Boolean),
    voicemailMessage: (script.voicemailMessage ?? '').trim(),
    transferKeys: keywords(script.whenToTransfer ?? ''),
  };
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
