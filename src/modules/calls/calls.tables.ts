import type { ColumnType, JSONColumnType } from 'kysely';
import type { VoicemailAction } from '../agents/agents.tables.js';

/**
 * Every status the call engine moves a call through: queued, then live (dialing, ringing, connected), then final. Lists
 * filter by every status but `queued`.
 */
export const CALL_STATUSES = [
  'queued',
  'dialing',
  'ringing',
  'connected',
  'completed',
  'failed',
  'busy',
  'no_answer',
] as const;
export type CallStatus = (typeof CALL_STATUSES)[number];

export const CALL_DIRECTIONS = ['inbound', 'outbound'] as const;
export type CallDirection = (typeof CALL_DIRECTIONS)[number];

export const TRANSCRIPT_SPEAKERS = ['agent', 'caller', 'system', 'tool'] as const;
export type TranscriptSpeaker = (typeof TRANSCRIPT_SPEAKERS)[number];

export const COST_ITEM_KINDS = ['telephony', 'llm', 'stt', 'tts', 'recording', 'platform'] as const;
export type CostItemKind = (typeof COST_ITEM_KINDS)[number];

/** Statuses of a call that is under way: it holds one of its account's concurrent-call slots. */
export const LIVE_CALL_STATUSES = ['dialing', 'ringing', 'connected'] as const;
/** Statuses a call ends in. */
export const FINAL_CALL_STATUSES = ['completed', 'failed', 'busy', 'no_answer'] as const;
export type FinalCallStatus = (typeof FINAL_CALL_STATUSES)[number];
export type LiveCallStatus = (typeof LIVE_CALL_STATUSES)[number];
/** The statuses a list of calls filters by, in the order the API documents them: all but `queued`. */
export const CALL_STATUS_FILTERS = [
  'completed',
  'failed',
  'busy',
  'no_answer',
  'connected',
  'dialing',
  'ringing',
] as const satisfies ReadonlyArray<FinalCallStatus | LiveCallStatus>;

/** The call is under way: dialing, ringing or connected. */
export const isLive = (status: string): status is LiveCallStatus =>
  (LIVE_CALL_STATUSES as readonly string[]).includes(status);
/** The call has ended; nothing changes it any more but a user's disposition. */
export const isFinal = (status: string): status is FinalCallStatus =>
  (FINAL_CALL_STATUSES as readonly string[]).includes(status);

/**
 * The events of a call's timeline: every status change,
 * every transcript turn, the disposition and a do-not-call addition; campaign events have no call.
 */
export const CALL_EVENT_TYPES = [
  'call.queued',
  'call.dialing',
  'call.ringing',
  'call.connected',
  'call.turn',
  'call.voicemail',
  'call.transferred',
  'call.disposition_set',
  'call.dnc_added',
  'call.completed',
  'call.failed',
  'call.knowledge_retrieved',
  'campaign.started',
  'campaign.compliance_paused',
] as const;
export type CallEventType = (typeof CALL_EVENT_TYPES)[number];

type CreatedAt = ColumnType<Date, Date | string | undefined, never>;
type Timestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;

export interface CallsTable {
  id: string;
  account_id: string;
  agent_id: string | null;
  agent_version: number | null;
  contact_id: string | null;
  campaign_id: string | null;
  direction: CallDirection;
  status: ColumnType<CallStatus, CallStatus | undefined, CallStatus>;
  disposition: string | null;
  from_number: string | null;
  to_number: string | null;
  started_at: Timestamp;
  answered_at: Timestamp;
  ended_at: Timestamp;
  duration_seconds: number | null;
  /** numeric(14,6): a decimal string; written only by the cost-items trigger. */
  total_cost_usd: ColumnType<string, never, never>;
  recording_storage_key: string | null;
  end_reason: string | null;
  created_at: CreatedAt;
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>;
  /** Database time of the running process's last sign of life; null unless the call is live. */
  heartbeat_at: Timestamp;
  runner_id: string | null;
  provider: string | null;
  provider_call_id: string | null;
  usage: ColumnType<CallUsage, string | undefined, string>;
  /** Milliseconds from the answer until the agent began to speak; null when nobody answered. */
  agent_latency_ms: ColumnType<number | null, number | null | undefined, number | null>;
  /** A campaign's call: what it does at an answering machine, as its campaign said; null: the agent's setting. */
  voicemail_action: ColumnType<VoicemailAction | null, VoicemailAction | null | undefined, never>;
  /** When the callee asked to be called back (the analysis's callback time); null when they did not. */
  callback_at: Timestamp;
}

/** What a call used so far, priced when it ends. */
export interface CallUsage {
  llmInputTokens?: number;
  llmOutputTokens?: number;
  ttsCharacters?: number;
  /** The far end's speech, in milliseconds (what speech-to-text would transcribe). */
  sttMs?: number;
}

/** Derived: calls per (account, status, agent, campaign, has a recording), kept by triggers on calls. */
export interface CallCountsTable {
  account_id: string;
  status: CallStatus;
  agent_id: string | null;
  campaign_id: string | null;
  has_recording: boolean;
  /** Which of the combination's rows: one per database connection, so concurrent writers never wait on one. */
  shard: ColumnType<number, never, never>;
  calls: ColumnType<number, never, never>;
}

/** Derived: events per (account, type), kept by triggers on call_events. */
export interface CallEventTypeCountsTable {
  account_id: string;
  type: CallEventType;
  /** Which of the (account, type)'s rows: one per database connection, so concurrent writers never wait on one. */
  shard: ColumnType<number, never, never>;
  events: ColumnType<number, never, never>;
}

export interface CallTranscriptTurnsTable {
  call_id: string;
  account_id: string;
  seq: number;
  speaker: TranscriptSpeaker;
  text: string;
  start_ms: number | null;
  end_ms: number | null;
}

export interface CallCostItemsTable {
  id: string;
  call_id: string;
  account_id: string;
  kind: CostItemKind;
  description: string;
  quantity: string;
  unit: string;
  unit_price_usd: string;
  amount_usd: string;
  created_at: CreatedAt;
}

export interface CallEventsTable {
  id: string;
  account_id: string;
  call_id: string | null;
  type: CallEventType;
  data: JSONColumnType<Record<string, unknown>, string | undefined, string>;
  occurred_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

/**
 * How an answered call ended, as its analysis reads it: the caller agreed to what the agent asked (interested), asked
 * for a callback, declined, asked not to be called again, asked for a person (transferred when the agent could,
 * else person_requested), reached voicemail, hung up before a conversation, or ended without a decision.
 */
export const ANALYSIS_OUTCOMES = [
  'interested',
  'callback_requested',
  'not_interested',
  'do_not_call',
  'transferred',
  'person_requested',
  'voicemail',
  'hung_up',
  'undecided',
] as const;
export type AnalysisOutcome = (typeof ANALYSIS_OUTCOMES)[number];

/** Who wrote an analysis: the agent's LLM, or the built-in extractor reading the transcript. */
export const ANALYSIS_METHODS = ['model', 'transcript'] as const;
export type AnalysisMethod = (typeof ANALYSIS_METHODS)[number];

/** A declared field's value in an analysis; null when the call did not say it. */
export type AnalysisFieldValue = string | number | boolean | null;

/** The post-call analysis of a call: one row, written once by the calls.analyze job. */
export interface CallAnalysesTable {
  call_id: string;
  account_id: string;
  summary: string;
  outcome: AnalysisOutcome;
  mission_succeeded: boolean;
  mission_reason: string;
  next_steps: ColumnType<string[], string, never>;
  callback_asked: string | null;
  callback_at: Date | null;
  callback_time_zone: string | null;
  fields: ColumnType<Record<string, AnalysisFieldValue>, string, never>;
  method: AnalysisMethod;
  model: string | null;
  analyzed_at: ColumnType<Date, Date, never>;
}

/** Secrets the service generates for itself (the key of signed asset URLs), shared by every instance. */
export interface ServerSecretsTable {
  name: string;
  value: string;
  created_at: ColumnType<Date, Date | undefined, never>;
}

export interface CallsTables {
  server_secrets: ServerSecretsTable;
  calls: CallsTable;
  call_counts: CallCountsTable;
  call_transcript_turns: CallTranscriptTurnsTable;
  call_cost_items: CallCostItemsTable;
  call_events: CallEventsTable;
  call_analyses: CallAnalysesTable;
  call_event_type_counts: CallEventTypeCountsTable;
}
