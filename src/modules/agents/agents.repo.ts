import { sql, type Insertable, type Updateable } from 'kysely';
import type { Db } from '../../db/client.js';
import { createRepo, type Executor } from '../../db/repo.js';
import type { OutboxFactory, Tx } from '../../events/outbox.js';
import { paginate, type Page } from '../../db/pagination.js';
import type { AgentStatus, AgentsTable } from './agents.tables.js';

const LIST_COLUMNS = [
  'id',
  'name',
  'status',
  'version',
  'voice_id',
  'live_llm_id',
  'inbound_did',
  'last_call_at',
  'created_at',
] as const;

const VERSION_SUMMARY_COLUMNS = [
  'version',
  'changed_parts',
  'created_by_user_id',
  'created_by_api_key_id',
  'created_at',
] as const;

export type NewAgent = Omit<Insertable<AgentsTable>, 'account_id'>;
export type AgentChanges = Omit<Updateable<AgentsTable>, 'id' | 'account_id' | 'created_at' | 'deleted_at'>;

export interface NewAgentVersion {
  id: string;
  agentId: string;
  version: number;
  /** The parts this version changed, and only those. */
  parts: Record<string, string>;
  changedParts: string[];
  createdByUserId: string | null;
  createdByApiKeyId: string | null;
  createdAt: Date;
}

/** Every query is scoped by account, and a soft-deleted agent is invisible to all of them. */
export function agentQueries(db: Executor) {
  const live = (accountId: string) =>
    db.selectFrom('agents').where('account_id', '=', accountId).where('deleted_at', 'is', null);

  return {
    insert(accountId: string, agent: NewAgent) {
      return db
        .insertInto('agents')
        .values({ ...agent, account_id: accountId })
        .returningAll()
        .executeTakeFirstOrThrow();
    },

    list(accountId: string, filter: { status?: AgentStatus }, page: Page) {
      let matching = live(accountId);
      if (filter.status) matching = matching.where('status', '=', filter.status);
      return paginate(matching, page, (q) =>
        q.select(LIST_COLUMNS).orderBy('created_at', 'desc').orderBy('id', 'desc'),
      );
    },

    find(accountId: string, id: string) {
      return live(accountId).selectAll().where('id', '=', id).executeTakeFirst();
    },

    /** Reads the agent and locks its row until the transaction ends, so concurrent saves bump the version in turn. */
    findForUpdate(accountId: string, id: string) {
      return live(accountId).selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
    },

    update(accountId: string, id: string, changes: AgentChanges) {
      return db
        .updateTable('agents')
        .set(changes)
        .where('account_id', '=', accountId)
        .where('id', '=', id)
        .where('deleted_at', 'is', null)
        .returningAll()
        .executeTakeFirstOrThrow();
    },

    /** Moves last_call_at forward to `at` (a deleted agent too: its past calls still count). */
    async touchLastCall(accountId: string, id: string, at: Date) {
      await db
        .updateTable('agents')
        .set({ last_call_at: at })
        .where('account_id', '=', accountId)
        .where('id', '=', id)
        .where((eb) => eb.or([eb('last_call_at', 'is', null), eb('last_call_at', '<', at)]))
        .execute();
    },

    /** Hides the agent and releases its inbound number; the row stays so past calls keep their agent's name. */
    async softDelete(accountId: string, id: string, at: Date): Promise<boolean> {
      const result = await db
        .updateTable('agents')
        .set({ deleted_at: at, updated_at: at, inbound_did: null })
        .where('account_id', '=', accountId)
        .where('id', '=', id)
        .where('deleted_at', 'is', null)
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    insertVersion(accountId: string, input: NewAgentVersion) {
      return db
        .insertInto('agent_versions')
        .values({
          id: input.id,
          agent_id: input.agentId,
          account_id: accountId,
          version: input.version,
          parts: JSON.stringify(input.parts),
          changed_parts: input.changedParts,
          created_by_user_id: input.createdByUserId,
          created_by_api_key_id: input.createdByApiKeyId,
          created_at: input.createdAt,
        })
        .execute();
    },

    /** A page of versions, newest first, without their parts (those can be large). */
    listVersions(accountId: string, agentId: string, page: Page) {
      const matching = db
        .selectFrom('agent_versions')
        .where('account_id', '=', accountId)
        .where('agent_id', '=', agentId);
      return paginate(matching, page, (q) => q.select(VERSION_SUMMARY_COLUMNS).orderBy('version', 'desc'));
    },

    findVersion(accountId: string, agentId: string, version: number) {
      return db
        .selectFrom('agent_versions')
        .select(VERSION_SUMMARY_COLUMNS)
        .where('account_id', '=', accountId)
        .where('agent_id', '=', agentId)
        .where('version', '=', version)
        .executeTakeFirst();
    },

    /**
     * Every part as it stood at `version`: each from the newest version up to it that changed that part (a version
     * row stores only the parts it changed). Parts no version changed are missing.
     */
    async partsAt(accountId: string, agentId: string, version: number) {
      const { rows } = await sql<{ name: string; value: string }>`
        SELECT latest.name, v.parts ->> latest.name AS value
        FROM (
          SELECT DISTINCT ON (changed.name) changed.name, av.version
          FROM agent_versions av CROSS JOIN unnest(av.changed_parts) AS changed(name)
          WHERE av.account_id = ${accountId} AND av.agent_id = ${agentId} AND av.version <= ${version}
          ORDER BY changed.name, av.version DESC
        ) latest
        JOIN agent_versions v ON v.account_id = ${accountId} AND v.agent_id = ${agentId} AND v.version = latest.version
      `.execute(db);
      return Object.fromEntries(rows.map((row) => [row.name, row.value ?? '']));
    },
  };
}

export type AgentsTx = Tx<ReturnType<typeof agentQueries>>;

export function createAgentsRepo(db: Db, outbox: OutboxFactory) {
  return createRepo(db, outbox, agentQueries);
}

export type AgentsRepo = ReturnType<typeof createAgentsRepo>;
