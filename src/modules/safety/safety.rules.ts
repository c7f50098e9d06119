/**
 * The rule-based safety check of an agent definition: plain functions of the text, so the same definition always
 * gets the same findings. Each rule reads the prompt parts line by line; a line that forbids something ("never ask
 * for card numbers") is an instruction to stay safe, not a finding.
 */
import { VERSIONED_FIELDS, type VersionedFieldName } from '../agents/agents.prompt.js';

export const SAFETY_SEVERITIES = ['error', 'warning'] as const;
export type SafetySeverity = (typeof SAFETY_SEVERITIES)[number];

/** Every rule code, its severity and what it means (the README's table lists the same). */
export const SAFETY_RULES = {
  ai_disclosure_missing: {
    severity: 'error',
    meaning: 'Nothing tells the agent to say it is an AI (virtual assistant) when asked or at the start.',
  },
  ai_disclosure_denied: {
    severity: 'error',
    meaning: 'A line tells the agent to deny being an AI or to claim to be a human.',
  },
  opt_out_missing: {
    severity: 'error',
    meaning:
      'Nothing tells the agent what to do when someone asks not to be called again ("stop calling", "do not call").',
  },
  sensitive_data_request: {
    severity: 'error',
    meaning: 'A line asks for a card number, security code, Social Security number, password, PIN or one-time code.',
  },
  guaranteed_outcome: { severity: 'error', meaning: 'A line guarantees a medical, legal or financial outcome.' },
  pressure_tactic: {
    severity: 'warning',
    meaning: 'A line uses pressure: false urgency, "act now", "last chance", not letting the person go.',
  },
  collections_threat: {
    severity: 'error',
    meaning: 'A line threatens arrest, jail, a lawsuit, wage garnishment, seizure or telling others about a debt.',
  },
  calling_hours: {
    severity: 'error',
    meaning: "A line promises to call before 8:00 or after 21:00 in the callee's local time, or at any hour.",
  },
  knowledge_injection: {
    severity: 'error',
    meaning: 'The knowledge base or FAQ holds text that reads as instructions to the model (prompt injection).',
  },
  transfer_number_invalid: {
    severity: 'error',
    meaning: 'The transfer number is not a valid E.164 number (+, then 7 to 15 digits: country code and number).',
  },
} as const satisfies Record<string, { severity: SafetySeverity; meaning: string }>;
export type SafetyRuleCode = keyof typeof SAFETY_RULES;

/** The texts a definition is checked in: the prompt parts, the first message and two settings. */
export const CHECKED_PARTS = [...VERSIONED_FIELDS, 'transfer.whenToTransfer', 'voicemail.message'] as const;
export type CheckedPart = (typeof CHECKED_PARTS)[number] | 'transfer.number';

export interface AgentDefinition extends Partial<Record<VersionedFieldName, string>> {
  name?: string;
  transfer?: { number?: string | null; whenToTransfer?: string };
  voicemail?: { action?: string; message?: string };
}

export interface Finding {
  code: SafetyRuleCode | 'llm_review';
  severity: SafetySeverity;
  /** Where: a prompt part, `firstMessage`, `transfer.number`, `transfer.whenToTransfer` or `voicemail.message`; null for the whole definition. */
  part: CheckedPart | null;
  /** 1-based line within the part; null when the finding is about something missing. */
  line: number | null;
  excerpt: string | null;
  message: string;
  suggestion: string;
  source: 'rules' | 'llm';
}

interface Line {
  part: CheckedPart;
  line: number;
  text: string;
}

const EXCERPT_CHARS = 200;
const excerptOf = (text: string) => {
  const trimmed = text.trim();
  return trimmed.length > EXCERPT_CHARS ? `${trimmed.slice(0, EXCERPT_CHARS - 1)}…` : trimmed;
};

function textOf(definition: AgentDefinition, part: (typeof CHECKED_PARTS)[number]): string {
  if (part === 'transfer.whenToTransfer') return definition.transfer?.whenToTransfer ?? '';
  if (part === 'voicemail.message') return definition.voicemail?.message ?? '';
  return definition[part] ?? '';
}

function linesOf(definition: AgentDefinition): Line[] {
  return CHECKED_PARTS.flatMap((part) =>
    textOf(definition, part)
      .split(/\r?\n/)
      .map((text, index) => ({ part, line: index + 1, text }))
      .filter((line) => line.text.trim() !== ''),
  );
}

/** A line that forbids or warns against what it names: "never", "do not", "don't", "must not", "avoid"… */
const PROHIBITION =
  /\b(never|(do|does|must|should|will|may|can) not|cannot|(don|doesn|won|shouldn|mustn|can|isn|aren)['’]t|avoid|under no circumstances|not allowed|not permitted|forbidden|prohibited|instead of|rather than)\b/i;

const AI_DISCLOSURE =
  /\b(an?\s+AI\b|A\.I\.|artificial intelligence|virtual (assistant|agent|receptionist)|automated (assistant|agent|system|caller)|digital assistant|AI (assistant|agent|receptionist))/i;
/** "Never reveal you are an AI": the prohibition is the problem here. */
const AI_HIDING =
  /\b(never|don['’]t|do not|must not)\s+(reveal|admit|say|disclose|mention|tell|let (them|anyone|the caller) know)\b[^.]*\b(AI|artificial|bot|automated|virtual|machine|robot)\b/i;
/** "Say you are a real person": a problem unless the line forbids it. */
const AI_IMPERSONATION = [
  /\b(say|claim|insist|pretend|tell (them|the caller|people|anyone))\b[^.]*\byou(\s+are|['’]re)\s+(a\s+)?(real\s+)?(human|person|live agent)\b/i,
  /\bpretend\s+to\s+be\s+(a\s+)?(human|person|real)/i,
  /\b(deny|denies)\s+(being|that you are)\s+(an?\s+)?(AI|bot|robot|machine|virtual|automated)/i,
];

const OPT_OUT =
  /\b(stop calling|do[- ]not[- ]call|don['’]t call|no more calls|remove (me|them|him|her|their number|the number|you)|take (me|them|him|her|you) off|opt[- ]?out|unsubscribe|not to be (called|contacted)|stop contacting)\b/i;

const ASKING =
  /\b(ask|asks|asking|collect|get|gather|request|take|obtain|confirm|verify|read (back|out)|record|need|provide|give|share|spell|repeat|enter|say)\b/i;
const SENSITIVE = [
  {
    pattern:
      /\b(credit|debit|bank)\s*card\s*(number|details|info)?|\bcard\s+number|\bCVV\b|\bCVC\b|security code|expiration date|expiry date/i,
    what: 'payment card details',
  },
  {
    pattern: /\b(SSN|social security( number)?|national insurance number|tax id)\b/i,
    what: 'a Social Security number',
  },
  { pattern: /\bpass(word|code|phrase)s?\b/i, what: 'a password' },
  {
    pattern:
      /\b(one[- ]time (code|password|passcode|pin)|OTP|verification code|2FA code|two[- ]factor code|PIN( number| code)?)\b/,
    what: 'a one-time code or PIN',
  },
  { pattern: /\b(bank account number|routing number|account and routing)\b/i, what: 'bank account numbers' },
];

const GUARANTEE =
  /\b(guarantee[ds]?|guaranteeing|promise[ds]?|100\s?%|definitely|certainly|assured?|risk[- ]free|no risk|can['’]t lose|will (be )?(cure|heal|fix|win|approve|double|erase))/i;
const REGULATED_OUTCOME =
  /\b(cure[ds]?|heal(ed|s)?|pain[- ]free|recover(y)?|diagnos\w*|treatment result|results|outcome|win(ning)?|case|lawsuit|settlement|verdict|acquittal|compensation|returns?|profit\w*|invest\w*|income|earnings|approv\w*|loan|credit score|debt[- ]free|erase your debt|savings|interest rate|refund)\b/i;

const PRESSURE =
  /\b(act now|today only|limited[- ]time|last chance|only \d+ (left|spots|slots)|offer expires|expires (today|tonight)|before it['’]?s too late|decide (right )?now|must decide|don['’]t (let them|let the (caller|customer|person)) (hang up|go|think)|do not let (them|the caller|the customer|the person) (hang up|go|think)|keep pushing|never take no|don['’]t take no|do not take no|rush (them|the caller)|scare (them|the caller)|create (a sense of )?urgency|fear of missing out)\b/i;

const THREAT =
  /\b(arrest(ed)?|jail|prison|police|sheriff|criminal charges|prosecut\w*|sue (you|them)|take (you|them) to court|legal action against|lawsuit against|garnish\w*|seiz(e|ure)|repossess\w*|tell (your|their) (employer|boss|family|neighbou?rs|friends|relatives)|contact (your|their) (employer|boss|family|neighbou?rs|friends)|ruin (your|their) credit|deport\w*)\b/i;

const CALL_PROMISE =
  /\b(call(ing)? (you|them|him|her|the (caller|customer|patient|client|lead)) (back|again)?|call back|callback|follow[- ]up call|ring (you|them) back|reach out by phone)\b/i;
const ANY_HOUR =
  /\b(any ?time|at any hour|24\/7|24 hours|around the clock|midnight|late at night|late in the evening|early in the morning|overnight|middle of the night)\b/i;
const CLOCK_TIME = /\b(\d{1,2})(?::(\d{2}))?\s*(a\.?m\.?|p\.?m\.?)(?=\W|$)/gi;
const EARLIEST_HOUR = 8;
const LATEST_HOUR = 21;

/** Hours (0-24, fractional) named in a line as "9 pm", "7:30 a.m.". */
export function clockHours(text: string): number[] {
  return [...text.matchAll(CLOCK_TIME)].flatMap((match) => {
    const hour = Number(match[1]);
    const minutes = Number(match[2] ?? 0);
    if (hour < 1 || hour > 12 || minutes > 59) return [];
    const pm = match[3]!.toLowerCase().startsWith('p');
    const hour24 = (hour % 12) + (pm ? 12 : 0);
    return [hour24 + minutes / 60];
  });
}

const INJECTION =
  /(ignore (all |any )?(the )?(previous|prior|above|earlier|your) (instructions|rules|prompts?)|disregard (all |any |the )?(previous|prior|above|your|these)|forget (all |your )?(previous |prior )?instructions|new instructions:|you are now\b|from now on,? you (are|will|must)|act as (an?|the) |system prompt|developer mode|jailbreak|do anything now|<\|im_start\|>|<\|system\|>|^\s*#{1,3}\s*system\b|\[\s*system\s*\]|override (your|the) (rules|instructions|safety)|reveal (your|the) (prompt|instructions))/i;
const INJECTION_PARTS: readonly CheckedPart[] = ['knowledgeBase', 'faq'];

const E164 = /^\+[1-9]\d{6,14}$/;

function finding(
  code: SafetyRuleCode,
  at: Line | null,
  message: string,
  suggestion: string,
  part: CheckedPart | null = at?.part ?? null,
): Finding {
  return {
    code,
    severity: SAFETY_RULES[code].severity,
    part,
    line: at?.line ?? null,
    excerpt: at ? excerptOf(at.text) : null,
    message,
    suggestion,
    source: 'rules',
  };
}

/** A line that forbids what it names ("never ask for…") is an instruction to stay safe, not a finding. */
export const forbids = (text: string) => PROHIBITION.test(text);

/** The line tells the agent to hide that it is an AI, or to claim to be a person (unless it forbids that). */
export function deniesBeingAi(text: string): boolean {
  return AI_HIDING.test(text) || (!forbids(text) && AI_IMPERSONATION.some((pattern) => pattern.test(text)));
}

/** The line tells the agent to say it is an AI (a virtual assistant, an automated caller…). */
export const disclosesAi = (text: string) => AI_DISCLOSURE.test(text);

/** The line says what to do when someone asks not to be called again. */
export const coversOptOut = (text: string) => OPT_OUT.test(text);

/** What sensitive data the line has the agent ask for ("payment card details"), or null. */
export function sensitiveDataAskedFor(text: string): string | null {
  if (forbids(text) || !ASKING.test(text)) return null;
  return SENSITIVE.find((entry) => entry.pattern.test(text))?.what ?? null;
}

/** The line guarantees a medical, legal or financial outcome. */
export const guaranteesOutcome = (text: string) =>
  !forbids(text) && GUARANTEE.test(text) && REGULATED_OUTCOME.test(text);

/** "Don't let them hang up" forbids something, yet is the pressure itself. */
const PRESSURE_DESPITE_PROHIBITION = /\bdon['’]t (let|take)|\bdo not (let|take)|never take no/i;

/** The line pressures the person: false urgency, "act now", not letting them go. */
export const pressures = (text: string) =>
  PRESSURE.test(text) && (!forbids(text) || PRESSURE_DESPITE_PROHIBITION.test(text));

/** The line threatens arrest, a suit, garnishment, seizure or telling others about a debt. */
export const threatens = (text: string) => !forbids(text) && THREAT.test(text);

/** The line promises a call before 8:00 or after 21:00, or at any hour. */
export function promisesCallOutsideHours(text: string): boolean {
  if (!CALL_PROMISE.test(text) || forbids(text)) return false;
  return clockHours(text).some((hour) => hour < EARLIEST_HOUR || hour > LATEST_HOUR) || ANY_HOUR.test(text);
}

/** Reference text that reads as an instruction to the model (prompt injection). */
export const readsAsInstruction = (text: string) => INJECTION.test(text);

export const isE164 = (number: string) => E164.test(number);

/** One finding per line the test picks, all with the same message and suggestion. */
function lineFindings(
  lines: Line[],
  code: SafetyRuleCode,
  picks: (line: Line) => boolean,
  message: string,
  suggestion: string,
): Finding[] {
  return lines.filter(picks).map((line) => finding(code, line, message, suggestion));
}

function aiDisclosureFindings(lines: Line[]): Finding[] {
  const denials = lines.filter((line) => deniesBeingAi(line.text));
  const discloses = lines.some((line) => disclosesAi(line.text) && !denials.includes(line));
  return [
    ...(discloses
      ? []
      : [
          finding(
            'ai_disclosure_missing',
            null,
            'The agent is never told to say that it is an AI.',
            'Add to the personality: "You are an AI assistant. If anyone asks whether you are a person or a machine, say plainly that you are an AI assistant."',
          ),
        ]),
    ...denials.map((line) =>
      finding(
        'ai_disclosure_denied',
        line,
        'This line tells the agent to hide that it is an AI.',
        'Remove it, and tell the agent to answer honestly that it is an AI assistant when asked.',
      ),
    ),
  ];
}

function optOutFindings(lines: Line[]): Finding[] {
  if (lines.some((line) => coversOptOut(line.text))) return [];
  return [
    finding(
      'opt_out_missing',
      null,
      'Nothing tells the agent what to do when someone asks not to be called again.',
      'Add to the playbook: "If the person asks you to stop calling or to be removed, apologise, confirm they will not be called again, and end the call."',
    ),
  ];
}

function sensitiveDataFindings(lines: Line[]): Finding[] {
  return lines.flatMap((line) => {
    const what = sensitiveDataAskedFor(line.text);
    if (!what) return [];
    return [
      finding(
        'sensitive_data_request',
        line,
        `This line has the agent ask for ${what} over the phone.`,
        'Never collect this by voice: send a secure payment or verification link, or transfer to a person on a compliant line.',
      ),
    ];
  });
}

const guaranteedOutcomeFindings = (lines: Line[]) =>
  lineFindings(
    lines,
    'guaranteed_outcome',
    (line) => guaranteesOutcome(line.text),
    'This line promises a medical, legal or financial result.',
    'Describe what is offered without promising a result, e.g. "many clients see…", and refer specific questions to a licensed professional.',
  );

const pressureFindings = (lines: Line[]) =>
  lineFindings(
    lines,
    'pressure_tactic',
    (line) => pressures(line.text),
    'This line pressures the person instead of letting them decide.',
    'Offer the choice calmly, accept a no at once, and offer to follow up if they want.',
  );

const threatFindings = (lines: Line[]) =>
  lineFindings(
    lines,
    'collections_threat',
    (line) => threatens(line.text),
    'This line threatens consequences (debt-collection rules forbid threats of arrest, suits or telling others).',
    'State only facts the creditor can and intends to act on, in neutral words, and never discuss the debt with anyone but the debtor.',
  );

const callingHoursFindings = (lines: Line[]) =>
  lineFindings(
    lines,
    'calling_hours',
    (line) => promisesCallOutsideHours(line.text),
    "This line promises a call outside 8:00–21:00 in the callee's local time.",
    "Offer callbacks only between 8 am and 9 pm in the callee's local time.",
  );

const knowledgeInjectionFindings = (lines: Line[]) =>
  lineFindings(
    lines,
    'knowledge_injection',
    (line) => INJECTION_PARTS.includes(line.part) && readsAsInstruction(line.text),
    'This reference text reads as an instruction to the model; a caller-facing agent could follow it.',
    'Keep only facts in the knowledge base and FAQ; move real instructions to the playbook or notes.',
  );

function transferNumberFindings(definition: AgentDefinition): Finding[] {
  const number = definition.transfer?.number;
  if (number === undefined || number === null || isE164(number)) return [];
  return [
    {
      ...finding(
        'transfer_number_invalid',
        null,
        `The transfer number "${excerptOf(number)}" is not E.164.`,
        'Write it as + country code and number, digits only, e.g. +14155550123.',
        'transfer.number',
      ),
      excerpt: excerptOf(number),
    },
  ];
}

/** The rules over the lines, in the order their findings are reported. */
const LINE_RULES: readonly ((lines: Line[]) => Finding[])[] = [
  aiDisclosureFindings,
  optOutFindings,
  sensitiveDataFindings,
  guaranteedOutcomeFindings,
  pressureFindings,
  threatFindings,
  callingHoursFindings,
  knowledgeInjectionFindings,
];

/** Runs every rule. Findings come in a fixed order: by rule, then by part order, then by line. */
export function runSafetyRules(definition: AgentDefinition): Finding[] {
  const lines = linesOf(definition);
  return [...LINE_RULES.flatMap((rule) => rule(lines)), ...transferNumberFindings(definition)];
}
