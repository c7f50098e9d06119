import type { Db } from '../../db/client.js';
import { createRepo, type Executor } from '../../db/repo.js';
import type { OutboxFactory } from '../../events/outbox.js';
import { paginate, type Page } from '../../db/pagination.js';
import { compiledStatement, type Param } from '../../db/statements.js';

const KEY_COLUMNS = ['id', 'name', 'display_prefix', 'created_at', 'last_used_at'] as const;

/** Run on every request that carries a key, unless resolved keys are cached: compiled once. */
const keyForAuth = compiledStatement({
  build: (db: Executor, _args: { keyHash: string }, param: Param<{ keyHash: string }>) =>
    db
      .selectFrom('api_keys')
      .innerJoin('accounts', 'accounts.id', 'api_keys.account_id')
      .select(['api_keys.id', 'api_keys.account_id', 'accounts.status', 'accounts.rate_limit_per_minute'])
      .where(
        'api_keys.key_hash',
        '=',
        param((a) => a.keyHash),
      ),
});

export function apiKeyQueries(db: Executor) {
  return {
    insert(
      accountId: string,
      input: { id: string; name: string; displayPrefix: string; keyHash: string; createdByUserId: string | null },
    ) {
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
        .returning(KEY_COLUMNS)
        .executeTakeFirstOrThrow();
    },

    list(accountId: string, page: Page) {
      const matching = db.selectFrom('api_keys').where('account_id', '=', accountId);
      return paginate(matching, page, (q) => q.select(KEY_COLUMNS).orderBy('created_at', 'desc').orderBy('id'));
    },

    async delete(accountId: string, id: string): Promise<boolean> {
      const result = await db
        .deleteFrom('api_keys')
        .where('account_id', '=', accountId)
        .where('id', '=', id)
        .executeTakeFirst();
      return result.numDeletedRows > 0n;
    },

    /** Authentication lookup by hash: the only query not scoped by account, because the key is what names the account. */
    async findForAuth(keyHash: string) {
      return (await keyForAuth(db, { keyHash }))[0];
    },

    touch(accountId: string, id: string, at: Date) {
      return db
        .updateTable('api_keys')
        .set({ last_used_at: at })
        .where('account_id', '=', accountId)
        .where('id', '=', id)
        .execute();
    },
  };
}

export function createApiKeysRepo(db: Db, outbox: OutboxFactory) {
  return createRepo(db, outbox, apiKeyQueries);
}

export type ApiKeysRepo = ReturnType<typeof createApiKeysRepo>;
