/**
 * The post-call analysis's reading rules, as pure functions: wall-clock time in the callee's zone, the time a callee
 * asks to be called back at ("tomorrow", "after 3", "next Tuesday morning", "in two hours"), and the values a call
 * may hold (a number, an email address said or spelled out, a date, a yes or no).
 *
 * A callback phrase is read against the moment the call ended, in the callee's zone:
 * - a day without a time of day is 10:00 that day; a part of the day is its usual hour (morning 9:00, noon 12:00,
 *   afternoon 14:00, evening 18:00, tonight 19:00, end of the day 17:00);
 * - an hour without am or pm is read as a working hour (1 to 7 are afternoon, 8 to 11 morning); "after 3" is 15:00,
 *   "before 3" an hour earlier; a time already past today is tomorrow;
 * - a weekday is the coming one (never today; "next Tuesday" too); "next week" is its Monday, "the weekend" Saturday;
 * - "in two hours", "in 30 minutes", "in 3 days" count from the end of the call.
 */

import { wallClock, instantOf, addDays, isoDate, type WallClock } from '../../lib/wall-clock.js';

// ---- Words to numbers ----------------------------------------------------------------------------------------------

const UNITS: Record<string, number> = {
  zero: 0,
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
};
const TEENS: Record<string, number> = {
  ten: 10,
  eleven: 11,
  twelve: 12,
  thirteen: 13,
  fourteen: 14,
  fifteen: 15,
  sixteen: 16,
  seventeen: 17,
  eighteen: 18,
  nineteen: 19,
};
const TENS: Record<string, number> = {
  twenty: 20,
  thirty: 30,
  forty: 40,
  fifty: 50,
  sixty: 60,
  seventy: 70,
  eighty: 80,
  ninety: 90,
};
const SCALES: Record<string, number> = { hundred: 100, thousand: 1000, million: 1_000_000 };

type NumberWord = 'unit' | 'teen' | 'tens' | 'scale';
const kindOf = (word: string): NumberWord | null =>
  word in UNITS ? 'unit' : word in TEENS ? 'teen' : word in TENS ? 'tens' : word in SCALES ? 'scale' : null;

/**
 * The number spelled out by the words from `tokens[at]` on (`tokens` alternates separators and words, words at odd
 * indexes), and the index after its last word; null when no number starts there.
 */
function spelledNumber(tokens: string[], at: number): { value: number; next: number } | null {
  let total = 0;
  let group = 0;
  let last: NumberWord | null = null;
  let lastWord = -1;
  let j = at;
  const word = (k: number) => tokens[k]?.toLowerCase() ?? '';
  const joined = (k: number) => /^[ -]$/.test(tokens[k + 1] ?? '');
  // "a hundred", "a thousand"
  if ((word(j) === 'a' || word(j) === 'an') && joined(j) && kindOf(word(j + 2)) === 'scale') {
    group = 1;
    last = 'unit';
    j += 2;
  }
  while (j < tokens.length) {
    const current = word(j);
    if (current === 'and' && last === 'scale' && lastWord === j - 2) {
      const following = kindOf(word(j + 2));
      if (!joined(j) || following === null || following === 'scale') break;
      j += 2;
      continue;
    }
    const kind = kindOf(current);
    if (kind === null) break;
    if (kind === 'scale') {
      if (last === null) break;
      const scale = SCALES[current]!;
      if (scale === 100) group = (group || 1) * 100;
      else {
        total += (group || 1) * scale;
        group = 0;
      }
    } else {
      // A tens word after a unit or a teen starts another number ("three thirty" is 3 and 30, a time).
      if (last === 'unit' || last === 'teen') break;
      if (last === 'tens' && kind !== 'unit') break;
      group += kind === 'unit' ? UNITS[current]! : kind === 'teen' ? TEENS[current]! : TENS[current]!;
    }
    last = kind;
    lastWord = j;
    if (!joined(j)) break;
    j += 2;
  }
  if (lastWord < 0) return null;
  return { value: total + group, next: lastWord + 1 };
}

/**
 * Spelled-out numbers as digits: "five thousand" -> "5000", "twenty-five" -> "25", "a hundred" -> "100",
 * "two hundred and fifty" -> "250". A tens word after a unit starts a new number, so a time stays two numbers
 * ("three thirty" -> "3 30").
 */
export function numbersAsDigits(text: string): string {
  const tokens = text.split(/([A-Za-z]+)/);
  let out = '';
  for (let i = 0; i < tokens.length; ) {
    if (i % 2 === 1) {
      const number = spelledNumber(tokens, i);
      if (number) {
        out += String(number.value);
        i = number.next;
        continue;
      }
    }
    out += tokens[i];
    i++;
  }
  return out;
}

/** Lower case, curly quotes straight, "p.m." as "pm", numbers as digits, one space between words. */
export function normalizeSpeech(text: string): string {
  const plain = text
    .toLowerCase()
    .replace(/[’‘]/g, "'")
    .replace(/\b([ap])\.\s?m\b\.?/g, '$1m')
    .replace(/o'clock/g, '')
    .replace(/\s+/g, ' ')
    .trim();
  return numbersAsDigits(plain);
}

// ---- Callback times ------------------------------------------------------------------------------------------------

const WEEKDAYS: Record<string, number> = {
  sunday: 0,
  monday: 1,
  tuesday: 2,
  wednesday: 3,
  thursday: 4,
  friday: 5,
  saturday: 6,
};
const MONTHS: Record<string, number> = {
  january: 1,
  february: 2,
  march: 3,
  april: 4,
  may: 5,
  june: 6,
  july: 7,
  august: 8,
  september: 9,
  october: 10,
  november: 11,
  december: 12,
  jan: 1,
  feb: 2,
  mar: 3,
  apr: 4,
  jun: 6,
  jul: 7,
  aug: 8,
  sep: 9,
  sept: 9,
  oct: 10,
  nov: 11,
  dec: 12,
};
/** The hour a part of the day stands for. */
const PARTS_OF_DAY: Record<string, number> = {
  morning: 9,
  noon: 12,
  midday: 12,
  lunchtime: 12,
  lunch: 12,
  afternoon: 14,
  evening: 18,
  tonight: 19,
  night: 19,
};
/** A day named without a time of day is called at this hour. */
export const DEFAULT_CALLBACK_HOUR = 10;

interface Found {
  /** Where in the normalized text the phrase starts and ends. */
  start: number;
  end: number;
}

interface DayPart extends Found {
  /** Days from today; or an absolute date. */
  offset?: number;
  date?: { year: number; month: number; day: number };
  /** Today, said as such (tonight, this afternoon): a time of day already past is not moved to tomorrow. */
  today?: boolean;
}

interface TimePart extends Found {
  hour: number;
  minute: number;
  /** Whether am or pm was said (or implied by a part of the day). */
  meridiem: 'am' | 'pm' | null;
  /** A part of the day (morning) rather than a clock time. */
  vague: boolean;
  /** "before 3", "by 3": an hour earlier, so the call comes before it. */
  earlier?: boolean;
}

interface Duration extends Found {
  ms: number;
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

const WEEKDAY_WORDS = Object.keys(WEEKDAYS).join('|');
const MONTH_WORDS = Object.keys(MONTHS).join('|');
const PART_WORDS = Object.keys(PARTS_OF_DAY).join('|');

function findDuration(text: string): Duration | null {
  const match =
    /\bin (?:about |around |maybe )?(an?|\d+(?:\.\d+)?|half an|a couple of|a few|couple of|a half) ?(minutes?|mins?|hours?|hrs?|days?|weeks?)\b/.exec(
      text,
    );
  if (!match) {
    const half = /\bin (?:about )?half an hour\b/.exec(text);
    return half ? { start: half.index, end: half.index + half[0].length, ms: 30 * MINUTE } : null;
  }
  const amountWord = match[1]!;
  const amount =
    amountWord === 'a' || amountWord === 'an'
      ? 1
      : amountWord === 'half an' || amountWord === 'a half'
        ? 0.5
        : /couple/.test(amountWord)
          ? 2
          : amountWord === 'a few'
            ? 3
            : Number(amountWord);
  const unit = match[2]!;
  const per = unit.startsWith('m') ? MINUTE : unit.startsWith('h') ? HOUR : unit.startsWith('d') ? DAY : 7 * DAY;
  return { start: match.index, end: match.index + match[0].length, ms: Math.round(amount * per) };
}

function findDay(text: string, today: WallClock): DayPart | null {
  const candidates: DayPart[] = [];
  const at = (match: RegExpExecArray, part: Omit<DayPart, 'start' | 'end'>) =>
    candidates.push({ start: match.index, end: match.index + match[0].length, ...part });
  let match: RegExpExecArray | null;
  if ((match = /\b(?:the )?day after tomorrow\b/.exec(text))) at(match, { offset: 2 });
  else if ((match = /\btomorrow\b/.exec(text))) at(match, { offset: 1 });
  if ((match = /\b(?:today|tonight|later today|this (?:morning|afternoon|evening))\b/.exec(text)))
    at(match, { offset: 0, today: true });
  const weekday = new RegExp(`\\b(?:(next|this|on|coming) )?(${WEEKDAY_WORDS})s?\\b( next week)?`).exec(text);
  if (weekday) {
    const target = WEEKDAYS[weekday[2]!]!;
    let offset = (target - today.weekday + 7) % 7 || 7;
    // "Tuesday next week": the Tuesday of the week after this one (weeks start on Monday).
    if (weekday[3]) {
      const toNextMonday = ((8 - today.weekday) % 7 || 7) as number;
      offset = toNextMonday + ((target + 6) % 7);
    }
    at(weekday, { offset });
  } else if ((match = /\b(?:next|the following) week\b/.exec(text))) {
    at(match, { offset: (8 - today.weekday) % 7 || 7 });
  } else if ((match = /\b(?:(?:this|the|at the|over the|next) )?weekend\b/.exec(text))) {
    at(match, { offset: (6 - today.weekday + 7) % 7 || 7 });
  } else if ((match = /\bend of (?:the|this) week\b/.exec(text))) {
    at(match, { offset: (5 - today.weekday + 7) % 7 });
  }
  const monthFirst = new RegExp(`\\b(${MONTH_WORDS})\\.? (\\d{1,2})(?:st|nd|rd|th)?\\b`).exec(text);
  const dayFirst = new RegExp(`\\b(?:the )?(\\d{1,2})(?:st|nd|rd|th)? (?:of )?(${MONTH_WORDS})\\b`).exec(text);
  const named = monthFirst
    ? { match: monthFirst, month: MONTHS[monthFirst[1]!]!, day: Number(monthFirst[2]) }
    : dayFirst
      ? { match: dayFirst, month: MONTHS[dayFirst[2]!]!, day: Number(dayFirst[1]) }
      : null;
  if (named && named.day >= 1 && named.day <= 31) {
    const thisYear = { year: today.year, month: named.month, day: named.day };
    const past = named.month < today.month || (named.month === today.month && named.day < today.day);
    at(named.match, { date: past ? { ...thisYear, year: today.year + 1 } : thisYear });
  } else if ((match = /\b(\d{4})-(\d{2})-(\d{2})\b/.exec(text))) {
    at(match, { date: { year: Number(match[1]), month: Number(match[2]), day: Number(match[3]) } });
  } else if ((match = /\b(?:on )?the (\d{1,2})(?:st|nd|rd|th)\b/.exec(text))) {
    const day = Number(match[1]);
    if (day >= 1 && day <= 31) {
      const inThisMonth = day >= today.day;
      const month = inThisMonth ? today.month : (today.month % 12) + 1;
      const year = inThisMonth || today.month < 12 ? today.year : today.year + 1;
      at(match, { date: { year, month, day } });
    }
  }
  if (candidates.length === 0) return null;
  // The most specific: an absolute date, then a weekday, then tomorrow, then today.
  return (
    candidates.find((c) => c.date) ??
    candidates.find((c) => c.offset !== undefined && c.offset > 1) ??
    candidates.find((c) => c.offset === 1) ??
    candidates[0]!
  );
}

function findTime(text: string): TimePart | null {
  const clock =
    /\b(?:(at|after|around|about|by|before|from|past|until|till|between) )?(\d{1,2})(?:[: ](\d{2}))? ?(am|pm)?\b/g;
  const found: TimePart[] = [];
  for (let match = clock.exec(text); match; match = clock.exec(text)) {
    const [, preposition, hourText, minuteText, meridiem] = match;
    const hour = Number(hourText);
    const minute = minuteText === undefined ? 0 : Number(minuteText);
    const end = match.index + match[0].length;
    // A bare number is a time only with a preposition of time or am/pm; not an amount ("2 hours", "3 days").
    if (!preposition && !meridiem) continue;
    if (
      /^ ?(?:minutes?|mins?|hours?|hrs?|days?|weeks?|months?|years?|dollars?|people|percent|%|k\b)/.test(
        text.slice(end),
      )
    )
      continue;
    if (preposition && !meridiem && /^\d{4}/.test(text.slice(match.index + (preposition.length + 1)))) continue;
    if (hour > 23 || minute > 59 || (meridiem && (hour === 0 || hour > 12))) continue;
    found.push({
      start: match.index,
      end,
      hour,
      minute,
      meridiem: (meridiem as 'am' | 'pm' | undefined) ?? null,
      vague: false,
      earlier: preposition === 'before' || preposition === 'by' || preposition === 'until' || preposition === 'till',
    });
  }
  const words = new RegExp(`\\b(?:in the |this |at |around |about |by )?(${PART_WORDS})\\b`).exec(text);
  const end = /\b(?:by |at |before |around )?(?:the )?end of (?:the |my )?(?:day|business|work ?day)\b/.exec(text);
  if (found.length > 0) {
    const time = found[0]!;
    if (words && !time.meridiem) {
      const partHour = PARTS_OF_DAY[words[1]!]!;
      time.meridiem = partHour < 12 ? 'am' : 'pm';
    }
    return time;
  }
  if (end)
    return { start: end.index, end: end.index + end[0].length, hour: 17, minute: 0, meridiem: 'pm', vague: true };
  if (words) {
    const hour = PARTS_OF_DAY[words[1]!]!;
    return { start: words.index, end: words.index + words[0].length, hour, minute: 0, meridiem: null, vague: true };
  }
  return null;
}

/** 24-hour clock of a time said: "3" is 15:00, "9" is 9:00, "3 am" is 3:00, "12" is noon. */
function hour24(time: TimePart): number {
  if (time.vague) return time.hour;
  if (time.meridiem === 'am') return time.hour === 12 ? 0 : time.hour;
  if (time.meridiem === 'pm') return time.hour === 12 ? 12 : time.hour + 12;
  if (time.hour >= 13) return time.hour;
  return time.hour >= 1 && time.hour <= 7 ? time.hour + 12 : time.hour;
}

/** Half past three, a quarter past, a quarter to: as clock times. */
function clockPhrases(text: string): string {
  return text
    .replace(/\bhalf past (\d{1,2})\b/g, (_, h: string) => `${h}:30`)
    .replace(/\b(?:a )?quarter past (\d{1,2})\b/g, (_, h: string) => `${h}:15`)
    .replace(/\b(?:a )?quarter to (\d{1,2})\b/g, (_, h: string) => `${Number(h) === 1 ? 12 : Number(h) - 1}:45`)
    .replace(/\b(\d{1,2}) (\d{2})\b(?= ?(?:am|pm)\b)/g, '$1:$2')
    .replace(/\b(at|after|around|about|by|before) (\d{1,2}) (15|30|45)\b/g, '$1 $2:$3');
}

export interface CallbackTime {
  at: Date;
  /** The words that named it, as they were said (normalized: lower case, numbers as digits). */
  words: string;
}

/**
 * The moment a callee asked to be called back at, read from what they said (see the module comment), or null when
 * the words name no time. `now` is when the call ended; `zone` the callee's IANA time zone.
 */
export function readCallbackTime(said: string, now: Date, zone: string): CallbackTime | null {
  const text = clockPhrases(normalizeSpeech(said));
  const wall = wallClock(zone, now);
  const duration = findDuration(text);
  const day = findDay(text, wall);
  const time = findTime(text);
  const words = (parts: Array<Found | null>) => {
    const present = parts.filter((part): part is Found => part !== null);
    const start = Math.min(...present.map((part) => part.start));
    const end = Math.max(...present.map((part) => part.end));
    return text.slice(start, end).trim();
  };
  if (!day && !time) return duration ? { at: new Date(now.getTime() + duration.ms), words: words([duration]) } : null;
  let date: { year: number; month: number; day: number } = wall;
  let byDuration: Duration | null = null;
  if (day?.date) date = day.date;
  else if (day?.offset) date = addDays(wall, day.offset);
  else if (duration && duration.ms >= DAY) {
    date = addDays(wall, Math.round(duration.ms / DAY));
    byDuration = duration;
  }
  let hour = DEFAULT_CALLBACK_HOUR;
  let minute = 0;
  if (time) {
    hour = hour24(time);
    minute = time.minute;
    if (time.earlier) hour = Math.max(0, hour - 1);
  } else if (day?.today) {
    // "later today" with no time: two hours from now.
    return { at: new Date(now.getTime() + 2 * HOUR), words: words([day]) };
  }
  let at = instantOf(zone, { ...date, hour, minute });
  // A time of day already past, with no day or only "today" implied: the next day.
  if (at.getTime() <= now.getTime() && (!day || (day.offset === 0 && !day.today))) {
    at = instantOf(zone, { ...addDays(date, 1), hour, minute });
  }
  if (at.getTime() <= now.getTime()) return null;
  return { at, words: words([day, byDuration, time]) };
}

/** The calendar date a phrase names ("next Tuesday", "March 5th", "tomorrow"), YYYY-MM-DD in `zone`, or null. */
export function readDate(said: string, now: Date, zone: string): string | null {
  const text = normalizeSpeech(said);
  const wall = wallClock(zone, now);
  const day = findDay(text, wall);
  if (day?.date) return isoDate(day.date);
  if (day?.offset !== undefined) return isoDate(addDays(wall, day.offset));
  const duration = findDuration(text);
  if (duration && duration.ms >= DAY) return isoDate(addDays(wall, Math.round(duration.ms / DAY)));
  return null;
}

// ---- Values --------------------------------------------------------------------------------------------------------

const MAGNITUDES: Record<string, number> = {
  k: 1000,
  grand: 1000,
  thousand: 1000,
  m: 1_000_000,
  mil: 1_000_000,
  million: 1_000_000,
  billion: 1_000_000_000,
};

/**
 * The amount a sentence names: "$5,000", "5k", "five thousand dollars", "2.5 million", "about 40". Of several, the
 * one with a currency or a magnitude, else the last; times of day are not amounts.
 */
export function readNumber(said: string): number | null {
  const text = clockPhrases(normalizeSpeech(said)).replace(/(\d),(\d{3})\b/g, '$1$2');
  const amount =
    /([$€£]\s?)?(-?\d+(?:\.\d+)?)\s?(k|grand|thousand|m|mil|million|billion)?\b(\s?(?:dollars?|bucks|euros?|pounds?|usd))?/g;
  let best: { value: number; strong: boolean } | null = null;
  for (let match = amount.exec(text); match; match = amount.exec(text)) {
    const before = text.slice(Math.max(0, match.index - 7), match.index);
    const after = text.slice(match.index + match[0].length);
    // A clock time ("at 3", "3:30", "3 pm") is not an amount.
    if (/(?:^|\s)(?:at|after|before|around)\s$/.test(before) && !match[1] && !match[3] && !match[4]) continue;
    if (/^:\d/.test(after) || /:$/.test(before) || /^\s?(?:am|pm)\b/.test(after)) continue;
    let value = Number(match[2]);
    if (match[3]) value *= MAGNITUDES[match[3]]!;
    const strong = Boolean(match[1] || match[3] || match[4]);
    if (!best || strong || !best.strong) best = { value, strong };
  }
  return best?.value ?? null;
}

const SPOKEN_SYMBOLS: Array<[RegExp, string]> = [
  [/\s+(?:at sign|at)\s+/g, '@'],
  [/\s+(?:dot|period|point)\s+/g, '.'],
  [/\s+underscore\s+/g, '_'],
  [/\s+(?:dash|hyphen|minus)\s+/g, '-'],
];

/**
 * An email address said or spelled out ("ada dot lovelace at example dot com", "a-d-a at example.com"), or null.
 * Of several, the last (an address read back and confirmed comes last).
 */
export function readEmail(said: string): string | null {
  let text = ` ${said.toLowerCase().replace(/[’‘]/g, "'")} `;
  // Letters spelled out one by one ("a-d-a", "a d a") are joined into one word.
  text = text.replace(/(?<=\s)[a-z0-9](?:[- ][a-z0-9]){2,}(?=[\s,.])/g, (letters) => letters.replace(/[- ]/g, ''));
  for (const [spoken, symbol] of SPOKEN_SYMBOLS) text = text.replace(spoken, symbol);
  const found = text.match(/[a-z0-9][a-z0-9._%+-]*@[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}/g);
  return found?.at(-1)?.replace(/\.$/, '') ?? null;
}

const YES =
  /\b(?:yes|yeah|yep|yup|sure|of course|definitely|absolutely|correct|that's right|right|sounds good|okay|ok|i do|we do|i would|i'd like|let's do it|sign me up|please do|go ahead|perfect|great)\b/;
const NO =
  /\b(?:no|nope|not really|don't|do not|doesn't|never|not interested|no thanks|we don't|i don't|not now|not yet)\b/;

/** Yes or no, as a sentence answers; null when it says neither (or both). */
export function readYesNo(said: string): boolean | null {
  const text = normalizeSpeech(said);
  const yes = YES.test(text);
  const no = NO.test(text);
  if (yes === no) return null;
  return yes;
}
