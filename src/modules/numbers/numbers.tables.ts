import type { ColumnType } from 'kysely';

/** byo: a number the account already owns and brought here; purchased: bought from the carrier, charged monthly. */
export const NUMBER_SOURCES = ['byo', 'purchased'] as const;
export type NumberSource = (typeof NUMBER_SOURCES)[number];

export const NUMBER_CAPABILITIES = ['voice', 'sms'] as const;
export type NumberCapability = (typeof NUMBER_CAPABILITIES)[number];

export const REPUTATION_LABELS = ['clean', 'at_risk', 'spam_likely'] as const;
export type ReputationLabel = (typeof REPUTATION_LABELS)[number];

type CreatedAt = ColumnType<Date, Date | undefined, never>;

export interface PhoneNumbersTable {
  id: string;
  account_id: string;
  number: string;
  country: string;
  area_code: string | null;
  capabilities: NumberCapability[];
  source: NumberSource;
  /** numeric(10,2): a decimal string. */
  monthly_fee_usd: ColumnType<string, string | undefined, never>;
  agent_id: string | null;
  reputation_score: number | null;
  reputation_label: ReputationLabel | null;
  reputation_calls: number | null;
  reputation_answered: number | null;
  reputation_short: number | null;
  reputation_checked_at: Date | null;
  created_at: CreatedAt;
  updated_at: ColumnType<Date, Date | undefined, Date>;
}

export interface NumberChargesTable {
  id: string;
  account_id: string;
  phone_number_id: string | null;
  number: string;
  description: string;
  /** numeric(10,2): a decimal string. */
  amount_usd: ColumnType<string, string, never>;
  period_start: ColumnType<Date, Date, never>;
  period_end: ColumnType<Date, Date, never>;
  created_at: CreatedAt;
}

/** An outbound call that ended, as the reputation counts it: written from the call's end event. */
export interface NumberCallsTable {
  account_id: string;
  call_id: string;
  from_number: string;
  ended_at: Date;
  answered: boolean;
  /** Answered and over within seconds (hung up at once). */
  short: boolean;
}

export interface NumbersTables {
  phone_numbers: PhoneNumbersTable;
  number_charges: NumberChargesTable;
  number_calls: NumberCallsTable;
}
