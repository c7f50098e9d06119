import type { ColumnType, Generated, JSONColumnType } from 'kysely';

/** The event types an endpoint can receive (the public ones; the rest of the domain events stay inside). */
export const WEBHOOK_EVENT_TYPES = [
  'call.queued',
  'call.connected',
  'call.completed',
  'call.failed',
  'campaign.started',
  'campaign.compliance_paused',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** Sent by POST /v1/webhooks/{id}/test only; never subscribed to. */
export const TEST_EVENT_TYPE = 'webhook.test';

export const DELIVERY_STATES = ['pending', 'succeeded', 'failed', 'abandoned'] as const;
export type DeliveryState = (typeof DELIVERY_STATES)[number];

type Timestamp = ColumnType<Date, Date, Date>;

export interface WebhookEndpointsTable {
  id: string;
  account_id: string;
  url: string;
  description: string | null;
  events: JSONColumnType<string[], string, string>;
  enabled: Generated<boolean>;
  secret_encrypted: string;
  previous_secret_encrypted: string | null;
  previous_secret_expires_at: Date | null;
  failure_streak: Generated<number>;
  disabled_reason: string | null;
  disabled_at: Date | null;
  /** When its last attempt timed out (the penalty lane); null once an attempt ends otherwise. */
  timed_out_at: Generated<Date | null>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface WebhookDeliveriesTable {
  id: string;
  account_id: string;
  endpoint_id: string;
  event_id: string | null;
  event_type: string;
  subject_id: string | null;
  occurred_at: Timestamp;
  seq: ColumnType<string, never, never>;
  body: string;
  state: DeliveryState;
  attempt_count: Generated<number>;
  round_attempts: Generated<number>;
  next_attempt_at: Date | null;
  first_attempt_done: Generated<boolean>;
  follows_unsent: Generated<boolean>;
  /** Every attempt, one JSON object (an AttemptRecord) per line, oldest first. */
  attempts: ColumnType<string, never, never>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** One attempt of a delivery, as kept in its row (times as ISO strings); finishedAt null: cut off with its process. */
export interface AttemptRecord {
  number: number;
  startedAt: string;
  finishedAt: string | null;
  statusCode: number | null;
  latencyMs: number | null;
  error: string | null;
  responseBody: string | null;
}

export interface WebhookDispatchLeasesTable {
  id: string;
  started_at: Date;
  leased_until: Date;
  delivery_ids: string[];
}

export interface WebhookKeysTable {
  name: string;
  value: string;
}

export interface WebhooksTables {
  webhook_endpoints: WebhookEndpointsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_dispatch_leases: WebhookDispatchLeasesTable;
  webhook_keys: WebhookKeysTable;
}
