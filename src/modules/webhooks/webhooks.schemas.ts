import { Type, type Static } from 'typebox';
import { DateTime, Nullable, PageFields, PageQuery, SingleLineText, Uuid } from '../../http/schemas.js';
import { CallAnalysis } from '../calls/calls.schemas.js';
import { DELIVERY_STATES, TEST_EVENT_TYPE, WEBHOOK_EVENT_TYPES } from './webhooks.tables.js';

export const MAX_WEBHOOK_URL_LENGTH = 2048;

const EventType = Type.Enum([...WEBHOOK_EVENT_TYPES]);
const Url = Type.String({
  minLength: 1,
  maxLength: MAX_WEBHOOK_URL_LENGTH,
  description:
    'Where deliveries are POSTed: https (http only where the operator allows it). Private, loopback and link-local targets are refused.',
  examples: ['https://example.com/hooks/parley'],
});
const Events = Type.Array(EventType, {
  minItems: 1,
  maxItems: WEBHOOK_EVENT_TYPES.length,
  uniqueItems: true,
  description: 'The event types to receive; every type when left out.',
});
const Description = SingleLineText({ maxLength: 200 });

export const CreateWebhookBody = Type.Object(
  {
    url: Url,
    description: Type.Optional(Nullable(Description)),
    events: Type.Optional(Events),
    enabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type CreateWebhookInput = Static<typeof CreateWebhookBody>;

export const UpdateWebhookBody = Type.Object(
  {
    url: Type.Optional(Url),
    description: Type.Optional(Nullable(Description)),
    events: Type.Optional(Events),
    enabled: Type.Optional(
      Type.Boolean({ description: 'true re-enables a disabled endpoint and clears its failure streak.' }),
    ),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type UpdateWebhookInput = Static<typeof UpdateWebhookBody>;

export const Webhook = Type.Object({
  id: Uuid,
  url: Type.String(),
  description: Nullable(Type.String()),
  events: Type.Array(EventType),
  enabled: Type.Boolean(),
  failureStreak: Type.Integer({
    minimum: 0,
    description: 'Consecutive failed attempts; at 10 the endpoint is disabled.',
  }),
  disabledReason: Nullable(
    Type.String({ description: 'Why the endpoint was disabled automatically: the last status or error, and when.' }),
  ),
  disabledAt: Nullable(DateTime),
  secretRotatedUntil: Nullable(DateTime),
  createdAt: DateTime,
  updatedAt: DateTime,
});

export const WebhookWithSecret = Type.Object({
  ...Webhook.properties,
  secret: Type.String({ description: 'The signing secret (whsec_...). Shown in this answer only; keep it.' }),
});

export const WebhookList = Type.Object({ webhooks: Type.Array(Webhook), ...PageFields });

export const RotatedSecret = Type.Object({
  id: Uuid,
  secret: Type.String({ description: 'The new signing secret. Shown in this answer only.' }),
  previousSecretValidUntil: DateTime,
});

export const ListDeliveriesQuery = Type.Object(
  {
    ...PageQuery,
    state: Type.Optional(Type.Enum([...DELIVERY_STATES], { description: 'Only deliveries in this state.' })),
    eventType: Type.Optional(
      Type.Enum([...WEBHOOK_EVENT_TYPES, TEST_EVENT_TYPE], { description: 'Only deliveries of this event type.' }),
    ),
  },
  { additionalProperties: false },
);
export type ListDeliveriesQuery = Static<typeof ListDeliveriesQuery>;

export const DeliveryAttempt = Type.Object(
  {
    number: Type.Integer(),
    startedAt: DateTime,
    finishedAt: Nullable(DateTime),
    statusCode: Nullable(Type.Integer()),
    latencyMs: Nullable(Type.Integer()),
    error: Nullable(Type.String()),
    responseBody: Nullable(Type.String({ description: 'The first 1 KB of the response body.' })),
  },
  {
    title: 'DeliveryAttempt',
    description: 'One attempt of a delivery: when, the answer, how long it took, or the error.',
  },
);

export const Delivery = Type.Object({
  id: Uuid,
  webhookId: Uuid,
  eventId: Nullable(Uuid),
  eventType: Type.String(),
  occurredAt: DateTime,
  state: Type.Enum([...DELIVERY_STATES]),
  nextAttemptAt: Nullable(DateTime),
  attempts: Type.Array(DeliveryAttempt),
  createdAt: DateTime,
});

export const DeliveryList = Type.Object({ deliveries: Type.Array(Delivery), ...PageFields });

export const DeliveryParams = Type.Object({ id: Uuid, deliveryId: Uuid }, { additionalProperties: false });

export const RedeliverSinceBody = Type.Object(
  {
    since: Type.String({
      format: 'date-time',
      description: 'Failed and abandoned deliveries created at or after this instant are sent again.',
    }),
  },
  { additionalProperties: false },
);
export type RedeliverSinceInput = Static<typeof RedeliverSinceBody>;

export const RedeliveredBody = Type.Object({ redelivered: Type.Integer({ minimum: 0 }) });
export const QueuedDelivery = Type.Object({ deliveryId: Uuid, state: Type.Literal('pending') });

// Payloads, for the documentation of what each event carries.
const CallBase = { callId: Uuid, agentId: Nullable(Uuid), contactId: Nullable(Uuid), status: Type.String() };
export const EVENT_PAYLOADS = {
  'call.queued': Type.Object({ ...CallBase, direction: Type.String() }),
  'call.connected': Type.Object({ ...CallBase, direction: Type.String(), answeredBy: Type.Enum(['human', 'machine']) }),
  'call.completed': Type.Object({
    ...CallBase,
    durationSeconds: Nullable(Type.Integer()),
    disposition: Nullable(Type.String()),
    recordingUrl: Nullable(
      Type.String({
        description: 'A signed URL of the recording, valid for a limited time; null without a recording.',
      }),
    ),
    analysis: Type.Optional(CallAnalysis),
  }),
  'call.failed': Type.Object({
    ...CallBase,
    durationSeconds: Nullable(Type.Integer()),
    disposition: Nullable(Type.String()),
    endReason: Nullable(Type.String()),
  }),
  'campaign.started': Type.Object({ campaignId: Uuid, name: Type.String(), agentId: Uuid }),
  'campaign.compliance_paused': Type.Object({
    campaignId: Uuid,
    abandonRate: Type.Number({ description: 'Abandoned calls divided by live-answered calls over the window.' }),
    threshold: Type.Number({ description: 'The abandon rate above which a campaign is paused (0.035).' }),
    windowDays: Type.Integer(),
  }),
  [TEST_EVENT_TYPE]: Type.Object({ webhookId: Uuid, message: Type.String() }),
} as const;

export const MAX_REDELIVER_BULK = 1000;
