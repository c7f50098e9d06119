/**
 * Domain events: `{ type, accountId, subject, data, occurredAt }`, written in the same transaction as the change
 * that causes them (the outbox). Subscribers in other modules receive each one through a job of their own.
 */
import type { ColumnType, JSONColumnType } from 'kysely';
import type { Auth } from '../http/auth.js';

/** Every domain event type. A subscriber names the ones it wants (or all). */
export const DOMAIN_EVENT_TYPES = [
  'agent.created',
  'agent.updated',
  'agent.deleted',
  'api_key.created',
  'api_key.deleted',
  'contact_list.imported',
  'contact.updated',
  'dnc.added',
  'dnc.removed',
  'call.queued',
  'call.connected',
  'call.completed',
  'call.failed',
  'call.disposition_set',
  'call.test_placed',
  'phone_number.added',
  'phone_number.purchased',
  'phone_number.assigned',
  'phone_number.released',
  'disposition_code.created',
  'disposition_code.updated',
  'disposition_code.deleted',
  'campaign.started',
  'campaign.compliance_paused',
] as const;
export type DomainEventType = (typeof DOMAIN_EVENT_TYPES)[number];

export interface Actor {
  userId: string | null;
  apiKeyId: string | null;
}

export interface DomainEventInput {
  type: DomainEventType;
  accountId: string;
  /** What changed: a resource kind and its id (an agent, a contact, a phone number on the DNC list). */
  subject: { type: string; id: string };
  data?: Record<string, unknown>;
  /** Who made the change; null for the system (a job, the dialer). */
  actor: Actor | null;
}

export interface DomainEvent extends Required<DomainEventInput> {
  id: string;
  occurredAt: Date;
}

/** The caller of a request, as an event's actor. */
export const actorOf = (auth: Auth): Actor => ({ userId: auth.userId ?? null, apiKeyId: auth.apiKeyId ?? null });

export interface DomainEventsTable {
  id: string;
  account_id: string;
  type: DomainEventType;
  subject_type: string;
  subject_id: string;
  actor_user_id: string | null;
  actor_api_key_id: string | null;
  data: JSONColumnType<Record<string, unknown>, string, never>;
  occurred_at: ColumnType<Date, Date, never>;
}

export interface DomainEventsTables {
  domain_events: DomainEventsTable;
}

/** The columns an event is stored in, here and in subscribers' own copies (the audit log). */
export const eventColumns = (event: DomainEvent) => ({
  id: event.id,
  account_id: event.accountId,
  type: event.type,
  subject_type: event.subject.type,
  subject_id: event.subject.id,
  actor_user_id: event.actor?.userId ?? null,
  actor_api_key_id: event.actor?.apiKeyId ?? null,
  data: JSON.stringify(event.data),
  occurred_at: event.occurredAt,
});

export const actorFromColumns = (row: {
  actor_user_id: string | null;
  actor_api_key_id: string | null;
}): Actor | null =>
  row.actor_user_id || row.actor_api_key_id ? { userId: row.actor_user_id, apiKeyId: row.actor_api_key_id } : null;
