import type { Db } from '../../db/client.js';

export function createApiKeysRepo(db: Db) {
  return {
    insert(accountId: string, input: { id: string; name: string; displayPrefix: string; keyHash: string; createdByUserId: string | null }) {
      return db
        .insertInto('api_keys')
        .values({
          id: input.id,
          account_id: accountId,
          name: input.name,
          display_prefix: input.displayPrefix,
          key_hash: input.keyHash,
          created_by_user_id: input.createdByUserId,
          last_used_at: null,
        })
        .returning(['id', 'name', 'display_prefix', 'created_at', 'last_used_at'])
        .executeTakeFirstOrThrow();
    },

    list(accountId: string) {
      return db
        .selectFrom('api_keys')
        .select(['id', 'name', 'display_prefix', 'created_at', 'last_used_at'])
        .where('account_id', '=', accountId)
        .orderBy('created_at', 'desc')
        .orderBy('id')
        .execute();
    },

    async delete(accountId: string, id: string): Promise<boolean> {
      const result = await db.deleteFrom('api_keys').where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst();
      return result.numDeletedRows > 0n;
    },

    /** Authentication lookup by hash: the only query not scoped by account, because the key is what names the account. */
    findForAuth(keyHash: string) {
      return db
        .selectFrom('api_keys')
        .innerJoin('accounts', 'accounts.id', 'api_keys.account_id')
        .select(['api_keys.id', 'api_keys.account_id', 'accounts.status', 'accounts.rate_limit_per_minute'])
        .where('api_keys.key_hash', '=', keyHash)
        .executeTakeFirst();
    },

    touch(accountId: string, id: string, at: Date) {
      return db.updateTable('api_keys').set({ last_used_at: at }).where('account_id', '=', accountId).where('id', '=', id).execute();
    },
  };
}

export type ApiKeysRepo = ReturnType<typeof createApiKeysRepo>;
