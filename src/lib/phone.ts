import { createRequire } from 'node:module';
import type { CountryCode } from 'libphonenumber-js/max';

type PhoneLibrary = typeof import('libphonenumber-js/max');
/** What normalizing needs of libphonenumber-js: the plain library (its ES build) fits, and a test compares with it. */
export type PhoneParser = Pick<
  PhoneLibrary,
  'isSupportedCountry' | 'parsePhoneNumberFromString' | 'validatePhoneNumberLength'
>;

/**
 * libphonenumber-js matches a number against its country's patterns with `new RegExp(pattern)` on every call (a third
 * of the time it takes to validate a number). Its CommonJS build looks that helper up on the helper's module at each
 * call, so replacing the module's export with one that keeps each compiled pattern speeds every caller up, without
 * changing the library's code or its answers. Should a later version lay its files out otherwise, the library is used
 * as it is (slower, same answers); `compiledPatterns.inEffect` says which.
 */
const requireFromHere = createRequire(import.meta.url);
const libraryPath = requireFromHere.resolve('libphonenumber-js/max');
/** The library as this file uses it: its CommonJS build, with compiled patterns kept (below). */
export const phoneLibrary = requireFromHere(libraryPath) as PhoneLibrary;
/** The number of compiled patterns kept: far more than the metadata holds (some 3,000), a bound all the same. */
const MAX_COMPILED_PATTERNS = 20_000;
/** Whether the library's matching goes through the cache (`matches` counts its calls), and how many patterns it keeps. */
export const compiledPatterns = { inEffect: false, matches: 0, kept: 0 };
const patternCache = new Map<string, RegExp>();

/** `^(?:pattern)$`, compiled once per pattern. */
function entirely(pattern: string): RegExp {
  let regexp = patternCache.get(pattern);
  if (!regexp) {
    regexp = new RegExp(`^(?:${pattern})$`);
    if (patternCache.size < MAX_COMPILED_PATTERNS) patternCache.set(pattern, regexp);
    compiledPatterns.kept = patternCache.size;
  }
  return regexp;
}

try {
  const helper = createRequire(libraryPath)('../build/helpers/matchesEntirely.js') as {
    default?: (text: string | undefined, pattern: string) => boolean;
  };
  if (typeof helper.default === 'function' && helper.default.length === 2) {
    // The library's own: `text = text || ''; return new RegExp('^(?:' + pattern + ')$').test(text)`.
    helper.default = (text, pattern) => {
      compiledPatterns.matches++;
      return entirely(pattern).test(text || '');
    };
    compiledPatterns.inEffect = true;
  }
} catch {
  // Not laid out as expected: the library stays as it is.
}

const { isSupportedCountry, parsePhoneNumberFromString } = phoneLibrary;

/**
 * Phone numbers are stored in E.164 (+14155550123). The "max" metadata is used on purpose: it checks
 * each number against its country's real number patterns, not only its length.
 */
export type PhoneProblem =
  | 'missing'
  | 'not_a_number'
  | 'invalid_country'
  | 'too_short'
  | 'too_long'
  | 'invalid_length'
  | 'invalid_number';

export type NormalizedPhone = { e164: string } | { error: PhoneProblem; message: string };

export function isPhoneCountry(code: string): code is CountryCode {
  return isSupportedCountry(code);
}

/** The ISO country of an E.164 number (what a call to it is priced by), or undefined when it has none. */
export function countryOfNumber(e164: string): string | undefined {
  return parsePhoneNumberFromString(e164)?.country;
}

// Excel turns long digit strings into 1.41556E+10: the digits are gone and cannot be recovered.
const SCIENTIFIC = /^\d(?:[.,]\d+)?e\+?\d+$/i;

/**
 * Normalizes a number written in any common format. A number without a country code is read in
 * defaultCountry; failing that, digits that form a valid international number are accepted as one
 * (exports often drop the "+").
 */
export const normalizePhone = createPhoneNormalizer(phoneLibrary, { northAmericanFastPath: true });

/**
 * `normalizePhone` on the library given; with `northAmericanFastPath`, a well-formed valid North American number is
 * answered without the library's general parse (same answer, several times faster).
 */
export function createPhoneNormalizer(
  parser: PhoneParser,
  options: { northAmericanFastPath: boolean },
): (input: string, defaultCountry: string) => NormalizedPhone {
  const { parsePhoneNumberFromString: parse } = parser;
  return (input, defaultCountry) => {
    // A leading apostrophe is how spreadsheets (and our own exports) mark a cell as text.
    const text = input.trim().replace(/^'+/, '').replace(/^tel:/i, '').trim();
    if (text === '') return { error: 'missing', message: 'No phone number' };
    if (SCIENTIFIC.test(text)) {
      return {
        error: 'not_a_number',
        message: 'The number was turned into scientific notation by a spreadsheet; its digits are lost',
      };
    }
    const country = parser.isSupportedCountry(defaultCountry) ? defaultCountry : undefined;
    if (options.northAmericanFastPath) {
      const e164 = validNorthAmerican(text, country);
      if (e164) return { e164 };
    }
    const parsed = parse(text, country);
    if (parsed?.isValid()) return { e164: parsed.number };

    if (!text.startsWith('+')) {
      const digits = text.replace(/\D/g, '').replace(/^00/, '');
      if (digits.length >= 8 && digits.length <= 15) {
        const international = parse(`+${digits}`);
        if (international?.isValid()) return { e164: international.number };
      }
    }
    // An invalid number written with its calling code has no country: name the code, not the default country.
    const numberCountry = parsed ? (parsed.country ?? `+${parsed.countryCallingCode}`) : country;
    return describeProblem(parser, text, country, numberCountry);
  };
}

function describeProblem(
  parser: PhoneParser,
  text: string,
  country: CountryCode | undefined,
  numberCountry: string | undefined,
): NormalizedPhone {
  const where = numberCountry ? ` for ${numberCountry}` : '';
  switch (parser.validatePhoneNumberLength(text, country)) {
    case 'NOT_A_NUMBER':
      return { error: 'not_a_number', message: 'Not a phone number' };
    case 'INVALID_COUNTRY':
      return text.startsWith('+') || text.startsWith('00')
        ? { error: 'invalid_country', message: 'Unknown country calling code' }
        : { error: 'invalid_country', message: 'No country code, and no default country to read it in' };
    case 'TOO_SHORT':
      return { error: 'too_short', message: `Too short${where}` };
    case 'TOO_LONG':
      return { error: 'too_long', message: `Too long${where}` };
    case 'INVALID_LENGTH':
      return { error: 'invalid_length', message: `Wrong number of digits${where}` };
    default:
      return { error: 'invalid_number', message: `Not a valid number${where}` };
  }
}

/*
 * The North American fast path. The countries of calling code 1 share one numbering plan; the library parses such a
 * number to its 10-digit national number, finds its country by trying each in turn (the leading digits the country
 * declares, or else whether the number is of one of its types) and calls it valid when it is of one of that country's
 * types. Below is that same decision on the library's own metadata, with each pattern compiled once. Only a number
 * written plainly takes it, and only its "valid" answer is used: anything else goes through the library.
 */

/**
 * +1 or 1 (optional), the area code (2–9 first; in parentheses or not), 3 digits, 4 digits; one space, dot or dash
 * between. Another first digit goes through the library, which may read it as a national prefix.
 */
const NORTH_AMERICAN = /^(?:(\+1|1)[ .-]?)?(?:\(([2-9]\d\d)\)|([2-9]\d\d))[ .-]?(\d{3})[ .-]?(\d{4})$/;
/** The number types the library tries, in its order. */
const NUMBER_TYPES = [
  'FIXED_LINE',
  'MOBILE',
  'PREMIUM_RATE',
  'TOLL_FREE',
  'SHARED_COST',
  'VOIP',
  'PERSONAL_NUMBER',
  'PAGER',
  'UAN',
  'VOICEMAIL',
] as const;

/** The accessors of the library's numbering plans this reads (its `Metadata` class, untyped in its declarations). */
interface NumberingPlan {
  leadingDigits(): string | undefined;
  nationalNumberPattern(): string;
  hasTypes(): boolean;
  type(type: string): { pattern(): string; possibleLengths(): number[] | undefined } | undefined;
}
interface Metadata {
  numberingPlan: NumberingPlan;
  selectNumberingPlan(country: string): void;
  getCountryCodesForCallingCode(callingCode: string): string[] | undefined;
}

interface NorthAmericanPlan {
  country: string;
  leadingDigits: RegExp | undefined;
  nationalNumber: RegExp;
  /** Without types, the national pattern alone decides validity, and no number is of a type. */
  hasTypes: boolean;
  /** Each type that has a pattern. */
  types: Array<{ pattern: RegExp; lengths: number[] | undefined }>;
}

const northAmericanPlans: NorthAmericanPlan[] = (() => {
  const core = requireFromHere('libphonenumber-js/core') as { Metadata: new (json: object) => Metadata };
  const metadata = new core.Metadata(requireFromHere('libphonenumber-js/metadata.max.json') as object);
  return (metadata.getCountryCodesForCallingCode('1') ?? []).map((country) => {
    metadata.selectNumberingPlan(country);
    const plan = metadata.numberingPlan;
    const leadingDigits = plan.leadingDigits();
    const types = NUMBER_TYPES.flatMap((name) => {
      const type = plan.type(name);
      return type?.pattern() ? [{ pattern: entirely(type.pattern()), lengths: type.possibleLengths() }] : [];
    });
    return {
      country,
      leadingDigits: leadingDigits ? new RegExp(leadingDigits) : undefined,
      nationalNumber: entirely(plan.nationalNumberPattern()),
      hasTypes: plan.hasTypes(),
      types,
    };
  });
})();
const NORTH_AMERICAN_COUNTRIES = new Set(northAmericanPlans.map((plan) => plan.country));
/** Their national number pattern takes 10 digits starting 2–9 whole: "1" before them is the calling code. */
const LEADING_ONE_COUNTRIES = new Set(['US', 'CA']);

/** The library's `getNumberType(...) !== undefined`. */
function isOfSomeType(nationalNumber: string, plan: NorthAmericanPlan) {
  if (!plan.nationalNumber.test(nationalNumber)) return false;
  return plan.types.some(
    (type) => (!type.lengths || type.lengths.includes(nationalNumber.length)) && type.pattern.test(nationalNumber),
  );
}

/** The library's `isValid()` for a number of this plan's country. */
function isValidIn(nationalNumber: string, plan: NorthAmericanPlan) {
  return plan.hasTypes ? isOfSomeType(nationalNumber, plan) : plan.nationalNumber.test(nationalNumber);
}

/** The E.164 form of a plainly written North American number the library would call valid; else undefined. */
function validNorthAmerican(text: string, defaultCountry: string | undefined): string | undefined {
  const match = NORTH_AMERICAN.exec(text);
  if (!match) return undefined;
  const [, prefix, bracketedArea, area, exchange, line] = match;
  const nationalNumber = `${bracketedArea ?? area}${exchange}${line}`;
  if (prefix === undefined && !(defaultCountry && NORTH_AMERICAN_COUNTRIES.has(defaultCountry))) return undefined;
  if (prefix === '1' && !(defaultCountry && LEADING_ONE_COUNTRIES.has(defaultCountry))) return undefined;
  // The library's country for the number: the first whose leading digits it starts with or, for a country declaring
  // none, of whose types it is. The number is valid if it is valid there; with no country found, ask the library.
  const plan = northAmericanPlans.find((candidate) =>
    candidate.leadingDigits
      ? nationalNumber.search(candidate.leadingDigits) === 0
      : isOfSomeType(nationalNumber, candidate),
  );
  return plan && isValidIn(nationalNumber, plan) ? `+1${nationalNumber}` : undefined;
}
