/**
 * A contact's do-not-call flag mirrors the account's do-not-call list, so a dialer reads one row. The list knows
 * nothing of contacts: its single changes are followed here from their events, inside the transaction that writes
 * them, and a bulk add flags its numbers' contacts step by step through the list's bulk follower.
 */
import type { RawBuilder } from 'kysely';
import type { TransactionSubscriber } from '../../events/outbox.js';
import type { DncBulkFollower } from '../dnc/dnc.bulk.js';
import { contactQueries } from './contacts.repo.js';

export const CONTACTS_DNC_FLAGS = 'contacts.dnc-flags';

/**
 * Flags the contacts with a number the list gained, and unflags those with a number it lost. A bulk add's event names
 * no number (its subject is the list): its contacts were flagged as it went.
 */
export function createContactsDncSubscriber(): TransactionSubscriber {
  return {
    name: CONTACTS_DNC_FLAGS,
    events: ['dnc.added', 'dnc.removed'],
    async run(event, tx) {
      if (event.subject.type !== 'phone_number') return { changed: 0 };
      const listed = event.type === 'dnc.added';
      const changed = await contactQueries(tx.trx).setDncFlag(
        event.accountId,
        [event.subject.id],
        listed,
        event.occurredAt,
      );
      return { changed };
    },
  };
}

/** The contacts' side of a bulk add: the contacts with these numbers flagged, their ids noted for undo on PGlite. */
export const contactsDncBulkFollower: DncBulkFollower = {
  listed: (trx, accountId, phones, now, record) => contactQueries(trx).flagDncAmong(accountId, phones, now, record),
  async undo(trx, accountId, ids: RawBuilder<unknown>) {
    await contactQueries(trx).unflagDncByIds(accountId, ids);
  },
};
