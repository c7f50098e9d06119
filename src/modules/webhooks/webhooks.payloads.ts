/**
 * What a delivery carries: the documented body of each event type (`EVENT_PAYLOADS`, published in the API document),
 * shaped from the domain event's data, and the delivery row that holds it until it is sent.
 */
import type { Static } from 'typebox';
import type { DomainEvent } from '../../events/domain-events.js';
import { newId } from '../../lib/ids.js';
import type { NewDelivery } from './webhooks.repo.js';
import type { EVENT_PAYLOADS } from './webhooks.schemas.js';
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from './webhooks.tables.js';

/** The documented `data` of a webhook body, by event type (the test event's included). */
export type WebhookData<T extends keyof typeof EVENT_PAYLOADS = keyof typeof EVENT_PAYLOADS> = Static<
  (typeof EVENT_PAYLOADS)[T]
>;

export const isWebhookEvent = (event: DomainEvent): event is DomainEvent<WebhookEventType> =>
  (WEBHOOK_EVENT_TYPES as readonly string[]).includes(event.type);

/** The body's `data` of a domain event an endpoint receives: the fields receivers rely on, and no others. */
export function payloadOf(event: DomainEvent<WebhookEventType>): WebhookData<WebhookEventType> {
  switch (event.type) {
    case 'call.queued': {
      const { callId, agentId, contactId, status, direction } = event.data;
      return { callId, agentId, contactId, status, direction } satisfies WebhookData<'call.queued'>;
    }
    case 'call.connected': {
      const { callId, agentId, contactId, status, direction, answeredBy } = event.data;
      return { callId, agentId, contactId, status, direction, answeredBy } satisfies WebhookData<'call.connected'>;
    }
    case 'call.completed': {
      const { callId, agentId, contactId, status, durationSeconds, disposition, recordingUrl, analysis } = event.data;
      const data = {
        callId,
        agentId,
        contactId,
        status,
        durationSeconds,
        disposition,
        recordingUrl,
        // The calls module writes the outcome from its own list of outcomes, which the event's type leaves open.
        ...(analysis ? { analysis: analysis as NonNullable<WebhookData<'call.completed'>['analysis']> } : {}),
      };
      return data satisfies WebhookData<'call.completed'>;
    }
    case 'call.failed': {
      const { callId, agentId, contactId, status, durationSeconds, disposition, endReason } = event.data;
      const data = { callId, agentId, contactId, status, durationSeconds, disposition, endReason };
      return data satisfies WebhookData<'call.failed'>;
    }
    case 'campaign.started': {
      const { campaignId, name, agentId } = event.data;
      return { campaignId, name, agentId } satisfies WebhookData<'campaign.started'>;
    }
    case 'campaign.compliance_paused': {
      const { campaignId, abandonRate, threshold, window } = event.data;
      const windowDays = Number.parseInt(window, 10);
      return { campaignId, abandonRate, threshold, windowDays } satisfies WebhookData<'campaign.compliance_paused'>;
    }
    default: {
      const unreachable: never = event;
      throw new Error(`No webhook body for ${(unreachable as DomainEvent).type}`);
    }
  }
}

/** What a delivery's body is made of: `{ id, type, occurredAt, data }`, the id being the delivery's own. */
export interface DeliveryContent {
  /** The domain event delivered; null for the test event. */
  eventId: string | null;
  type: string;
  /** Deliveries of one subject (a call) to one endpoint go out in the order their events happened. */
  subjectId: string | null;
  occurredAt: Date;
  data: WebhookData;
}

/** A delivery of `content` to one endpoint, due now. */
export function newDelivery(endpointId: string, content: DeliveryContent, now: Date): NewDelivery {
  const id = newId();
  const { type, occurredAt, data } = content;
  return {
    id,
    endpoint_id: endpointId,
    event_id: content.eventId,
    event_type: type,
    subject_id: content.subjectId,
    occurred_at: occurredAt,
    body: JSON.stringify({ id, type, occurredAt: occurredAt.toISOString(), data }),
    state: 'pending',
    next_attempt_at: now,
    created_at: now,
    updated_at: now,
  };
}
