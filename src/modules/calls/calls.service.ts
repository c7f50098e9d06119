import type { Auth } from '../../http/auth.js';
import { invalidField, notFound } from '../../http/errors.js';
import { envelope } from '../../http/pagination.js';
import type { CallFilters, CallRow, CallsRepo } from './calls.repo.js';
import type { ListCallEventsQuery, ListCallsQuery, ListEventsQuery, SignedAssetQuery } from './calls.schemas.js';
import { createCallOperations, type CallOperationsDeps } from './call-operations.js';

type TurnRow = Awaited<ReturnType<CallsRepo['transcript']>>[number];
type CostItemRow = Awaited<ReturnType<CallsRepo['costItems']>>[number];
type EventRow = Awaited<ReturnType<CallsRepo['listEvents']>>[number];

const iso = (value: Date | null) => (value === null ? null : value.toISOString());

/** SPEC §2 Call item. contactPhone is the far end of the call: the number dialled, or the number that called in. */
/** The columns a call item reads: a list row of this account or of the admin's cross-account list. */
type CallItemRow = Pick<
  CallRow,
  | 'id'
  | 'contact_id'
  | 'contact_first_name'
  | 'contact_last_name'
  | 'to_number'
  | 'from_number'
  | 'agent_id'
  | 'agent_name'
  | 'direction'
  | 'status'
  | 'disposition'
  | 'duration_seconds'
  | 'total_cost_usd'
  | 'recording_storage_key'
  | 'started_at'
  | 'ended_at'
  | 'created_at'
>;

export const toCallItem = (row: CallItemRow) => ({
  id: row.id,
  contactId: row.contact_id,
  contactFirstName: row.contact_first_name,
  contactLastName: row.contact_last_name,
  contactPhone: row.direction === 'outbound' ? row.to_number : row.from_number,
  agentId: row.agent_id,
  agentName: row.agent_name,
  direction: row.direction,
  status: row.status,
  disposition: row.disposition,
  durationSeconds: row.duration_seconds,
  totalCostUsd: row.total_cost_usd,
  recordingStorageKey: row.recording_storage_key,
  startedAt: iso(row.started_at),
  endedAt: iso(row.ended_at),
  createdAt: row.created_at.toISOString(),
});

const toTurn = (row: TurnRow) => ({
  seq: row.seq,
  speaker: row.speaker,
  text: row.text,
  startMs: row.start_ms,
  endMs: row.end_ms,
});

const toCostItem = (row: CostItemRow) => ({
  id: row.id,
  kind: row.kind,
  description: row.description,
  quantity: row.quantity,
  unit: row.unit,
  unitPriceUsd: row.unit_price_usd,
  amountUsd: row.amount_usd,
});

const toEvent = (row: EventRow) => ({
  id: row.id,
  callId: row.call_id,
  type: row.type,
  occurredAt: row.occurred_at.toISOString(),
  data: row.data,
});

/** Query string -> repo filters; a date range that ends before it starts is a request error, not an empty page. */
function callFilters(query: ListCallsQuery): CallFilters {
  const createdFrom = query.dateFrom === undefined ? undefined : new Date(query.dateFrom);
  const createdBefore = query.dateTo === undefined ? undefined : new Date(query.dateTo);
  if (createdFrom && createdBefore && createdFrom > createdBefore) {
    throw invalidField('querystring/dateFrom', 'must not be later than dateTo');
  }
  return {
    campaignId: query.campaignId,
    contactId: query.contactId,
    agentId: query.agentId,
    status: query.status,
    hasRecording: query.hasRecording === undefined ? undefined : query.hasRecording === 'true',
    createdFrom,
    createdBefore,
  };
}

export function createCallsService(deps: CallOperationsDeps) {
  const { repo } = deps;
  const operations = createCallOperations(deps);

  async function detail(accountId: string, id: string) {
    const call = await repo.findById(accountId, id);
    if (!call) throw notFound('Call');
    const [turns, costItems] = await Promise.all([repo.transcript(accountId, id), repo.costItems(accountId, id)]);
    return {
      ...toCallItem(call),
      agentVersion: call.agent_version,
      campaignId: call.campaign_id,
      fromNumber: call.from_number,
      toNumber: call.to_number,
      answeredAt: iso(call.answered_at),
      endReason: call.end_reason,
      updatedAt: call.updated_at.toISOString(),
      transcript: turns.map(toTurn),
      costItems: costItems.map(toCostItem),
    };
  }

  /** One call's timeline, in the order things happened. */
  async function eventsOfCall(accountId: string, id: string, query: ListCallEventsQuery) {
    if (!(await repo.exists(accountId, id))) throw notFound('Call');
    const filters = { callId: id, type: query.type };
    const page = { limit: query.limit, offset: query.offset };
    const [rows, total] = await Promise.all([
      repo.listEvents(accountId, filters, page, 'oldest_first'),
      repo.countEvents(accountId, filters),
    ]);
    return envelope('events', rows.map(toEvent), total, page);
  }

  return {
    /** GET /v1/calls: newest first; dateFrom inclusive, dateTo exclusive, both on created_at. */
    async list(auth: Auth, query: ListCallsQuery) {
      const filters = callFilters(query);
      const page = { limit: query.limit, offset: query.offset };
      const [rows, total] = await Promise.all([
        repo.listPage(auth.accountId, filters, page),
        repo.count(auth.accountId, filters),
      ]);
      return envelope('calls', rows.map(toCallItem), total, page);
    },

    get: (auth: Auth, id: string) => detail(auth.accountId, id),

    /** A call's detail by its account: for platform tools, which find the account from the call. */
    detail,

    /**
     * GET /v1/calls/{id}/transcript.json: for the account's members, or for anyone holding a signed URL of it (the
     * signature is checked whenever one is sent). Neither: 403.
     */
    async transcript(auth: Auth | undefined, id: string, query: SignedAssetQuery = {}) {
      let accountId: string;
      if (query.signature !== undefined || query.expires !== undefined || !auth) {
        accountId = await operations.accountOfSignedTranscript(id, query);
      } else {
        if (!(await repo.exists(auth.accountId, id))) throw notFound('Call');
        accountId = auth.accountId;
      }
      return { callId: id, turns: (await repo.transcript(accountId, id)).map(toTurn) };
    },

    /**
     * What each of these caller numbers did since `since` (outbound calls placed, answered, answered but shorter
     * than `shortSeconds`): the call history phone-number reputation is computed from. Numbers without calls are left out.
     */
    async numberActivity(accountId: string, fromNumbers: readonly string[], since: Date, shortSeconds: number) {
      if (fromNumbers.length === 0) return [];
      const rows = await repo.numberActivity(accountId, fromNumbers, since, shortSeconds);
      return rows.map((row) => ({
        fromNumber: row.from_number!,
        calls: Number(row.calls),
        answered: Number(row.answered),
        short: Number(row.short),
      }));
    },

    /** One call's timeline, in the order things happened. */
    callEvents: (auth: Auth, id: string, query: ListCallEventsQuery) => eventsOfCall(auth.accountId, id, query),

    /** The same, by the call's account: for platform tools. */
    eventsOfCall,

    ...operations,

    /** The account's event feed, newest first; callId and type narrow it. */
    async events(auth: Auth, query: ListEventsQuery) {
      const filters = { callId: query.callId, type: query.type };
      const page = { limit: query.limit, offset: query.offset };
      const [rows, total] = await Promise.all([
        repo.listEvents(auth.accountId, filters, page, 'newest_first'),
        repo.countEvents(auth.accountId, filters),
      ]);
      return envelope('events', rows.map(toEvent), total, page);
    },
  };
}

export type CallsService = ReturnType<typeof createCallsService>;
