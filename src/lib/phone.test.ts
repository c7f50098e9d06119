import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as plainLibrary from 'libphonenumber-js/max';
import { phoneCorpus } from '../../test/phone-corpus.js';
import { compiledPatterns, countryOfNumber, createPhoneNormalizer, normalizePhone } from './phone.js';

/** normalizePhone as it was: the library's ES build as published (no compiled-pattern cache), no fast path. */
const plain = createPhoneNormalizer(plainLibrary, { northAmericanFastPath: false });

test('answers are those of the plain library, for numbers of every country and every North American area code', (t) => {
  const corpus = phoneCorpus();
  const differences: string[] = [];
  const outcomes = { valid: 0, invalid: 0 };
  for (const { input, defaultCountry } of corpus) {
    const expected = plain(input, defaultCountry);
    const actual = normalizePhone(input, defaultCountry);
    outcomes['e164' in expected ? 'valid' : 'invalid']++;
    if (JSON.stringify(actual) !== JSON.stringify(expected))
      differences.push(
        `${JSON.stringify(input)} in ${defaultCountry}: ${JSON.stringify(actual)}, expected ${JSON.stringify(expected)}`,
      );
    if ('e164' in expected) {
      const country = plainLibrary.parsePhoneNumberFromString(expected.e164)?.country;
      if (countryOfNumber(expected.e164) !== country)
        differences.push(`country of ${expected.e164}: ${countryOfNumber(expected.e164)}, expected ${country}`);
    }
  }
  assert.deepEqual(differences.slice(0, 20), [], `${differences.length} differences in ${corpus.length} numbers`);
  // The corpus holds both kinds in quantity, or it would prove little.
  assert.ok(outcomes.valid > 10_000 && outcomes.invalid > 10_000, JSON.stringify(outcomes));
  t.diagnostic(
    `${corpus.length} numbers from ${plainLibrary.getCountries().length} countries: ${outcomes.valid} valid, ${outcomes.invalid} not`,
  );
});

test("the library's pattern matching goes through the compiled-pattern cache", () => {
  assert.equal(compiledPatterns.inEffect, true);
  const before = compiledPatterns.matches;
  assert.deepEqual(normalizePhone('07400 123456', 'GB'), { e164: '+447400123456' });
  assert.ok(compiledPatterns.matches > before);
  assert.ok(compiledPatterns.kept > 0);
});

test('a plainly written valid North American number is answered without the library', () => {
  const before = compiledPatterns.matches;
  for (const [input, country] of [
    ['(415) 555-0123', 'US'],
    ['+1 242 357 1234', 'GB'],
    ['1-415-555-0123', 'CA'],
    ['876.927.1234', 'JM'],
  ] as const) {
    assert.ok('e164' in normalizePhone(input, country), input);
  }
  assert.equal(compiledPatterns.matches, before);
});

test('the fast path leaves invalid and unusual North American writings to the library', () => {
  const cases: Array<[string, string]> = [
    ['(415) 155-0123', 'US'], // exchange starting 1: not a valid number
    ['(999) 555-0123', 'US'], // no such area code
    ['1 415 555 0123', 'JM'], // the leading 1 read in a country whose national pattern does not take it
    ['415 555 0123', 'GB'], // no calling code, and a default country outside North America
    ['+1 415 555 0123 x12', 'US'], // an extension
  ];
  for (const [input, country] of cases) assert.deepEqual(normalizePhone(input, country), plain(input, country), input);
});
