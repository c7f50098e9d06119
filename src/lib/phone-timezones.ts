/**
 * The time zones a phone number may be in, from libphonenumber's time zone map (longest matching prefix of the
 * E.164 digits). A number of one area may span several zones (US area code 605: Mountain and Central); a number the
 * map does not know answers an empty list, never a guess.
 */
import { createRequire } from 'node:module';
import { parsePhoneNumberFromString } from 'libphonenumber-js/max';

interface TimeZoneData {
  zones: string[];
  prefixes: Record<string, number[]>;
}

const data = createRequire(import.meta.url)('./phone-timezones.data.json') as TimeZoneData;
const LONGEST_PREFIX = Math.max(...Object.keys(data.prefixes).map((prefix) => prefix.length));
/** The map's answer for a whole country code: every zone of the country, which says nothing about the number. */
const UNKNOWN_ZONE = 'Etc/Unknown';

export function timeZonesOfNumber(e164: string): string[] {
  const digits = e164.replace(/\D/g, '');
  const countryCode = parsePhoneNumberFromString(e164)?.countryCallingCode ?? '';
  for (let length = Math.min(LONGEST_PREFIX, digits.length); length > 0; length--) {
    const zones = data.prefixes[digits.slice(0, length)];
    if (!zones) continue;
    // Only the country code matched: a country of several zones says nothing about where this number is.
    if (length <= countryCode.length && zones.length > 1) return [];
    return zones.map((index) => data.zones[index]!).filter((zone) => zone !== UNKNOWN_ZONE);
  }
  return [];
}
