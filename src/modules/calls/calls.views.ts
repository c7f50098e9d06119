/**
 * How the calls module shows its rows in the API: a call item, a transcript turn, a cost item, an event, an analysis,
 * and the data of the domain event of a call's end.
 */
import type { Selectable } from 'kysely';
import type { CallAnalysisData, CallEndedData } from '../../events/domain-events.js';
import { invalidField } from '../../lib/errors.js';
import type { CallFilters, CallRow, CallsRepo } from './calls.repo.js';
import type { ListCallsQuery } from './calls.schemas.js';
import type { CallAnalysesTable, CallsTable } from './calls.tables.js';

type TurnRow = Awaited<ReturnType<CallsRepo['transcript']>>[number];
type CostItemRow = Awaited<ReturnType<CallsRepo['costItems']>>[number];
type EventRow = Awaited<ReturnType<CallsRepo['listEvents']>>[number];

export const iso = (value: Date | null) => (value === null ? null : value.toISOString());

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

/** A call in a list. contactPhone is the far end of the call: the number dialled, or the number that called in. */
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

export const toTurn = (row: TurnRow) => ({
  seq: row.seq,
  speaker: row.speaker,
  text: row.text,
  startMs: row.start_ms,
  endMs: row.end_ms,
});

export const toCostItem = (row: CostItemRow) => ({
  id: row.id,
  kind: row.kind,
  description: row.description,
  quantity: row.quantity,
  unit: row.unit,
  unitPriceUsd: row.unit_price_usd,
  amountUsd: row.amount_usd,
});

export const toEvent = (row: EventRow) => ({
  id: row.id,
  callId: row.call_id,
  type: row.type,
  occurredAt: row.occurred_at.toISOString(),
  data: row.data,
});

export const toAnalysis = (row: Selectable<CallAnalysesTable>): CallAnalysisData => ({
  summary: row.summary,
  outcome: row.outcome,
  missionSucceeded: row.mission_succeeded,
  missionReason: row.mission_reason,
  nextSteps: row.next_steps,
  callback:
    row.callback_asked === null
      ? null
      : { asked: row.callback_asked, at: iso(row.callback_at), timeZone: row.callback_time_zone ?? 'UTC' },
  fields: row.fields,
  method: row.method,
  model: row.model,
  analyzedAt: row.analyzed_at.toISOString(),
});

/**
 * What call.completed and call.failed carry: the call as it ended, the signed URL of its recording (webhook bodies),
 * the number it went out from and when it was answered (that number's reputation), and for call.completed the
 * analysis.
 */
export function toCallEndedData(
  row: Selectable<CallsTable>,
  recordingUrl: string | null,
  analysis?: CallAnalysisData,
): CallEndedData {
  return {
    callId: row.id,
    agentId: row.agent_id,
    contactId: row.contact_id,
    direction: row.direction,
    status: row.status,
    endReason: row.end_reason,
    durationSeconds: row.duration_seconds,
    disposition: row.disposition,
    totalCostUsd: row.total_cost_usd,
    hasRecording: row.recording_storage_key !== null,
    recordingUrl,
    campaignId: row.campaign_id,
    fromNumber: row.from_number,
    answeredAt: iso(row.answered_at),
    ...(analysis ? { analysis, callbackAt: iso(row.callback_at) } : {}),
  };
}

/** Query string -> repo filters; a date range that ends before it starts is a request error, not an empty page. */
export function callFilters(query: ListCallsQuery): CallFilters {
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
