import { Readable } from 'node:stream';
import { Type } from 'typebox';
import type { App } from '../../http/types.js';
import { allow } from '../../http/access.js';
import { IdParams, PageOnlyQuery, responses } from '../../http/schemas.js';
import { closeIfBodyUnread, csvUpload } from '../../http/csv-body.js';
import type { ContactsService } from './contacts.service.js';
import { prefersAsync } from './contacts.import-async.js';
import {
  ContactDetail,
  ContactList,
  ContactListDetail,
  ContactListPage,
  ContactPage,
  ContactQuery,
  CsvBody,
  ExportQuery,
  ImportQuery,
  ImportResult,
  ListContactsQuery,
  PatchContactBody,
} from './contacts.schemas.js';

const read = allow.account('account.read');
const write = allow.account('contacts.write');
const tags = ['contacts'];
const CsvFile = {
  content: {
    'text/csv': {
      schema: Type.String({
        description: 'CSV, one contact per row; cells starting with = + - @ are prefixed with an apostrophe.',
      }),
    },
  },
};

export function contactsRoutes(app: App, { contacts }: { contacts: ContactsService }) {
  contactListRoutes(app, contacts);
  contactRoutes(app, contacts);
  // After the last request: imports still running get half the shutdown grace to complete, then fail cleanly.
  app.addHook('onClose', async () => {
    await contacts.stopImports();
  });
}

const ImportHeaders = Type.Object({
  prefer: Type.Optional(
    Type.String({
      description:
        'respond-async: answer 202 with the list as soon as the file is received and its header checked, and import ' +
        'the rows in the background (poll the Location). Without it, the answer waits for the whole import.',
      examples: ['respond-async'],
    }),
  ),
});

/** Lists: an import makes one. */
function contactListRoutes(app: App, contacts: ContactsService) {
  app.post(
    '/contact-lists',
    {
      config: { access: write, csvBody: true },
      schema: {
        operationId: 'importContactList',
        tags,
        summary: 'Import a CSV file as a new contact list',
        description:
          'Streams the file; rows with an invalid phone are skipped and reported (first 100), never failing the import. ' +
          'A malformed file is a 400 invalid_csv naming the line, and leaves nothing behind. Body limit: CSV_BODY_LIMIT_BYTES (default 50 MB).\n\n' +
          'With `Prefer: respond-async`, the answer is a 202 as soon as the file is received and its header and first ' +
          'rows are checked (what fails then, such as a missing phone column or a body too large, is still the error ' +
          'answer, and nothing is written): the new list, its `import.state` processing, with `Preference-Applied: ' +
          'respond-async` and a `Location` to poll. The list then shows the rows processed and the share done; once ' +
          'completed, its counts and row errors are those the answer without the header gives. A file found malformed ' +
          'past its first rows, or an import cut off by the server stopping, leaves the list failed, with no contacts ' +
          'imported and `import.failure` saying why.',
        querystring: ImportQuery,
        headers: ImportHeaders,
        body: CsvBody,
        response: {
          ...responses(ImportResult),
          202: ContactList,
        },
      },
    },
    async (req, reply) => {
      const upload = csvUpload(req);
      if (!prefersAsync(req.headers.prefer))
        return contacts.importList(req.auth, req.query, upload).catch(closeIfBodyUnread(req, reply));
      const list = await contacts.startImport(req.auth, req.query, upload).catch(closeIfBodyUnread(req, reply));
      return reply
        .code(202)
        .header('Preference-Applied', 'respond-async')
        .header('Location', `/api/v1/contact-lists/${list.id}`)
        .send(list);
    },
  );
  app.get(
    '/contact-lists',
    {
      config: { access: read },
      schema: {
        operationId: 'listContactLists',
        tags,
        summary: 'List contact lists, newest first',
        querystring: PageOnlyQuery,
        response: responses(ContactListPage),
      },
    },
    async (req) => contacts.listLists(req.auth, req.query),
  );
  app.get(
    '/contact-lists/:id',
    {
      config: { access: read },
      schema: {
        operationId: 'getContactList',
        tags,
        summary: 'Read a contact list, its import (state, progress, counts) and the rows it could not import',
        params: IdParams,
        response: responses(ContactListDetail),
      },
    },
    async (req) => contacts.getList(req.auth, req.params.id),
  );
  app.get(
    '/contact-lists/:id/contacts',
    {
      config: { access: read },
      schema: {
        operationId: 'listContactListContacts',
        tags,
        summary: 'Contacts of a list',
        params: IdParams,
        querystring: ListContactsQuery,
        response: responses(ContactPage),
      },
    },
    async (req) => contacts.listContactsOfList(req.auth, req.params.id, req.query),
  );
}

/** Contacts, whatever their lists, and their export. */
function contactRoutes(app: App, contacts: ContactsService) {
  app.get(
    '/contacts',
    {
      config: { access: read },
      schema: {
        operationId: 'listContacts',
        tags,
        summary: 'List contacts, newest first; filter by list, free text, phone and DNC status',
        querystring: ContactQuery,
        response: responses(ContactPage),
      },
    },
    async (req) => contacts.listContacts(req.auth, req.query),
  );
  app.get(
    '/contacts/:id',
    {
      config: { access: read },
      schema: {
        operationId: 'getContact',
        tags,
        summary: 'Read a contact and the lists it is in',
        params: IdParams,
        response: responses(ContactDetail),
      },
    },
    async (req) => contacts.getContact(req.auth, req.params.id),
  );
  app.patch(
    '/contacts/:id',
    {
      config: { access: write },
      schema: {
        operationId: 'updateContact',
        tags,
        summary: 'Update a contact; a new phone is normalized to E.164 and takes its DNC status',
        params: IdParams,
        body: PatchContactBody,
        response: responses(ContactDetail),
      },
    },
    async (req) => contacts.updateContact(req.auth, req.params.id, req.body),
  );
  app.get(
    '/exports/contacts.csv',
    {
      config: { access: read },
      schema: {
        operationId: 'exportContacts',
        tags,
        summary: 'Export contacts as CSV (streamed; same filters as GET /v1/contacts)',
        querystring: ExportQuery,
        response: { ...responses(Type.String()), 200: CsvFile },
      },
    },
    async (req, reply) => {
      const csv = await contacts.exportCsv(req.auth, req.query);
      reply.type('text/csv; charset=utf-8').header('Content-Disposition', 'attachment; filename="contacts.csv"');
      // One batch buffered at most: the next is read from the database only once the client has taken this one.
      return reply.send(Readable.from(csv, { highWaterMark: 1 }));
    },
  );
}
