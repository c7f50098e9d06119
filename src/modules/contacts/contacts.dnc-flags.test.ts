/**
 * A contact's do-not-call flag follows the list, through the services (no HTTP): single changes from the API and from
 * a call reach the flags through their events, in the same transaction; a bulk add through its follower, with the
 * count the response reports. The HTTP contract is in dnc.test.ts.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestServices, newAccount, type TestServices } from '../../../test/service-kit.js';
import { insertContact } from '../../../test/factories/contacts.js';

let t: TestServices;
before(async () => (t = await buildTestServices()));
after(() => t.close());

async function flags(accountId: string) {
  const rows = await t.db
    .selectFrom('contacts')
    .select(['phone_e164', 'dnc'])
    .where('account_id', '=', accountId)
    .orderBy('phone_e164')
    .execute();
  return Object.fromEntries(rows.map((row) => [row.phone_e164, row.dnc]));
}

async function accountWithContacts(...phones: string[]) {
  const account = await newAccount(t);
  for (const phone of phones) await insertContact(t.db, account.accountId, { firstName: null, lastName: null, phone });
  return account;
}

test('adding and removing a number flags and unflags its contact, and no other', async () => {
  const { accountId, auth } = await accountWithContacts('+14155550101', '+14155550102');
  await t.services.dnc.add(auth, { phone: '+14155550101' });
  assert.deepEqual(await flags(accountId), { '+14155550101': true, '+14155550102': false });
  await t.services.dnc.add(auth, { phone: '+14155550101' });
  assert.deepEqual(await flags(accountId), { '+14155550101': true, '+14155550102': false }, 'adding again: no change');
  await t.services.dnc.remove(auth, '+14155550101');
  assert.deepEqual(await flags(accountId), { '+14155550101': false, '+14155550102': false });
});

test("a number listed from a call flags its contact in the engine's transaction, and not if that rolls back", async () => {
  const { accountId } = await accountWithContacts('+14155550201');
  const rolledBack = new Error('the call engine failed after listing the number');
  await assert.rejects(
    t.db.transaction().execute(async (trx) => {
      await t.services.dnc.addFromCall({ trx }, accountId, '+14155550201', { reason: 'asked', callId: 'c1' });
      const flagged = await trx.selectFrom('contacts').select('dnc').where('account_id', '=', accountId).execute();
      assert.deepEqual(flagged, [{ dnc: true }], 'flagged inside the transaction');
      throw rolledBack;
    }),
    rolledBack,
  );
  assert.deepEqual(await flags(accountId), { '+14155550201': false });
  await t.db.transaction().execute(async (trx) => {
    assert.equal(
      await t.services.dnc.addFromCall({ trx }, accountId, '+14155550201', { reason: 'asked', callId: 'c2' }),
      true,
    );
  });
  assert.deepEqual(await flags(accountId), { '+14155550201': true });
});

test("a bulk add flags the contacts of its new numbers and counts them; another account's contacts stay as they are", async () => {
  const { accountId, auth } = await accountWithContacts('+14155550301', '+14155550302', '+14155550303');
  const other = await accountWithContacts('+14155550301');
  await t.services.dnc.add(auth, { phone: '+14155550303' });
  const result = await t.services.dnc.addBulk(auth, {
    items: ['+14155550301', '+14155550303', '+14155550399', 'nope'],
  });
  assert.equal(result.added, 2);
  assert.equal(result.contactsFlagged, 1, 'the contact of +14155550303 was flagged before');
  assert.deepEqual(await flags(accountId), { '+14155550301': true, '+14155550302': false, '+14155550303': true });
  assert.deepEqual(await flags(other.accountId), { '+14155550301': false });
});
