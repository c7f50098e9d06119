/**
 * Forgiving header matching for contact files exported from other CRMs (HubSpot, Salesforce,
 * Google Contacts, Outlook, spreadsheets). Headers are compared by headerKey(): case, spaces and
 * punctuation do not matter. Columns that feed no field are kept as the contact's attributes.
 */
import { headerKey } from '../../lib/csv.js';
import { canonicalTimeZone } from '../../lib/timezone.js';
import type { ContactAttributes } from './contacts.tables.js';

type Field = 'phone' | 'firstName' | 'lastName' | 'fullName' | 'email' | 'company' | 'timezone';

/** For each field, the header keys that feed it, best first: the first non-empty one in a row wins. */
const SYNONYMS: Record<Field, string[]> = {
  phone: [
    'phone', 'phonenumber', 'phone1value', 'primaryphone', 'phone1', 'mobile', 'mobilephone', 'mobilephonenumber',
    'mobilenumber', 'cell', 'cellphone', 'cellnumber', 'telephone', 'telephonenumber', 'tel', 'contactnumber',
    'contactphone', 'number', 'msisdn', 'workphone', 'businessphone', 'homephone', 'otherphone', 'phone2value',
    'phone3value', 'phone2', 'phone3', 'telefon', 'telefonnummer', 'handy', 'mobil', 'mobiltelefon', 'telefono',
    'movil', 'celular', 'portable',
  ],
  firstName: ['firstname', 'first', 'givenname', 'fname', 'forename', 'vorname', 'prenom', 'nombre'],
  lastName: ['lastname', 'last', 'surname', 'familyname', 'lname', 'nachname', 'nom', 'apellido', 'apellidos'],
  fullName: ['name', 'fullname', 'contactname', 'displayname', 'contact'],
  email: ['email', 'emailaddress', 'email1value', 'primaryemail', 'workemail', 'mail', 'email1', 'emailaddress1', 'courriel', 'correo'],
  company: [
    'company', 'companyname', 'organization', 'organisation', 'organization1name', 'organizationname',
    'accountname', 'account', 'business', 'businessname', 'employer', 'firma', 'unternehmen', 'societe', 'entreprise',
    'empresa',
  ],
  timezone: ['timezone', 'tz', 'timezonename', 'ianatimezone', 'contacttimezone'],
};

/** Header forms named in error messages, so a user knows what to rename a column to. */
export const PHONE_HEADER_EXAMPLES = ['phone', 'Phone Number', 'mobile', 'Mobile Phone', 'Phone 1 - Value', 'telephone'];

/** Columns holding a phone number, best first. */
export function phoneColumns(headers: string[]): number[] {
  const keys = headers.map(headerKey);
  return SYNONYMS.phone.flatMap((synonym) => keys.flatMap((key, index) => (key === synonym ? [index] : [])));
}

export interface MappedRow {
  phone: string;
  firstName: string | null;
  lastName: string | null;
  email: string | null;
  company: string | null;
  timezone: string | null;
  attributes: ContactAttributes | null;
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
  const columns = Object.fromEntries((Object.keys(SYNONYMS) as Field[]).map((f) => [f, columnsOf(f)])) as Record<Field, number[]>;
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

      let attributes: ContactAttributes | null = null;
      for (let index = 0; index < cells.length; index++) {
        const value = cells[index];
        if (!value || used[index]) continue;
        attributes ??= {};
        attributes[names[index] ?? `column_${index + 1}`] = value;
      }
      return { phone, firstName, lastName, email: email?.toLowerCase() ?? null, company, timezone, attributes };
    },
  };
}
