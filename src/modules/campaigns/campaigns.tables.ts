import type { ColumnType, Generated, JSONColumnType } from 'kysely';
import type { Schedule } from './campaigns.window.js';

export const CAMPAIGN_STATUSES = ['draft', 'running', 'paused', 'completed', 'cancelled'] as const;
export type CampaignStatus = (typeof CAMPAIGN_STATUSES)[number];

export const PAUSE_REASONS = ['manual', 'compliance', 'no_usable_number'] as const;
export type PauseReason = (typeof PAUSE_REASONS)[number];

/** Outcomes that have retry rules. */
export const RETRY_OUTCOMES = ['busy', 'no_answer', 'voicemail', 'failed'] as const;
export type RetryOutcome = (typeof RETRY_OUTCOMES)[number];

export const VOICEMAIL_ACTIONS = ['hang_up', 'leave_message'] as const;
export type VoicemailAction = (typeof VOICEMAIL_ACTIONS)[number];

/** Why the pre-dial gate refused a dial. */
export const GATE_DENIALS = [
  'dnc_listed',
  'contact_deleted',
  'timezone_unknown',
  'outside_window',
  'max_attempts',
  'daily_attempt_limit',
  'contact_in_call',
  'recently_abandoned',
] as const;
export type GateDenial = (typeof GATE_DENIALS)[number];

export type RetryRules = Record<RetryOutcome, { attempts: number; spacingMinutes: number }>;

type CreatedAt = ColumnType<Date, Date | string | undefined, never>;

export interface CampaignsTable {
  id: string;
  account_id: string;
  name: string;
  agent_id: string;
  contact_list_ids: string[];
  from_number_ids: string[];
  max_concurrency: number;
  calls_per_minute: number;
  schedule: JSONColumnType<Schedule, string, string>;
  retry_rules: JSONColumnType<RetryRules, string, string>;
  max_attempts_per_contact: number;
  stop_at: Date | null;
  voicemail_action: VoicemailAction;
  status: Generated<CampaignStatus>;
  paused_reason: PauseReason | null;
  paused_details: JSONColumnType<Record<string, unknown> | null, string | null, string | null>;
  number_cursor: ColumnType<string, never, never>;
  resting_numbers: JSONColumnType<Record<string, string>, string | undefined, string>;
  pace_limit: ColumnType<number, number | undefined, number>;
  contacts_loaded: Generated<boolean>;
  started_at: Date | null;
  completed_at: Date | null;
  created_at: CreatedAt;
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

export const CONTACT_STATES = ['pending', 'claimed', 'in_call', 'done'] as const;

export interface CampaignContactsTable {
  campaign_id: string;
  account_id: string;
  contact_id: string;
  state: Generated<(typeof CONTACT_STATES)[number]>;
  attempts: Generated<number>;
  claimed_at: Date | null;
  next_attempt_at: Date;
  last_outcome: string | null;
}

export const ATTEMPT_STATUSES = ['denied', 'dialed', 'ended'] as const;

export interface CampaignAttemptsTable {
  id: string;
  account_id: string;
  campaign_id: string;
  contact_id: string;
  attempt_number: number;
  status: (typeof ATTEMPT_STATUSES)[number];
  /** 'allow' or the gate's reason for a denial. */
  decision: string;
  decided_at: Date;
  call_id: string | null;
  from_number: string | null;
  outcome: string | null;
  live_answered: Generated<boolean>;
  abandoned: Generated<boolean>;
  talk_seconds: number | null;
  cost_usd: string | null;
  disposition: string | null;
  ended_at: Date | null;
  created_at: CreatedAt;
}

type Counter = ColumnType<number, number | undefined, number>;

export interface CampaignStatsTable {
  campaign_id: string;
  account_id: string;
  contacts_total: Counter;
  contacts_done: Counter;
  dialed: Counter;
  connected: Counter;
  live_answered: Counter;
  voicemail: Counter;
  busy: Counter;
  no_answer: Counter;
  failed: Counter;
  abandoned: Counter;
  talk_seconds: ColumnType<string, string | number | undefined, string | number>;
  talk_calls: Counter;
  cost_usd: ColumnType<string, string | undefined, string>;
}

export interface CampaignCountersTable {
  campaign_id: string;
  account_id: string;
  kind: 'denial' | 'disposition';
  key: string;
  count: Counter;
}

export interface CampaignsTables {
  campaigns: CampaignsTable;
  campaign_contacts: CampaignContactsTable;
  campaign_attempts: CampaignAttemptsTable;
  campaign_stats: CampaignStatsTable;
  campaign_counters: CampaignCountersTable;
}
