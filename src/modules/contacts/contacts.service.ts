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
import { createPhonePool, type PhonePool } from '../../lib/phone-pool.js';
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
  phones?: PhonePool;
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
  createdAt: row.created_at.toISOString(),
});

const emptyToNull = (value: string | null | undefined) => (value === undefined ? undefined : value?.trim() || null);

export function createContactsService(deps: ContactsDeps) {
  const { repo, config, clock, owned, accounts, dnc } = deps;
  const phones = deps.phones ?? createPhonePool();

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

  return {
    async importList(auth: Auth, query: ImportQuery, upload: CsvUpload) {
      const defaultCountry = query.defaultCountry?.toUpperCase() ?? (await accounts.defaultCountry(auth.accountId));
      if (!isPhoneCountry(defaultCountry))
        throw invalidField('querystring/defaultCountry', `"${defaultCountry}" is not a country with phone numbers`);
      const name = query.name.trim() || query.name;
      return importContactList({ db: deps.db, databaseKind: deps.databaseKind, phones }, upload, {
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
      });
    },

    async listLists(auth: Auth, page: Page) {
      const { items, total } = await repo.listLists(auth.accountId, page);
      return envelope('contactLists', items.map(toContactList), total, page);
    },

    async getList(auth: Auth, id: string) {
      const row = await repo.findList(auth.accountId, id);
      if (!row) throw notFound('Contact list');
      return toContactList(row);
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
