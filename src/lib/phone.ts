import {
  isSupportedCountry,
  parsePhoneNumberFromString,
  validatePhoneNumberLength,
  type CountryCode,
} from 'libphonenumber-js/max';

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
export function normalizePhone(input: string, defaultCountry: string): NormalizedPhone {
  // A leading apostrophe is how spreadsheets (and our own exports) mark a cell as text.
  const text = input.trim().replace(/^'+/, '').replace(/^tel:/i, '').trim();
  if (text === '') return { error: 'missing', message: 'No phone number' };
  if (SCIENTIFIC.test(text)) {
    return {
      error: 'not_a_number',
      message: 'The number was turned into scientific notation by a spreadsheet; its digits are lost',
    };
  }
  const country = isSupportedCountry(defaultCountry) ? defaultCountry : undefined;
  const parsed = parsePhoneNumberFromString(text, country);
  if (parsed?.isValid()) return { e164: parsed.number };

  if (!text.startsWith('+')) {
    const digits = text.replace(/\D/g, '').replace(/^00/, '');
    if (digits.length >= 8 && digits.length <= 15) {
      const international = parsePhoneNumberFromString(`+${digits}`);
      if (international?.isValid()) return { e164: international.number };
    }
  }
  // An invalid number written with its calling code has no country: name the code, not the default country.
  const numberCountry = parsed ? (parsed.country ?? `+${parsed.countryCallingCode}`) : country;
  return describeProblem(text, country, numberCountry);
}

function describeProblem(
  text: string,
  country: CountryCode | undefined,
  numberCountry: string | undefined,
): NormalizedPhone {
  const where = numberCountry ? ` for ${numberCountry}` : '';
  switch (validatePhoneNumberLength(text, country)) {
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
