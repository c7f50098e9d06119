import type { Db } from '../../src/db/client.js';
import { newId } from '../../src/lib/ids.js';
import { resolveScope, type Scope } from './scope.js';

/** A contact with just the columns other modules read; the contacts module owns the table. */
export async function insertContact(
  db: Db,
  accountId: string,
  input: { firstName: string | null; lastName: string | null; phone: string },
) {
  const id = newId();
  await db
    .insertInto('contacts')
    .values({
      id,
      account_id: accountId,
      first_name: input.firstName,
      last_name: input.lastName,
      phone_e164: input.phone,
    })
    .execute();
  return { id, ...input };
}

export interface ContactOverrides {
  accountId?: string;
  firstName?: string | null;
  lastName?: string | null;
  /** E.164; by default a new number in the fictional +1 415 555 range. */
  phone?: string;
}

let phones = 0;

/** A contact written straight to the database (Ada Lovelace unless told otherwise); answers it with its account. */
export async function buildContact(scope: Scope, overrides: ContactOverrides = {}) {
  const { testApp, accountId } = await resolveScope(scope, overrides.accountId);
  const contact = await insertContact(testApp.infra.database.db, accountId, {
    firstName: overrides.firstName === undefined ? 'Ada' : overrides.firstName,
    lastName: overrides.lastName === undefined ? 'Lovelace' : overrides.lastName,
    phone: overrides.phone ?? `+1415555${String(1000 + (phones++ % 9000))}`,
  });
  return { ...contact, accountId };
}
