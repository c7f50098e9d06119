/**
 * The `webhooks` section of the OpenAPI document: one POST per event type the service sends to an endpoint, with the
 * headers, the body and what the receiver answers.
 */
import type { OpenAPIV3_2 } from '@fastify/swagger';
import { Type } from 'typebox';
import { DateTime, Uuid } from '../../http/schemas.js';
import { EVENT_PAYLOADS } from './webhooks.schemas.js';

const MEANINGS: Record<keyof typeof EVENT_PAYLOADS, string> = {
  'call.queued': 'A call was added to the dial queue.',
  'call.connected': 'The far end picked up.',
  'call.completed':
    'The call finished; carries its duration, disposition, a signed recording URL and the call’s analysis. Sent once the analysis is written, a few seconds after the call ends (longer when the agent’s model writes it); its occurredAt is that moment.',
  'call.failed': 'The call was attempted but did not connect (busy, no_answer, failed).',
  'campaign.started': 'A campaign started.',
  'campaign.compliance_paused': 'A campaign was paused because its abandon rate exceeded 3.5%.',
  'webhook.test': 'Sent by POST /v1/webhooks/{id}/test only.',
};

type PathItem = OpenAPIV3_2.PathItemObject;

const HEADERS = [
  { name: 'X-Service-Event', description: 'The event type.' },
  {
    name: 'X-Service-Delivery',
    description:
      'The delivery id (uuid, equal to the body id): the same on every retry and redelivery; process each once.',
  },
  { name: 'X-Service-Timestamp', description: 'Unix seconds when this attempt was sent.' },
  {
    name: 'X-Service-Signature',
    description:
      't=<unix seconds>,v1=<lowercase hex HMAC-SHA256 of the raw body under the signing secret>; a second v1 while a rotated secret overlaps. Reject when no v1 matches or the timestamp is more than 5 minutes from your clock.',
  },
  { name: 'User-Agent', description: 'Service-Webhook/1.0' },
].map(({ name, description }) => ({ name, in: 'header', required: true, description, schema: { type: 'string' } }));

export const webhookOpenApi: Record<string, PathItem> = Object.fromEntries(
  Object.entries(EVENT_PAYLOADS).map(([type, data]) => [
    type,
    {
      post: {
        summary: type,
        description: `${MEANINGS[type as keyof typeof EVENT_PAYLOADS]} A non-2xx answer, no answer within 10 seconds, a refused connection or a redirect (not followed) fails the attempt: it is retried after 5 s, 30 s and 120 s, then abandoned; 10 failed attempts in a row disable the endpoint.`,
        tags: ['webhooks'],
        parameters: HEADERS,
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: Type.Object({ id: Uuid, type: Type.Literal(type), occurredAt: DateTime, data }),
            },
          },
        },
        responses: { '200': { description: 'Any 2xx answer acknowledges the delivery.' } },
      },
    } as PathItem,
  ]),
);
