import type { RawBuilder, Selectable } from 'kysely';
import type { Db } from '../../db/client.js';
import type { OutboxFactory } from '../../events/outbox.js';
import type { Config } from '../../config.js';
import type { Clock } from '../../lib/clock.js';
import type { Auth } from '../../lib/caller.js';
import { AppError, invalidField, notFound } from '../../lib/errors.js';
import { envelope, type Page } from '../../db/pagination.js';
import type { OwnershipCheck } from '../../db/ownership.js';
import { actorOf } from '../../events/domain-events.js';
import type { AuthService } from '../auth/auth.service.js';
import type { DncService } from '../dnc/dnc.service.js';
import type { CsvUpload } from '../../lib/csv.js';
import { isPhoneCountry, normalizePhone } from '../../lib/phone.js';
import { canonicalTimeZone } from '../../lib/timezone.js';
import { importContactList } from './contacts.import.js';
import { exportContactsCsv } from './contacts.export.js';
import { patchedAttributesProblem } from './contacts.csv-headers.js';
import { SEARCH_COUNT_AHEAD, searchTextProblem } from './contacts.search.js';
import {
  membersOfListsQuery,
  type ContactChanges,
  type ContactFilters,
  type ContactRow,
  type ContactsRepo,
} from './contacts.repo.js';
import type { ContactListsTable } from './contacts.tables.js';
import type { DatabaseKind } from '../../db/staging.js';
import type {
  ContactQuery,
  ExportQuery,
  ImportQuery,
  ListContactsQuery,
  PatchContactBody,
} from './contacts.schemas.js';
import type { Static } from 'typebox';
import type { Logger } from 'pino';
import { newId } from '../../lib/ids.js';
import { checkDeclaredSize } from '../../http/csv-body.js';
import {
  IMPORT_STALE_SECONDS,
  LOST_IMPORT,
  createProgressWriter,
  importFailure,
  interruptedByShutdown,
  spoolUpload,
} from './contacts.import-async.js';
import type { ImportRequest } from './contacts.import-merge.js';

type ContactFilterInput = Omit<ContactQuery, 'limit' | 'offset'>;
type ContactPatch = Static<typeof PatchContactBody>;

export interface ContactsDeps {
  repo: ContactsRepo;
  /** Imports stage their rows on one session (temporary tables), then merge them in one transaction. */
  db: Db;
  databaseKind: DatabaseKind;
  outbox: OutboxFactory;
  config: Config;
  clock: Clock;
  owned: OwnershipCheck;
  accounts: Pick<AuthService, 'defaultCountry'>;
  dnc: Pick<DncService, 'listedNumbersQuery'>;
  log?: Logger;
}

/** An import answered at once, running in this process. */
interface RunningImport {
  controller: AbortController;
  done: Promise<void>;
}

const toContact = (row: ContactRow) => ({
  id: row.id,
  firstName: row.first_name,
  lastName: row.last_name,
  phone: row.phone_e164,
  email: row.email,
  company: row.company,
  timezone: row.timezone,
  attributes: row.attributes,
  dnc: row.dnc,
  createdAt: row.created_at.toISOString(),
  updatedAt: row.updated_at.toISOString(),
});

const toContactList = (row: Selectable<ContactListsTable>) => ({
  id: row.id,
  name: row.name,
  defaultCountry: row.default_country.trim(),
  duplicatePolicy: row.duplicate_policy,
  counts: {
    rows: row.row_count,
    imported: row.imported_count,
    updated: row.updated_count,
    duplicates: row.duplicate_count,
    invalid: row.invalid_count,
    dnc: row.dnc_count,
  },
  import: {
    state: row.import_state,
    rowsProcessed: row.import_rows_processed,
    bytesRead: Number(row.import_bytes_read),
    bytesTotal: Number(row.import_bytes_total),
    fraction: row.import_state === 'completed' ? 1 : Math.min(1, Math.max(0, row.import_fraction)),
    updatedAt: row.import_heartbeat_at.toISOString(),
    finishedAt: row.import_finished_at?.toISOString() ?? null,
    failure: row.import_failure,
  },
  createdAt: row.created_at.toISOString(),
});

const emptyToNull = (value: string | null | undefined) => (value === undefined ? undefined : value?.trim() || null);

export function createContactsService(deps: ContactsDeps) {
  const { repo, config, clock, owned, accounts, dnc } = deps;

  async function phoneFilter(auth: Auth, phone: string, field: string) {
    const normalized = normalizePhone(phone, await accounts.defaultCountry(auth.accountId));
    if ('error' in normalized) throw invalidField(field, `is not a valid phone number (${normalized.message})`);
    return normalized.e164;
  }

  async function filtersOf(auth: Auth, input: ContactFilterInput): Promise<ContactFilters> {
    const searchProblem = input.q === undefined ? null : searchTextProblem(input.q);
    if (searchProblem) throw invalidField('querystring/q', searchProblem);
    const filters: ContactFilters = { listId: input.listId, q: input.q, dnc: input.dnc };
    if (input.phone !== undefined) filters.phoneE164 = await phoneFilter(auth, input.phone, 'querystring/phone');
    return filters;
  }

  async function contactChanges(auth: Auth, id: string, patch: ContactPatch): Promise<ContactChanges> {
    const changes: ContactChanges = {
      first_name: emptyToNull(patch.firstName),
      last_name: emptyToNull(patch.lastName),
      email: emptyToNull(patch.email)?.toLowerCase(),
      company: emptyToNull(patch.company),
      attributes: patch.attributes,
    };
    if (patch.timezone !== undefined) {
      changes.timezone = patch.timezone === null ? null : canonicalTimeZone(patch.timezone.trim());
      if (changes.timezone === null && patch.timezone !== null)
        throw invalidField('body/timezone', 'is not an IANA time zone (e.g. America/New_York)');
    }
    if (patch.phone !== undefined) {
      const phone = await phoneFilter(auth, patch.phone, 'body/phone');
      const holder = await repo.findByPhone(auth.accountId, phone);
      if (holder && holder.id !== id) {
        throw new AppError('conflict', `Another contact already has the number ${phone}`, {
          contactId: holder.id,
          phone,
        });
      }
      changes.phone_e164 = phone;
    }
    return changes;
  }

  const importDeps = { db: deps.db, databaseKind: deps.databaseKind };
  /** Imports answered at once that this process runs, by list id. */
  const running = new Map<string, RunningImport>();

  async function importRequest(auth: Auth, query: ImportQuery): Promise<ImportRequest> {
    const defaultCountry = query.defaultCountry?.toUpperCase() ?? (await accounts.defaultCountry(auth.accountId));
    if (!isPhoneCountry(defaultCountry))
      throw invalidField('querystring/defaultCountry', `"${defaultCountry}" is not a country with phone numbers`);
    const name = query.name.trim() || query.name;
    return {
      accountId: auth.accountId,
      name,
      defaultCountry,
      duplicatePolicy: query.duplicatePolicy,
      limitBytes: config.csvBodyLimitBytes,
      now: clock.now(),
      listedNumbers: dnc.listedNumbersQuery(auth.accountId),
      async onImported(trx, { listId, counts }) {
        await deps.outbox(trx).emit({
          type: 'contact_list.imported',
          accountId: auth.accountId,
          subject: { type: 'contact_list', id: listId },
          data: { name, counts },
          actor: actorOf(auth),
        });
      },
    };
  }

  return {
    async importList(auth: Auth, query: ImportQuery, upload: CsvUpload) {
      return importContactList(importDeps, upload, await importRequest(auth, query));
    },

    /**
     * Prefer: respond-async. Answers the list, processing, once the file is received and its header and first rows
     * are valid (what fails before then is this request's error, and nothing is written); the import goes on here.
     */
    async startImport(auth: Auth, query: ImportQuery, upload: CsvUpload) {
      const request = await importRequest(auth, query);
      checkDeclaredSize(upload, request.limitBytes);
      const listId = newId();
      const file = await spoolUpload(upload, request.limitBytes, listId);
      const controller = new AbortController();
      const progress = createProgressWriter(
        file.bytes,
        (snapshot) => repo.saveImportProgress(auth.accountId, listId, snapshot),
        (error) => deps.log?.warn({ err: error, listId }, 'contact import progress not written'),
      );
      let created: Selectable<ContactListsTable> | null = null;
      let answer = (_row: Selectable<ContactListsTable>) => {};
      const answered = new Promise<Selectable<ContactListsTable>>((resolve) => {
        answer = resolve;
      });
      const run = importContactList(importDeps, file.upload(), {
        ...request,
        listId,
        signal: controller.signal,
        onProgress: (snapshot) => progress.note(snapshot),
        async onReady() {
          created = await repo.createImportingList(auth.accountId, {
            id: listId,
            name: request.name,
            default_country: request.defaultCountry,
            duplicate_policy: request.duplicatePolicy,
            row_count: 0,
            imported_count: 0,
            updated_count: 0,
            duplicate_count: 0,
            invalid_count: 0,
            dnc_count: 0,
            import_bytes_total: file.bytes,
            created_at: request.now,
          });
          answer(created);
        },
      });
      const done = run.then(
        async () => {
          await progress.stop();
        },
        async (error: unknown) => {
          await progress.stop();
          if (!created) return;
          const { failure, unexpected } = importFailure(error);
          if (unexpected) deps.log?.error({ err: error, listId }, 'contact import failed');
          await repo.failImport(auth.accountId, listId, failure, null);
        },
      );
      const settled = done
        .catch((error: unknown) => deps.log?.error({ err: error, listId }, 'contact import not marked failed'))
        .finally(async () => {
          running.delete(listId);
          await file.remove();
        });
      running.set(listId, { controller, done: settled });
      // The import's own error, when it fails before the list exists, is this request's.
      const row = await Promise.race([answered, run.then(() => answered)]);
      return toContactList(row);
    },

    /**
     * Fails the imports left processing by a process that stopped: on PostgreSQL those whose heartbeat is stale (other
     * instances run theirs), on the embedded database every one this process does not run.
     */
    async sweepLostImports() {
      const staleSeconds = deps.databaseKind === 'pglite' ? null : IMPORT_STALE_SECONDS;
      let failed = 0;
      for (const candidate of await repo.lostImportCandidates(staleSeconds)) {
        if (running.has(candidate.id)) continue;
        if (await repo.failImport(candidate.account_id, candidate.id, LOST_IMPORT, staleSeconds)) {
          failed++;
          deps.log?.warn({ listId: candidate.id }, 'failed a contact import whose process stopped');
        }
      }
      return { failed };
    },

    /**
     * At shutdown: waits up to half the shutdown grace for the imports this process runs, then stops the others; each
     * stopped one is failed cleanly (nothing imported, its list says the server stopped).
     */
    async stopImports(graceMs = config.shutdownGraceMs / 2) {
      if (running.size === 0) return 0;
      let timer: NodeJS.Timeout | undefined;
      const waited = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, graceMs);
      });
      await Promise.race([Promise.all([...running.values()].map((item) => item.done)), waited]);
      clearTimeout(timer);
      const stopped = [...running.values()];
      for (const item of stopped) item.controller.abort(interruptedByShutdown());
      await Promise.all(stopped.map((item) => item.done));
      return stopped.length;
    },

    async listLists(auth: Auth, page: Page) {
      const { items, total } = await repo.listLists(auth.accountId, page);
      return envelope('contactLists', items.map(toContactList), total, page);
    },

    async getList(auth: Auth, id: string) {
      const row = await repo.findList(auth.accountId, id);
      if (!row) throw notFound('Contact list');
      return { ...toContactList(row), errors: row.import_errors };
    },

    async listContacts(auth: Auth, input: ContactQuery) {
      const { limit, offset, ...filterInput } = input;
      const filters = await filtersOf(auth, filterInput);
      const countUpTo = filters.q === undefined ? null : offset + SEARCH_COUNT_AHEAD;
      const { items, total, totalExact } = await repo.listContacts(
        auth.accountId,
        filters,
        { limit, offset },
        countUpTo,
      );
      return { ...envelope('contacts', items.map(toContact), total, input), totalExact };
    },

    async listContactsOfList(auth: Auth, listId: string, input: ListContactsQuery) {
      await owned.requireOwned(auth, { contactLists: [listId] });
      return this.listContacts(auth, { ...input, listId });
    },

    async getContact(auth: Auth, id: string) {
      const row = await repo.findContact(auth.accountId, id);
      if (!row) throw notFound('Contact');
      return { ...toContact(row), lists: await repo.listsOfContact(auth.accountId, id) };
    },

    async updateContact(auth: Auth, id: string, patch: ContactPatch) {
      const current = await repo.findContact(auth.accountId, id);
      if (!current) throw notFound('Contact');
      const attributesProblem = patch.attributes && patchedAttributesProblem(current.attributes, patch.attributes);
      if (attributesProblem) throw invalidField('body/attributes', attributesProblem);
      const changes = await contactChanges(auth, id, patch);
      const row = await repo
        .transaction(async (tx) => {
          const updated = await tx.update(
            auth.accountId,
            id,
            changes,
            dnc.listedNumbersQuery(auth.accountId),
            clock.now(),
          );
          if (!updated) throw notFound('Contact');
          await tx.emit({
            type: 'contact.updated',
            accountId: auth.accountId,
            subject: { type: 'contact', id },
            data: { changed: Object.keys(patch) },
            actor: actorOf(auth),
          });
          return updated;
        })
        .catch((error: unknown) => {
          if ((error as { code?: string }).code === '23505') {
            throw new AppError('conflict', `Another contact already has the number ${changes.phone_e164}`, {
              phone: changes.phone_e164,
            });
          }
          throw error;
        });
      return { ...toContact(row), lists: await repo.listsOfContact(auth.accountId, id) };
    },

    /** For the call engine: who a call is with (by contact id, or by the number of an inbound caller). */
    async forCall(accountId: string, by: { id: string } | { phone: string }) {
      const id = 'id' in by ? by.id : (await repo.findByPhone(accountId, by.phone))?.id;
      const row = id === undefined ? undefined : await repo.findContact(accountId, id);
      return (
        row && {
          id: row.id,
          firstName: row.first_name,
          lastName: row.last_name,
          phone: row.phone_e164,
          attributes: row.attributes,
          dnc: row.dnc,
        }
      );
    },

    /** For the dialer: these contacts' numbers, time zones and do-not-call flags; a deleted contact is left out. */
    async forDialer(accountId: string, ids: readonly string[]) {
      if (ids.length === 0) return [];
      const rows = await repo.dialerContacts(accountId, ids);
      return rows.map((row) => ({ id: row.id, phone: row.phone_e164, timezone: row.timezone, dnc: row.dnc }));
    },

    /** For the dialer: the distinct contacts of these lists of the account, as a subquery (one column, contact_id). */
    membersOfListsQuery(accountId: string, listIds: readonly string[]): RawBuilder<unknown> {
      return membersOfListsQuery(accountId, listIds);
    },

    /** The CSV text of the export, produced batch by batch as the client reads it. */
    async exportCsv(auth: Auth, input: ExportQuery) {
      const filters = await filtersOf(auth, input);
      if (filters.listId) await owned.requireOwned(auth, { contactLists: [filters.listId] });
      return exportContactsCsv(repo, auth.accountId, filters);
    },
  };
}

export type ContactsService = ReturnType<typeof createContactsService>;
