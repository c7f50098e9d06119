import type { Selectable } from 'kysely';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { invalidField, notFound } from '../../lib/errors.js';
import type { Auth } from '../../lib/caller.js';
import type { TxHandle } from '../../db/repo.js';
import { envelope, type Page } from '../../db/pagination.js';
import { actorOf } from '../../events/domain-events.js';
import type { AgentChanges, AgentsRepo, AgentsTx, NewAgent } from './agents.repo.js';
import type { AgentVersionsTable, AgentsTable } from './agents.tables.js';
import type { CreateAgentInput, ListAgentsQuery, UpdateAgentInput } from './agents.schemas.js';
import {
  assembleSystemPrompt,
  VERSIONED_FIELDS,
  type VersionedFieldName,
  type VersionedFields,
} from './agents.prompt.js';

export { assembleSystemPrompt } from './agents.prompt.js';

type AgentRow = Selectable<AgentsTable>;
type AgentListRow = Pick<
  AgentRow,
  'id' | 'name' | 'status' | 'version' | 'voice_id' | 'live_llm_id' | 'inbound_did' | 'last_call_at' | 'created_at'
>;
type VersionSummaryRow = Omit<Selectable<AgentVersionsTable>, 'id' | 'agent_id' | 'account_id' | 'parts'>;

/** Where each versioned API field lives in the agents row. */
const VERSIONED_COLUMNS = {
  soul: 'soul',
  mission: 'mission',
  playbook: 'playbook',
  examples: 'examples',
  objections: 'objections',
  closers: 'closers',
  notes: 'notes',
  faq: 'faq',
  knowledgeBase: 'knowledge',
  firstMessage: 'first_message',
} as const satisfies Record<VersionedFieldName, keyof AgentsTable>;

function cleanName(name: string): string {
  const trimmed = name.trim();
  if (!trimmed) throw invalidField('body/name', 'must not be blank');
  return trimmed;
}

const toListItem = (row: AgentListRow) => ({
  id: row.id,
  name: row.name,
  status: row.status,
  version: row.version,
  voiceId: row.voice_id,
  liveLlmId: row.live_llm_id,
  inboundDid: row.inbound_did,
  lastCallAt: row.last_call_at?.toISOString() ?? null,
  createdAt: row.created_at.toISOString(),
});

function versionedFieldsOf(row: AgentRow): VersionedFields {
  const fields = {} as VersionedFields;
  for (const name of VERSIONED_FIELDS) fields[name] = row[VERSIONED_COLUMNS[name]];
  return fields;
}

function toAgent(row: AgentRow) {
  const fields = versionedFieldsOf(row);
  return {
    ...toListItem(row),
    updatedAt: row.updated_at.toISOString(),
    ...fields,
    transfer: { number: row.transfer_number, whenToTransfer: row.transfer_when },
    voicemail: { action: row.voicemail_action, message: row.voicemail_message },
    analysis: { fields: row.analysis_fields },
    systemPrompt: assembleSystemPrompt(fields),
  };
}

const toVersionSummary = (row: VersionSummaryRow) => ({
  version: row.version,
  createdAt: row.created_at.toISOString(),
  createdByUserId: row.created_by_user_id,
  createdByApiKeyId: row.created_by_api_key_id,
  changedParts: row.changed_parts as VersionedFieldName[],
});

/** A version with its full prompt; a part no version up to it set (or added to the prompt later) reads as empty. */
const toVersion = (row: VersionSummaryRow, parts: Record<string, string>) => ({
  ...toVersionSummary(row),
  parts: Object.fromEntries(VERSIONED_FIELDS.map((name) => [name, parts[name] ?? ''])) as VersionedFields,
});

/** The parts a version row stores: those it changed, so a save of one part does not copy the others. */
const changedPartsOf = (fields: VersionedFields, changedParts: readonly VersionedFieldName[]) =>
  Object.fromEntries(changedParts.map((name) => [name, fields[name]]));

/** The columns a create or update body writes, with nested settings merged onto the current values. */
function columnsFrom(input: UpdateAgentInput, current: AgentRow | null): AgentChanges {
  const columns: AgentChanges = {};
  if (input.name !== undefined) columns.name = cleanName(input.name);
  for (const name of VERSIONED_FIELDS) {
    const value = input[name];
    if (value !== undefined) columns[VERSIONED_COLUMNS[name]] = value;
  }
  if (input.voice !== undefined) columns.voice_id = input.voice;
  if (input.liveLlmId !== undefined) columns.live_llm_id = input.liveLlmId;
  if (input.status !== undefined) columns.status = input.status;
  if (input.transfer?.number !== undefined) columns.transfer_number = input.transfer.number;
  if (input.transfer?.whenToTransfer !== undefined) columns.transfer_when = input.transfer.whenToTransfer;
  if (input.voicemail?.action !== undefined) columns.voicemail_action = input.voicemail.action;
  if (input.voicemail?.message !== undefined) columns.voicemail_message = input.voicemail.message;
  if (input.analysis !== undefined) columns.analysis_fields = analysisFieldsColumn(input.analysis.fields);

  const action = columns.voicemail_action ?? current?.voicemail_action ?? 'hang_up';
  const message = columns.voicemail_message ?? current?.voicemail_message ?? '';
  if (action === 'leave_message' && !message.trim()) {
    throw invalidField('body/voicemail/message', 'is required when voicemail action is leave_message');
  }
  return columns;
}

/** The declared analysis fields as the column stores them; two fields of one name are a 400. */
function analysisFieldsColumn(fields: NonNullable<UpdateAgentInput['analysis']>['fields']): string {
  const names = new Set<string>();
  fields.forEach((field, i) => {
    if (names.has(field.name))
      throw invalidField(`body/analysis/fields/${i}/name`, `"${field.name}" is declared twice`);
    names.add(field.name);
  });
  return JSON.stringify(fields.map(({ name, type, description }) => ({ name, type, description: description.trim() })));
}

/** A column's current value as a save compares it: JSON columns by their text. */
const comparable = (value: unknown) =>
  value !== null && typeof value === 'object' && !(value instanceof Date) ? JSON.stringify(value) : value;

/** Drops every column whose value equals the current one, so a no-op save writes nothing. */
function actualChanges(columns: AgentChanges, current: AgentRow): AgentChanges {
  return Object.fromEntries(
    Object.entries(columns).filter(([column, value]) => comparable(current[column as keyof AgentRow]) !== value),
  ) as AgentChanges;
}

/** The API names of the changed columns, for the agent.updated event. */
const API_NAMES: Partial<Record<keyof AgentsTable, string>> = {
  ...Object.fromEntries(VERSIONED_FIELDS.map((name) => [VERSIONED_COLUMNS[name], name])),
  voice_id: 'voice',
  live_llm_id: 'liveLlmId',
  transfer_number: 'transfer',
  transfer_when: 'transfer',
  voicemail_action: 'voicemail',
  voicemail_message: 'voicemail',
  analysis_fields: 'analysis',
};
const changedFieldNames = (changes: AgentChanges) => [
  ...new Set(Object.keys(changes).map((column) => API_NAMES[column as keyof AgentsTable] ?? column)),
];

function authorOf(auth: Auth) {
  return { createdByUserId: auth.userId ?? null, createdByApiKeyId: auth.apiKeyId ?? null };
}

/** Checks an agent's voice and live LLM against what the platform offers (the voices module); a 400 names the field. */
export interface AgentChoicesCheck {
  checkAgentChoices(input: { voice?: string | null; liveLlmId?: string | null }): Promise<void>;
}

export function createAgentsService(deps: { repo: AgentsRepo; clock: Clock; choices: AgentChoicesCheck }) {
  const { repo, clock, choices } = deps;

  async function saveVersion(tx: AgentsTx, auth: Auth, row: AgentRow, changedParts: VersionedFieldName[]) {
    await tx.insertVersion(auth.accountId, {
      id: newId(),
      agentId: row.id,
      version: row.version,
      parts: changedPartsOf(versionedFieldsOf(row), changedParts),
      changedParts,
      ...authorOf(auth),
      createdAt: row.updated_at,
    });
  }

  async function requireAgent(auth: Auth, id: string) {
    const row = await repo.find(auth.accountId, id);
    if (!row) throw notFound('Agent');
    return row;
  }

  return {
    async list(auth: Auth, query: ListAgentsQuery) {
      const { items, total } = await repo.list(auth.accountId, { status: query.status }, query);
      return envelope('agents', items.map(toListItem), total, query);
    },

    async get(auth: Auth, id: string) {
      return toAgent(await requireAgent(auth, id));
    },

    /** Creates a draft (unless a status is given) at version 1, and saves version 1. */
    async create(auth: Auth, input: CreateAgentInput) {
      await choices.checkAgentChoices(input);
      const now = clock.now();
      const agent: NewAgent = {
        ...columnsFrom(input, null),
        id: newId(),
        name: cleanName(input.name),
        created_at: now,
        updated_at: now,
      };
      return repo.transaction(async (tx) => {
        const row = await tx.insert(auth.accountId, agent);
        const fields = versionedFieldsOf(row);
        await saveVersion(
          tx,
          auth,
          row,
          VERSIONED_FIELDS.filter((name) => fields[name] !== ''),
        );
        await tx.emit({
          type: 'agent.created',
          accountId: auth.accountId,
          subject: { type: 'agent', id: row.id },
          data: { name: row.name, status: row.status, version: row.version },
          actor: actorOf(auth),
        });
        return toAgent(row);
      });
    },

    /**
     * Saves the given fields. A changed prompt part or first message bumps `version` and saves a
     * version row in the same transaction; settings alone do not, and a save that changes nothing writes nothing.
     */
    async update(auth: Auth, id: string, input: UpdateAgentInput) {
      // Before the transaction: the check reads the catalog, and the embedded database has one connection.
      await choices.checkAgentChoices(input);
      return repo.transaction(async (tx) => {
        const current = await tx.findForUpdate(auth.accountId, id);
        if (!current) throw notFound('Agent');
        const changes = actualChanges(columnsFrom(input, current), current);
        if (Object.keys(changes).length === 0) return toAgent(current);
        const changed = changedFieldNames(changes);
        const changedParts = VERSIONED_FIELDS.filter((name) => VERSIONED_COLUMNS[name] in changes);
        if (changedParts.length > 0) changes.version = current.version + 1;
        const row = await tx.update(auth.accountId, id, { ...changes, updated_at: clock.now() });
        if (changedParts.length > 0) await saveVersion(tx, auth, row, changedParts);
        await tx.emit({
          type: 'agent.updated',
          accountId: auth.accountId,
          subject: { type: 'agent', id },
          data: { changed, version: row.version },
          actor: actorOf(auth),
        });
        return toAgent(row);
      });
    },

    /** Soft delete: see agents.repo softDelete. Calls already running keep the version they started with. */
    async delete(auth: Auth, id: string) {
      return repo.transaction(async (tx) => {
        if (!(await tx.softDelete(auth.accountId, id, clock.now()))) throw notFound('Agent');
        await tx.emit({
          type: 'agent.deleted',
          accountId: auth.accountId,
          subject: { type: 'agent', id },
          actor: actorOf(auth),
        });
        return { id, deleted: true as const };
      });
    },

    /**
     * For the call engine: the agent as a call starting now runs it, at its current version (the call is pinned to
     * it); undefined when the agent is missing or deleted. Pass `tx` from inside a transaction.
     */
    async forCall(accountId: string, agentId: string, tx?: TxHandle) {
      const row = await (tx ? repo.within(tx) : repo).find(accountId, agentId);
      if (!row) return undefined;
      const parts = versionedFieldsOf(row);
      return {
        id: row.id,
        name: row.name,
        status: row.status,
        version: row.version,
        voiceId: row.voice_id,
        liveLlmId: row.live_llm_id,
        parts,
        systemPrompt: assembleSystemPrompt(parts),
        transfer: { number: row.transfer_number, whenToTransfer: row.transfer_when },
        voicemail: { action: row.voicemail_action, message: row.voicemail_message },
        analysisFields: row.analysis_fields,
      };
    },

    /** A call of the agent completed at `at`: lastCallAt moves forward (never back), inside the engine's transaction. */
    async recordCompletedCall(tx: TxHandle, accountId: string, agentId: string, at: Date) {
      await repo.within(tx).touchLastCall(accountId, agentId, at);
    },

    /**
     * Routes inbound calls to `did` to this agent (null: to none), inside the phone-number module's transaction,
     * which owns the routing; the row stays locked until that transaction ends. Answers the agent, or undefined
     * when it is missing or deleted.
     */
    async setInboundNumber(tx: TxHandle, accountId: string, agentId: string, did: string | null) {
      const agents = repo.within(tx);
      const row = await agents.findForUpdate(accountId, agentId);
      if (!row) return undefined;
      if (row.inbound_did !== did)
        await agents.update(accountId, agentId, { inbound_did: did, updated_at: clock.now() });
      return { id: row.id, name: row.name, status: row.status };
    },

    /** The agent's name and status, or undefined when it is missing or deleted: what inbound routing shows. */
    async liveAgent(accountId: string, agentId: string) {
      const row = await repo.find(accountId, agentId);
      return row && { id: row.id, name: row.name, status: row.status };
    },

    async listVersions(auth: Auth, id: string, page: Page) {
      await requireAgent(auth, id);
      const { items, total } = await repo.listVersions(auth.accountId, id, page);
      return envelope('versions', items.map(toVersionSummary), total, page);
    },

    async getVersion(auth: Auth, id: string, version: number) {
      await requireAgent(auth, id);
      const row = await repo.findVersion(auth.accountId, id, version);
      if (!row) throw notFound('Agent version');
      return toVersion(row, await repo.partsAt(auth.accountId, id, version));
    },
  };
}

export type AgentsService = ReturnType<typeof createAgentsService>;
