/**
 * Domain events: `{ type, accountId, subject, data, occurredAt }`, written in the same transaction as the change
 * that causes them (the outbox). Subscribers in other modules receive each one through a job of their own.
 */
import type { ColumnType, JSONColumnType, Selectable } from 'kysely';
import type { Auth } from '../lib/caller.js';

/** An event that carries no data beyond its subject. */
export type NoEventData = Record<string, never>;

/** A call's post-call analysis, as GET /v1/calls/{id} and call.completed show it. */
export interface CallAnalysisData {
  summary: string;
  outcome: string;
  missionSucceeded: boolean;
  missionReason: string;
  nextSteps: string[];
  /** Null unless the callee asked to be called back; `at` (ISO 8601) null when they named no time. */
  callback: { asked: string; at: string | null; timeZone: string } | null;
  fields: Record<string, string | number | boolean | null>;
  method: 'model' | 'transcript';
  model: string | null;
  analyzedAt: string;
}

/** A call's end, as call.completed and call.failed carry it. */
export interface CallEndedData {
  callId: string;
  agentId: string | null;
  contactId: string | null;
  direction: string;
  /** completed, or failed, busy, no_answer. */
  status: string;
  endReason: string | null;
  durationSeconds: number | null;
  disposition: string | null;
  totalCostUsd: string;
  hasRecording: boolean;
  /** A signed URL of the recording, made in the call's transaction (webhook bodies carry it); null without one. */
  recordingUrl: string | null;
  campaignId: string | null;
  /** The number the call went out from (or came in on), when it had one. */
  fromNumber: string | null;
  /** When the far end picked up (ISO 8601), or null if it never did. */
  answeredAt: string | null;
  /** call.completed: the call's analysis (the event is sent once it is written). */
  analysis?: CallAnalysisData;
  /** call.completed: when the callee asked to be called back (ISO 8601), or null. */
  callbackAt?: string | null;
}

/**
 * Every domain event type and the data it carries: what its emitter writes and its subscribers may read. `tx.emit`
 * is checked against it, and a subscriber that narrows on `event.type` reads the data typed.
 */
export interface DomainEventDataMap {
  'agent.created': { name: string; status: string; version: number };
  /** `changed`: the API names of the fields saved; `version` moves only when a versioned field changed. */
  'agent.updated': { changed: string[]; version: number };
  'agent.deleted': NoEventData;
  'api_key.created': { name: string; displayPrefix: string };
  'api_key.deleted': NoEventData;
  'contact_list.imported': {
    name: string;
    counts: { rows: number; imported: number; updated: number; duplicates: number; invalid: number; dnc: number };
  };
  'contact.updated': { changed: string[] };
  /** One number (subject: the phone number) from the API or from a call; or a bulk upload (subject: the list). */
  'dnc.added':
    | { source: 'api'; reason: string | null }
    | { source: 'call'; reason: string; callId: string }
    | { source: 'bulk'; added: number };
  'dnc.removed': NoEventData;
  'call.queued': {
    callId: string;
    agentId: string | null;
    contactId: string | null;
    direction: string;
    status: 'queued';
  };
  'call.connected': {
    callId: string;
    agentId: string | null;
    contactId: string | null;
    direction: string;
    status: 'connected';
    answeredBy: 'human' | 'machine';
  };
  'call.completed': CallEndedData;
  'call.failed': CallEndedData;
  'call.disposition_set': { callId: string; disposition: string; previous: string | null; source: 'engine' | 'user' };
  'call.test_placed': { callId: string; agentId: string | null; toNumber: string | null; fromNumber: string | null };
  'phone_number.added': { number: string };
  'phone_number.purchased': { number: string; carrier: string; monthlyFeeUsd: string };
  /** `reason`: moved (the agent took another number) or agent_deleted; none when a user routed the number. */
  'phone_number.assigned': { number: string; agentId: string | null; previousAgentId: string | null; reason?: string };
  'phone_number.released': { number: string; source: string; agentId: string | null };
  'disposition_code.created': { code: string; label: string; category: string };
  'disposition_code.updated': { code: string; changed: string[] };
  'disposition_code.deleted': { code: string };
  'campaign.started': { campaignId: string; name: string; agentId: string };
  /** The 30-day abandon rate that paused the campaign, and its figures; `window` is the window's length (30d). */
  'campaign.compliance_paused': {
    campaignId: string;
    abandonRate: number;
    threshold: number;
    window: `${number}d`;
    abandoned: number;
    liveAnswered: number;
  };
}

export type DomainEventType = keyof DomainEventDataMap;
export type DomainEventData<T extends DomainEventType = DomainEventType> = DomainEventDataMap[T];

/** Every domain event type, at run time. A subscriber names the ones it wants (or all). */
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
] as const satisfies readonly DomainEventType[];

type Unlisted = Exclude<DomainEventType, (typeof DOMAIN_EVENT_TYPES)[number]>;
/** Compiles only while the list names every type of the map (`satisfies` above refuses a type the map lacks). */
export const EVERY_EVENT_TYPE_LISTED: [Unlisted] extends [never] ? true : { unlisted: Unlisted } = true;

export interface Actor {
  userId: string | null;
  apiKeyId: string | null;
}

interface EventEnvelope {
  accountId: string;
  /** What changed: a resource kind and its id (an agent, a contact, a phone number on the DNC list). */
  subject: { type: string; id: string };
  /** Who made the change; null for the system (a job, the dialer). */
  actor: Actor | null;
}

/** What `tx.emit` takes: one of the types, with its data (which may be left out when the type carries none). */
export type DomainEventInput<T extends DomainEventType = DomainEventType> = {
  [K in T]: EventEnvelope & { type: K } & (NoEventData extends DomainEventDataMap[K]
      ? { data?: DomainEventDataMap[K] }
      : { data: DomainEventDataMap[K] });
}[T];

/** An event as recorded; narrowing on `type` narrows `data`. */
export type DomainEvent<T extends DomainEventType = DomainEventType> = {
  [K in T]: EventEnvelope & { type: K; data: DomainEventDataMap[K]; id: string; occurredAt: Date };
}[T];

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

/** An event read back from its columns; its data is what the emitter wrote for its type. */
export const eventFromColumns = (row: Selectable<DomainEventsTable>): DomainEvent =>
  ({
    id: row.id,
    type: row.type,
    accountId: row.account_id,
    subject: { type: row.subject_type, id: row.subject_id },
    actor: actorFromColumns(row),
    data: row.data,
    occurredAt: row.occurred_at,
  }) as DomainEvent;
