/**
 * Phone numbers to check normalization against: from every country libphonenumber-js knows (its example number in
 * each common writing, and valid and invalid variations of it), every North American area code, and odd writings.
 * Deterministic (a seeded generator), so a difference found is found again.
 */
import { createRequire } from 'node:module';
import { getCountries, getCountryCallingCode, getExampleNumber, type Examples } from 'libphonenumber-js/max';

const examples = createRequire(import.meta.url)('libphonenumber-js/examples.mobile.json') as Examples;

export interface PhoneCase {
  input: string;
  defaultCountry: string;
}

/** A small seeded generator (mulberry32). */
export function seededRandom(seed: number) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const digitsOf = (random: () => number, count: number) =>
  Array.from({ length: count }, () => Math.floor(random() * 10)).join('');

/** Ways people write a 10-digit North American number (area, exchange, line). */
export const NORTH_AMERICAN_WRITINGS = [
  (a: string, e: string, l: string) => `(${a}) ${e}-${l}`,
  (a: string, e: string, l: string) => `+1 ${a} ${e} ${l}`,
  (a: string, e: string, l: string) => `${a}.${e}.${l}`,
  (a: string, e: string, l: string) => `+1${a}${e}${l}`,
  (a: string, e: string, l: string) => `${a}-${e}-${l}`,
  (a: string, e: string, l: string) => `1-${a}-${e}-${l}`,
  (a: string, e: string, l: string) => `${a}${e}${l}`,
  (a: string, e: string, l: string) => `1${a}${e}${l}`,
  (a: string, e: string, l: string) => `+1 (${a}) ${e}-${l}`,
  (a: string, e: string, l: string) => `(${a})${e}-${l}`,
];

/** Every country's example number written several ways, and variations of it, read in several default countries. */
function everyCountry(random: () => number): PhoneCase[] {
  const cases: PhoneCase[] = [];
  for (const country of getCountries()) {
    const code = getCountryCallingCode(country);
    const example = getExampleNumber(country, examples);
    const defaults = [country, 'US', 'GB', 'XX'];
    const add = (input: string, ...countries: string[]) => {
      for (const defaultCountry of countries) cases.push({ input, defaultCountry });
    };
    if (example) {
      const national = example.nationalNumber;
      add(example.number, ...defaults);
      add(example.formatInternational(), country, 'US');
      add(example.formatNational(), ...defaults);
      add(national, country, 'US');
      add(`00${code}${national}`, country, 'US');
      add(`${code}${national}`, country, 'US', 'XX');
      add(`'${example.number}`, country);
      add(`tel:${example.number}`, country);
      // Variations: each last digit, one digit fewer or more, each first digit, random tails.
      for (let digit = 0; digit < 10; digit++) {
        const lastChanged = `${national.slice(0, -1)}${digit}`;
        add(lastChanged, country);
        add(`+${code}${lastChanged}`, 'US');
        const firstChanged = `${digit}${national.slice(1)}`;
        add(firstChanged, country);
        add(`+${code}${firstChanged}`, country);
      }
      add(national.slice(0, -1), country, 'US');
      add(`+${code}${national.slice(0, -1)}`, country);
      add(`${national}${digitsOf(random, 1)}`, country, 'US');
      add(`+${code}${national}${digitsOf(random, 2)}`, country);
      for (let i = 0; i < 12; i++) {
        const keep = 1 + Math.floor(random() * Math.min(4, national.length - 1));
        const varied = national.slice(0, keep) + digitsOf(random, national.length - keep);
        add(varied, country);
        add(`+${code} ${varied}`, 'US');
      }
    }
    for (let length = 4; length <= 13; length += 3) add(`+${code}${digitsOf(random, length)}`, country);
  }
  return cases;
}

/** Every area code 200–999 with random exchanges, written every common way, read as US, CA and elsewhere. */
function everyNorthAmericanAreaCode(random: () => number): PhoneCase[] {
  const cases: PhoneCase[] = [];
  const caribbean = ['AG', 'BS', 'DO', 'JM', 'PR', 'SX', 'TT', 'VI', 'GU', 'MP'];
  for (let area = 200; area <= 999; area++) {
    for (let i = 0; i < 4; i++) {
      const exchange = String(200 + Math.floor(random() * 800));
      const line = digitsOf(random, 4);
      const write = NORTH_AMERICAN_WRITINGS[Math.floor(random() * NORTH_AMERICAN_WRITINGS.length)]!;
      const input = write(String(area), exchange, line);
      const defaultCountry = ['US', 'CA', caribbean[i % caribbean.length]!, 'GB', 'XX'][(area + i) % 5]!;
      cases.push({ input, defaultCountry });
    }
    // Exchanges starting 0 or 1, and an area code's every exchange block for the Caribbean's.
    cases.push({ input: `${area}${Math.floor(random() * 2)}${digitsOf(random, 6)}`, defaultCountry: 'US' });
  }
  const caribbeanAreas = ['242', '246', '264', '268', '284', '340', '345', '441', '473', '649', '658', '664', '670'];
  for (const area of [...caribbeanAreas, '671', '684', '721', '758', '767', '784', '787', '809', '829', '849']) {
    for (let exchange = 200; exchange <= 999; exchange += 1 + Math.floor(random() * 6)) {
      cases.push({ input: `+1${area}${exchange}${digitsOf(random, 4)}`, defaultCountry: 'US' });
      cases.push({ input: `${area}-${exchange}-${digitsOf(random, 4)}`, defaultCountry: 'CA' });
    }
  }
  return cases;
}

/** Writings at the edges of what a parser accepts. */
const ODD: PhoneCase[] = [
  '',
  '   ',
  "'",
  'n/a',
  '555-0100',
  '1.41556E+10',
  '+1 415 555 0123 x12',
  '(415) 555-0123 ext. 7',
  '+1-800-FLOWERS',
  '1-800-356-9377',
  '+1 (415)555-0123',
  '+1 415  555 0123',
  '+1 415-555-0123.',
  '+1 0415 555 0123',
  '+11 415 555 0123',
  '1 (415) 555-0123',
  '011 1 415 555 0123',
  '0014155550123',
  '+１ ４１５ ５５５ ０１２３',
  '(415) 555-0123)',
  '415 555 01234',
  '415 555 012',
  '+1 415 555 012',
  '+14155550123456',
  '+999 123 456',
  '+0 415 555 0123',
  '+44 (0) 20 7946 0958',
  '020 7946 0958',
  '+33 (0)6 12 34 56 78',
  'tel:+1-415-555-0123',
  "''+14155550123",
].flatMap((input) => ['US', 'CA', 'GB', 'FR', 'JM', 'XX', ''].map((defaultCountry) => ({ input, defaultCountry })));

export function phoneCorpus(seed = 22): PhoneCase[] {
  const random = seededRandom(seed);
  return [...everyCountry(random), ...everyNorthAmericanAreaCode(random), ...ODD];
}
