import type { Db } from '../../db/client.js';
import type { Config } from '../../config.js';
import type { Clock } from '../../lib/clock.js';
import type { Auth } from '../../http/auth.js';
import { invalidField, notFound } from '../../http/errors.js';
import type { Page } from '../../http/pagination.js';
import { normalizePhone } from '../../lib/phone.js';
import { accountDefaultCountry } from '../contacts/contacts.repo.js';
import type { DatabaseKind } from '../../db/staging.js';
import { addDncInBulk, type DncBulkInput } from './dnc-bulk.js';
import { createDncRepo } from './dnc.repo.js';

const toEntry = (row: { phone_e164: string; reason: string | null; created_at: Date }) => ({
  phone: row.phone_e164,
  reason: row.reason,
  createdAt: row.created_at.toISOString(),
});

export function createDncService(deps: { db: Db; config: Config; clock: Clock; databaseKind: DatabaseKind }) {
  const { db, config, clock, databaseKind } = deps;
  const repo = createDncRepo(db);

  async function e164(auth: Auth, phone: string, field: string) {
    const normalized = normalizePhone(phone, await accountDefaultCountry(db, auth.accountId));
    if ('error' in normalized) {
      throw invalidField(field, `is not a valid phone number (${normalized.message})`);
    }
    return normalized.e164;
  }

  return {
    /** Idempotent: adding a listed number again changes nothing and answers the existing entry. */
    async add(auth: Auth, input: { phone: string; reason?: string | null }) {
      const phone = await e164(auth, input.phone, 'body/phone');
      return toEntry(await repo.add(auth.accountId, phone, input.reason?.trim() || null, clock.now()));
    },

    async list(auth: Auth, query: { q?: string } & Page) {
      const { items, total } = await repo.list(auth.accountId, query.q, query);
      return { entries: items.map(toEntry), total, limit: query.limit, offset: query.offset };
    },

    async remove(auth: Auth, rawPhone: string) {
      const phone = await e164(auth, rawPhone, 'params/phone');
      if (!(await repo.remove(auth.accountId, phone, clock.now()))) throw notFound('Do-not-call entry');
      return { phone, deleted: true as const };
    },

    async addBulk(auth: Auth, input: DncBulkInput) {
      return addDncInBulk(db, databaseKind, input, {
        accountId: auth.accountId,
        defaultCountry: await accountDefaultCountry(db, auth.accountId),
        limitBytes: config.csvBodyLimitBytes,
        now: clock.now(),
      });
    },
  };
}

export type DncService = ReturnType<typeof createDncService>;
