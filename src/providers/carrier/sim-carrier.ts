/**
 * The built-in carrier ("sim"). It sells numbers only from ranges set aside for fiction, so no number it hands out
 * belongs to a real subscriber:
 * - every +1 (NANP) area code: NXX-555-0100 to 0199, the range reserved for films and examples;
 * - the UK: Ofcom's drama ranges (020 7946 0xxx in London, 0161 496 0xxx in Manchester, ...).
 * Each candidate must also be a valid local (fixed or mobile) number of the country for libphonenumber, so an area
 * code that does not exist there (or a toll-free or premium prefix) has no numbers. The offer for an area code is
 * deterministic: always the same numbers in the same order.
 */
import {
  getCountryCallingCode,
  isSupportedCountry,
  parsePhoneNumberFromString,
  type CountryCode,
} from 'libphonenumber-js/max';
import type { Carrier, CarrierCapability, InventoryProblem, NumberOffer } from './index.js';

/** A block of consecutive national numbers. */
interface Block {
  first: string;
  count: number;
}

/** Ofcom's numbers for drama, by area code (without the trunk 0); each block is 1,000 numbers. */
const UK_DRAMA_BLOCKS: Record<string, string> = {
  '20': '2079460000', // London
  '28': '2896496000', // Belfast
  '29': '2920180000', // Cardiff
  '113': '1134960000', // Leeds
  '114': '1144960000', // Sheffield
  '115': '1154960000', // Nottingham
  '116': '1164960000', // Leicester
  '117': '1174960000', // Bristol
  '118': '1184960000', // Reading
  '121': '1214960000', // Birmingham
  '131': '1314960000', // Edinburgh
  '141': '1414960000', // Glasgow
  '151': '1514960000', // Liverpool
  '161': '1614960000', // Manchester
  '191': '1914980000', // Tyneside
};

const LOCAL_TYPES = new Set(['FIXED_LINE', 'MOBILE', 'FIXED_LINE_OR_MOBILE']);

const isNanp = (country: CountryCode) => getCountryCallingCode(country) === '1';

/** The countries the carrier sells in: every +1 country, and the UK. */
function carrierSellsIn(country: string): boolean {
  return isSupportedCountry(country) && (isNanp(country) || country === 'GB');
}

function blocksFor(country: CountryCode, areaCode: string): Block[] {
  if (isNanp(country)) return /^[2-9]\d\d$/.test(areaCode) ? [{ first: `${areaCode}5550100`, count: 100 }] : [];
  const first = UK_DRAMA_BLOCKS[areaCode];
  return first ? [{ first, count: 1000 }] : [];
}

function* numbersIn(block: Block): Generator<string> {
  const first = Number(block.first);
  for (let i = 0; i < block.count; i++) yield String(first + i).padStart(block.first.length, '0');
}

function isLocalNumberOf(e164: string, country: CountryCode): boolean {
  const parsed = parsePhoneNumberFromString(e164);
  return !!parsed && parsed.country === country && parsed.isValid() && LOCAL_TYPES.has(parsed.getType() ?? '');
}

/** Inventories already worked out, by country and area code: only real area codes, so a few hundred at most. */
const inventories = new Map<string, NumberOffer[]>();

/** Every number the carrier could sell in the area, in a fixed order (taken or not), or why it sells none there. */
function simInventory(country: string, areaCode: string): NumberOffer[] | InventoryProblem {
  const known = inventories.get(`${country}:${areaCode}`);
  if (known) return known;
  const inventory = workOutInventory(country, areaCode);
  if (Array.isArray(inventory)) inventories.set(`${country}:${areaCode}`, inventory);
  return inventory;
}

function workOutInventory(country: string, areaCode: string): NumberOffer[] | InventoryProblem {
  if (!isSupportedCountry(country))
    return { problem: 'country', message: `${country} is not a country with phone numbers` };
  if (!carrierSellsIn(country)) {
    return {
      problem: 'country',
      message: `the built-in carrier sells numbers in the +1 countries (US, CA, ...) and GB, not in ${country}`,
    };
  }
  const callingCode = getCountryCallingCode(country);
  const capabilities: CarrierCapability[] = isNanp(country) ? ['voice', 'sms'] : ['voice'];
  const offers: NumberOffer[] = [];
  for (const block of blocksFor(country, areaCode)) {
    // Whether a prefix exists is decided by its first number: a refused area code costs one check, not a hundred.
    if (!isLocalNumberOf(`+${callingCode}${block.first}`, country)) continue;
    for (const national of numbersIn(block)) {
      const number = `+${callingCode}${national}`;
      if (isLocalNumberOf(number, country)) offers.push({ number, country, areaCode, capabilities });
    }
  }
  if (offers.length > 0) return offers;
  const codes = isNanp(country) ? '' : ` (it has ${Object.keys(UK_DRAMA_BLOCKS).join(', ')})`;
  return {
    problem: 'areaCode',
    message: `${areaCode} is not a local area code the built-in carrier has numbers in for ${country}${codes}`,
  };
}

/** The carrier's offer for one E.164 number, or null when it does not sell that number. */
function simOfferFor(e164: string): NumberOffer | null {
  const parsed = parsePhoneNumberFromString(e164);
  const country = parsed?.country;
  if (!parsed || !country || !carrierSellsIn(country)) return null;
  const national = parsed.nationalNumber;
  const areaCodes = isNanp(country)
    ? [national.slice(0, 3)]
    : Object.keys(UK_DRAMA_BLOCKS).filter((code) => national.startsWith(code));
  for (const areaCode of areaCodes) {
    const inventory = simInventory(country, areaCode);
    const offer = Array.isArray(inventory) ? inventory.find((o) => o.number === parsed.number) : undefined;
    if (offer) return offer;
  }
  return null;
}

export function createSimCarrier(): Carrier {
  return {
    name: 'sim',
    inventory: async (country, areaCode) => simInventory(country, areaCode),
    offerFor: async (e164) => simOfferFor(e164),
  };
}
