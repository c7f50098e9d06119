import type { Db } from '../../db/client.js';
import type { TxHandle } from '../../db/repo.js';
import type { OutboxFactory } from '../../events/outbox.js';
import type { DatabaseKind } from '../../db/staging.js';
import type { Config } from '../../config.js';
import type { Clock } from '../../lib/clock.js';
import type { Auth } from '../../lib/caller.js';
import { invalidField, notFound } from '../../lib/errors.js';
import { envelope } from '../../db/pagination.js';
import { normalizePhone } from '../../lib/phone.js';
import { actorOf } from '../../events/domain-events.js';
import type { AuthService } from '../auth/auth.service.js';
import { addDncInBulk, type DncBulkFollower, type DncBulkInput } from './dnc.bulk.js';
import { listedNumbersQuery, type DncRepo } from './dnc.repo.js';
import type { AddDncInput, DncQuery } from './dnc.schemas.js';

const toEntry = (row: { phone_e164: string; reason: string | null; created_at: Date }) => ({
  phone: row.phone_e164,
  reason: row.reason,
  createdAt: row.created_at.toISOString(),
});

export interface DncDeps {
  repo: DncRepo;
  /** Bulk additions stage their rows on one session (temporary tables), then add them in one transaction. */
  db: Db;
  databaseKind: DatabaseKind;
  outbox: OutboxFactory;
  config: Config;
  clock: Clock;
  accounts: Pick<AuthService, 'defaultCountry'>;
  /**
   * Keeps a copy of the list in step with a bulk add. Single changes need none: each emits its number's event, which
   * a copy follows inside the same transaction.
   */
  bulkFollower: DncBulkFollower;
}

export function createDncService(deps: DncDeps) {
  const { repo, config, clock, accounts } = deps;

  async function e164(auth: Auth, phone: string, field: string) {
    const normalized = normalizePhone(phone, await accounts.defaultCountry(auth.accountId));
    if ('error' in normalized) throw invalidField(field, `is not a valid phone number (${normalized.message})`);
    return normalized.e164;
  }

  return {
    /** Idempotent: adding a listed number again changes nothing and answers the existing entry. */
    async add(auth: Auth, input: AddDncInput) {
      const phone = await e164(auth, input.phone, 'body/phone');
      const now = clock.now();
      return repo.transaction(async (tx) => {
        const { entry, added } = await tx.add(auth.accountId, phone, input.reason?.trim() || null, now);
        if (added) {
          await tx.emit({
            type: 'dnc.added',
            accountId: auth.accountId,
            subject: { type: 'phone_number', id: phone },
            data: { reason: entry.reason, source: 'api' },
            actor: actorOf(auth),
          });
        }
        return toEntry(entry);
      });
    },

    async list(auth: Auth, query: DncQuery) {
      const { items, total } = await repo.list(auth.accountId, query.q, query);
      return envelope('dncEntries', items.map(toEntry), total, query);
    },

    async remove(auth: Auth, rawPhone: string) {
      const phone = await e164(auth, rawPhone, 'params/phone');
      return repo.transaction(async (tx) => {
        if (!(await tx.remove(auth.accountId, phone))) throw notFound('Do-not-call entry');
        await tx.emit({
          type: 'dnc.removed',
          accountId: auth.accountId,
          subject: { type: 'phone_number', id: phone },
          actor: actorOf(auth),
        });
        return { phone, deleted: true as const };
      });
    },

    async addBulk(auth: Auth, input: DncBulkInput) {
      const now = clock.now();
      return addDncInBulk(deps.db, deps.databaseKind, input, {
        accountId: auth.accountId,
        defaultCountry: await accounts.defaultCountry(auth.accountId),
        limitBytes: config.csvBodyLimitBytes,
        now,
        follower: deps.bulkFollower,
        afterAdding: async (trx, added) => {
          if (added === 0) return;
          await deps.outbox(trx).emit({
            type: 'dnc.added',
            accountId: auth.accountId,
            subject: { type: 'dnc_list', id: auth.accountId },
            data: { added, source: 'bulk' },
            actor: actorOf(auth),
          });
        },
      });
    },

    /** Whether an E.164 number is on the account's list: the call engine asks before every dial. */
    async isListed(accountId: string, phoneE164: string): Promise<boolean> {
      return repo.isListed(accountId, phoneE164);
    },

    /** Of these E.164 numbers, the ones on the account's list now: the dialer reads a batch's numbers at once. */
    async listedAmong(accountId: string, phonesE164: readonly string[]): Promise<Set<string>> {
      return repo.listedAmong(accountId, phonesE164);
    },

    /**
     * Lists a number the moment someone on a call asks not to be called again, inside the call engine's transaction (so
     * the entry, its event and what follows the event in the transaction commit with the call's own event). The system adds it: the event has no actor.
     * Answers whether the number is new on the list.
     */
    async addFromCall(tx: TxHandle, accountId: string, phoneE164: string, input: { reason: string; callId: string }) {
      const now = clock.now();
      const { added } = await repo.within(tx).add(accountId, phoneE164, input.reason, now);
      if (added) {
        await deps.outbox(tx.trx).emit({
          type: 'dnc.added',
          accountId,
          subject: { type: 'phone_number', id: phoneE164 },
          data: { reason: input.reason, source: 'call', callId: input.callId },
          actor: null,
        });
      }
      return added;
    },

    /** The account's listed numbers as a subquery, for another module's bulk statements. */
    listedNumbersQuery,
  };
}

export type DncService = ReturnType<typeof createDncService>;
