import { Type, type Static } from 'typebox';
import { DateTime, NamedRef, Nullable, PageFields, PageQuery, SingleLineText, Uuid } from '../../http/schemas.js';
import { DUPLICATE_POLICIES, IMPORT_STATES } from './contacts.tables.js';
import { READING_SHARE } from './contacts.import-async.js';
import { SEARCH_COUNT_AHEAD } from './contacts.search.js';

const Country = Type.String({
  pattern: '^[A-Za-z]{2}$',
  description: 'ISO 3166-1 alpha-2 country for numbers written without a country code, e.g. US, GB, DE.',
});

export const ImportQuery = Type.Object(
  {
    name: SingleLineText({ minLength: 1, maxLength: 200, description: 'Name of the new list.' }),
    defaultCountry: Type.Optional(Country),
    duplicatePolicy: Type.Enum([...DUPLICATE_POLICIES], {
      default: 'skip',
      description:
        'A number already in the account, or repeated in the file: "skip" keeps the contact as it is ' +
        '(it still joins the list); "update" overwrites its fields with the non-empty imported values.',
    }),
  },
  { additionalProperties: false },
);

export type ImportQuery = Static<typeof ImportQuery>;

export const CsvBody = {
  content: {
    'text/csv': {
      schema: Type.Unknown({
        description:
          'A CSV file with a header row (UTF-8 with or without BOM, or UTF-16; "," ";" tab or "|" delimited). ' +
          'Headers are matched loosely: phone / Phone Number / mobile, first_name / First Name, email, company, timezone. ' +
          'Other columns are kept as attributes.',
      }),
    },
  },
};

export const ImportCounts = Type.Object(
  {
    rows: Type.Integer({ description: 'Data rows in the file (blank rows are not counted).' }),
    imported: Type.Integer({ description: 'New contacts created.' }),
    updated: Type.Integer({ description: 'Existing contacts updated (policy "update").' }),
    duplicates: Type.Integer({
      description: 'Rows repeating a number earlier in the file, plus, with "skip", numbers already in the account.',
    }),
    invalid: Type.Integer({ description: 'Rows without a valid phone number.' }),
    dnc: Type.Integer({ description: 'Contacts of the list on the do-not-call list (flagged, never dialed).' }),
  },
  { title: 'ContactImportCounts' },
);

export const RowError = Type.Object(
  {
    row: Type.Integer({ description: 'Row in the file, counting the header as row 1.' }),
    phone: Type.String({ description: 'The phone cell as written.' }),
    reason: Type.String({
      description:
        'missing, not_a_number, invalid_country, too_short, too_long, invalid_length or invalid_number (the phone); ' +
        'too_many_attributes or attributes_too_large (the other columns exceed what a contact holds: 200 non-empty ones, ' +
        '65,536 characters in all); nul_character (a cell holds U+0000, which cannot be stored).',
    }),
    message: Type.String(),
  },
  { title: 'ContactImportRowError' },
);

export const ImportResult = Type.Object(
  {
    listId: Uuid,
    counts: ImportCounts,
    errors: Type.Array(RowError, { description: 'The first 100 invalid rows.' }),
  },
  {
    title: 'ContactImportResult',
    description: 'The new list, its counts, and the first rows that could not be imported.',
  },
);

export const ImportFailure = Type.Object(
  {
    code: Type.String({
      description:
        'An error code of the API: invalid_csv (details.line names the line), validation_failed, or ' +
        'service_unavailable when the server stopped before the import completed (details.reason server_stopped).',
    }),
    message: Type.String(),
    details: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  {
    title: 'ContactImportFailure',
    description: 'Why an import failed, as an error body would say it. Nothing of the file was imported.',
  },
);

export const ContactListImport = Type.Object(
  {
    state: Type.Enum([...IMPORT_STATES], {
      description:
        'processing: the file is being read and its contacts saved; completed: the counts (and, on the list, the ' +
        'row errors) are final; failed: the import stopped and imported nothing, `failure` says why.',
    }),
    rowsProcessed: Type.Integer({
      minimum: 0,
      description: "Data rows read and checked so far; once completed, the file's row count.",
    }),
    bytesRead: Type.Integer({ minimum: 0, description: 'Bytes of the file read so far.' }),
    bytesTotal: Type.Integer({
      minimum: 0,
      description: 'Size of the file in bytes (0 for lists imported before progress was recorded).',
    }),
    fraction: Type.Number({
      minimum: 0,
      maximum: 1,
      description:
        `Share of the import done, from 0 to 1: reading and checking the file takes it to ${READING_SHARE} ` +
        '(bytes read of the total: the row count is known only at the end), saving the contacts takes it to 1.',
    }),
    updatedAt: Type.String({
      format: 'date-time',
      description: 'When the progress was last written: a few times a second while the import runs.',
    }),
    finishedAt: Nullable(DateTime),
    failure: Nullable(ImportFailure),
  },
  {
    title: 'ContactListImport',
    description:
      'The import that makes the list. With Prefer: respond-async the list is answered while it still processes; ' +
      'poll GET /v1/contact-lists/{id} until the state is completed or failed.',
  },
);

export const ContactList = Type.Object(
  {
    id: Uuid,
    name: Type.String(),
    defaultCountry: Type.String(),
    duplicatePolicy: Type.Enum([...DUPLICATE_POLICIES]),
    counts: ImportCounts,
    import: ContactListImport,
    createdAt: DateTime,
  },
  {
    title: 'ContactList',
    description:
      'A contact list imported from CSV, with its import: its state and progress, and its counts (all 0 until the ' +
      'import has completed).',
  },
);

export const ContactListDetail = Type.Object(
  {
    ...ContactList.properties,
    errors: Type.Array(RowError, {
      description: 'The first 100 rows that could not be imported, as the import answered them; empty until completed.',
    }),
  },
  { title: 'ContactListDetail', description: 'A contact list, its import, and the rows it could not import.' },
);

export const ContactListPage = Type.Object(
  { contactLists: Type.Array(ContactList), ...PageFields },
  { title: 'ContactListPage' },
);

export const Attributes = Type.Record(Type.String(), Type.String(), {
  description: 'Columns of the imported file that have no field of their own, by header.',
});

export const Contact = Type.Object(
  {
    id: Uuid,
    firstName: Nullable(Type.String()),
    lastName: Nullable(Type.String()),
    phone: Type.String({ description: 'E.164, e.g. +14155550123.' }),
    email: Nullable(Type.String()),
    company: Nullable(Type.String()),
    timezone: Nullable(Type.String({ description: 'IANA time zone, e.g. America/New_York.' })),
    attributes: Attributes,
    dnc: Type.Boolean({ description: 'The number is on the do-not-call list: no campaign dials it.' }),
    createdAt: DateTime,
    updatedAt: DateTime,
  },
  { title: 'Contact', description: 'A contact as lists show it.' },
);

export const ContactDetail = Type.Object(
  {
    ...Contact.properties,
    lists: Type.Array(NamedRef),
  },
  { title: 'ContactDetail', description: 'A contact, with the lists it is in.' },
);

export const ContactPage = Type.Object(
  {
    contacts: Type.Array(Contact),
    ...PageFields,
    total: Type.Integer({
      minimum: 0,
      description:
        `Contacts matching the filters. With \`q\`, matches are counted up to ${SEARCH_COUNT_AHEAD.toLocaleString('en-US')} past \`offset\` and no further: ` +
        '`total` is then at least that many (see `totalExact`), and still more than `offset + limit` whenever ' +
        'there is a next page.',
    }),
    totalExact: Type.Boolean({
      description: 'false when a `q` search stopped counting: there are more matches than `total`.',
    }),
  },
  { title: 'ContactPage' },
);

/** Filters shared by GET /v1/contacts, GET /v1/contact-lists/{id}/contacts and the CSV export. */
export const ContactFilterFields = {
  q: Type.Optional(
    Type.String({
      minLength: 3,
      maxLength: 100,
      description:
        'Free text over name, email and phone, matched anywhere and ignoring case: 3 to 100 characters, no control ' +
        'characters, and something to look up: 3 letters or digits in a row, or words separated by a space or ' +
        'punctuation ("ada", "wu li", "415 555"). Punctuation alone is refused.',
    }),
  ),
  phone: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'One number, in any common format.' })),
  dnc: Type.Optional(
    Type.Boolean({ description: 'true: only numbers on the do-not-call list; false: only the others.' }),
  ),
};

export const ContactQuery = Type.Object(
  { listId: Type.Optional(Uuid), ...ContactFilterFields, ...PageQuery },
  { additionalProperties: false },
);
export type ContactQuery = Static<typeof ContactQuery>;

export const ListContactsQuery = Type.Object({ ...ContactFilterFields, ...PageQuery }, { additionalProperties: false });
export type ListContactsQuery = Static<typeof ListContactsQuery>;

export const ExportQuery = Type.Object(
  { listId: Type.Optional(Uuid), ...ContactFilterFields },
  { additionalProperties: false },
);
export type ExportQuery = Static<typeof ExportQuery>;

const Text = (maxLength: number) => Nullable(SingleLineText({ maxLength }));

export const PatchContactBody = Type.Object(
  {
    firstName: Type.Optional(Text(200)),
    lastName: Type.Optional(Text(200)),
    phone: Type.Optional(
      Type.String({ minLength: 1, maxLength: 64, description: 'Any common format; stored in E.164.' }),
    ),
    email: Type.Optional(Nullable(Type.String({ format: 'email', maxLength: 320 }))),
    company: Type.Optional(Text(200)),
    timezone: Type.Optional(Nullable(SingleLineText({ minLength: 1, maxLength: 64, description: 'IANA time zone.' }))),
    attributes: Type.Optional(
      Type.Record(Type.String({ minLength: 1, maxLength: 200 }), Nullable(Type.String({ maxLength: 2000 })), {
        maxProperties: 200,
        description:
          'Merged into the attributes: a string sets a key, null removes it. A contact holds at most 200 attributes ' +
          'and 65,536 characters of names and values in all.',
      }),
    ),
  },
  { additionalProperties: false, minProperties: 1 },
);
