/**
 * Forgiving header matching for contact files exported from other CRMs (HubSpot, Salesforce,
 * Google Contacts, Outlook, spreadsheets). Headers are compared by headerKey(): case, spaces and
 * punctuation do not matter. Columns that feed no field are kept as the contact's attributes.
 */
import { headerKey } from '../../lib/csv.js';
import { PHONE_HEADERS } from '../../db/staging.js';
import { canonicalTimeZone } from '../../lib/timezone.js';
import type { ContactAttributes } from './contacts.tables.js';

type Field = 'phone' | 'firstName' | 'lastName' | 'fullName' | 'email' | 'company' | 'timezone';

/** For each field, the header keys that feed it, best first: the first non-empty one in a row wins. */
const SYNONYMS: Record<Field, string[]> = {
  phone: PHONE_HEADERS,
  firstName: ['firstname', 'first', 'givenname', 'fname', 'forename', 'vorname', 'prenom', 'nombre'],
  lastName: ['lastname', 'last', 'surname', 'familyname', 'lname', 'nachname', 'nom', 'apellido', 'apellidos'],
  fullName: ['name', 'fullname', 'contactname', 'displayname', 'contact'],
  email: [
    'email',
    'emailaddress',
    'email1value',
    'primaryemail',
    'workemail',
    'mail',
    'email1',
    'emailaddress1',
    'courriel',
    'correo',
  ],
  company: [
    'company',
    'companyname',
    'organization',
    'organisation',
    'organization1name',
    'organizationname',
    'accountname',
    'account',
    'business',
    'businessname',
    'employer',
    'firma',
    'unternehmen',
    'societe',
    'entreprise',
    'empresa',
  ],
  timezone: ['timezone', 'tz', 'timezonename', 'ianatimezone', 'contacttimezone'],
};

/**
 * A contact holds at most this many attributes, with at most this many characters of names and values in all:
 * lists carry up to 500 contacts and the export streams every one, so one contact must stay small.
 */
export const MAX_ATTRIBUTES = 200;
export const MAX_ATTRIBUTE_CHARS = 65_536;

export type AttributesProblem = 'too_many_attributes' | 'attributes_too_large';

/** Why attributes (after a merge, say) exceed a contact's limits, or null when they fit. */
export function attributesProblem(attributes: Record<string, string>): AttributesProblem | null {
  let count = 0;
  let chars = 0;
  for (const key in attributes) {
    count++;
    chars += key.length + attributes[key]!.length;
  }
  if (count > MAX_ATTRIBUTES) return 'too_many_attributes';
  return chars > MAX_ATTRIBUTE_CHARS ? 'attributes_too_large' : null;
}

/** For PATCH: what is wrong with a contact's attributes once changes are applied (null removes a key), or null. */
export function patchedAttributesProblem(
  current: Record<string, string>,
  changes: Record<string, string | null>,
): string | null {
  const merged = new Map(Object.entries(current));
  for (const [key, value] of Object.entries(changes)) {
    if (value === null) merged.delete(key);
    else merged.set(key, value);
  }
  let chars = 0;
  for (const [key, value] of merged) chars += key.length + value.length;
  if (merged.size > MAX_ATTRIBUTES)
    return `would give the contact ${merged.size} attributes, more than the ${MAX_ATTRIBUTES} it may hold (remove some with null)`;
  if (chars > MAX_ATTRIBUTE_CHARS) {
    return `would give the contact ${chars} characters of attributes, more than the ${MAX_ATTRIBUTE_CHARS} it may hold (remove some with null)`;
  }
  return null;
}

export const ATTRIBUTE_PROBLEM_MESSAGES: Record<AttributesProblem, string> = {
  too_many_attributes: `More than ${MAX_ATTRIBUTES} non-empty columns to keep as attributes (a contact holds at most ${MAX_ATTRIBUTES})`,
  attributes_too_large: `The columns kept as attributes hold more than ${MAX_ATTRIBUTE_CHARS} characters in all (names and values)`,
};

export interface MappedRow {
  phone: string;
  firstName: string | null;
  lastName: string | null;
  email: string | null;
  company: string | null;
  timezone: string | null;
  attributes: ContactAttributes | null;
  /** Set when the row's other columns exceed a contact's attribute limits; attributes is then null. */
  attributesProblem: AttributesProblem | null;
}

export interface HeaderMap {
  hasPhone: boolean;
  map(cells: string[]): MappedRow;
}

/** Attribute names: the header as written; a blank or repeated header gets a unique name. */
function attributeNames(headers: string[]): string[] {
  const seen = new Map<string, number>();
  return headers.map((raw, index) => {
    const base = raw.trim() || `column_${index + 1}`;
    const count = (seen.get(base) ?? 0) + 1;
    seen.set(base, count);
    return count === 1 ? base : `${base} (${count})`;
  });
}

export function mapHeaders(headers: string[]): HeaderMap {
  const keys = headers.map(headerKey);
  const names = attributeNames(headers);
  const columnsOf = (field: Field) =>
    SYNONYMS[field].flatMap((synonym) => keys.flatMap((key, index) => (key === synonym ? [index] : [])));
  const columns = Object.fromEntries((Object.keys(SYNONYMS) as Field[]).map((f) => [f, columnsOf(f)])) as Record<
    Field,
    number[]
  >;
  const used = new Uint8Array(headers.length);

  function take(cells: string[], field: Field): string | null {
    for (const index of columns[field]) {
      const value = cells[index];
      if (value) {
        used[index] = 1;
        return value;
      }
    }
    return null;
  }

  return {
    hasPhone: columns.phone.length > 0,
    map(cells) {
      used.fill(0);
      const phone = take(cells, 'phone') ?? '';
      let firstName = take(cells, 'firstName');
      let lastName = take(cells, 'lastName');
      if (firstName === null && lastName === null) {
        const full = take(cells, 'fullName');
        if (full !== null) {
          const space = full.search(/\s/);
          firstName = space < 0 ? full : full.slice(0, space);
          lastName = space < 0 ? null : full.slice(space).trim() || null;
        }
      }
      const email = take(cells, 'email');
      const company = take(cells, 'company');
      let timezone = take(cells, 'timezone');
      if (timezone !== null) {
        const canonical = canonicalTimeZone(timezone);
        // An unknown zone is not dropped silently: it stays visible as an attribute.
        if (canonical === null) used[columns.timezone.find((i) => cells[i] === timezone)!] = 0;
        timezone = canonical;
      }

      // Counted before any object is built: a row past the limits costs no more than reading it.
      let count = 0;
      let chars = 0;
      for (let index = 0; index < cells.length; index++) {
        const value = cells[index];
        if (!value || used[index]) continue;
        count++;
        chars += value.length + (names[index]?.length ?? 7 + String(index + 1).length);
      }
      let attributes: ContactAttributes | null = null;
      let attributesProblem: AttributesProblem | null = null;
      if (count > MAX_ATTRIBUTES) attributesProblem = 'too_many_attributes';
      else if (chars > MAX_ATTRIBUTE_CHARS) attributesProblem = 'attributes_too_large';
      else if (count > 0) {
        // Without a prototype, a column headed __proto__ (or constructor) is an attribute like any other.
        attributes = Object.create(null) as ContactAttributes;
        for (let index = 0; index < cells.length; index++) {
          const value = cells[index];
          if (!value || used[index]) continue;
          attributes[names[index] ?? `column_${index + 1}`] = value;
        }
      }
      return {
        phone,
        firstName,
        lastName,
        email: email?.toLowerCase() ?? null,
        company,
        timezone,
        attributes,
        attributesProblem,
      };
    },
  };
}
