/** The event types an endpoint can subscribe to, in the order the form lists them. */
import type { Schemas } from '../../api/client';

export type WebhookEventType = Schemas['GetWebhookResponse']['events'][number];

export const WEBHOOK_EVENT_TYPES = [
  'call.queued',
  'call.connected',
  'call.completed',
  'call.failed',
  'campaign.started',
  'campaign.compliance_paused',
] as const satisfies readonly WebhookEventType[];
// A type the API adds and this list lacks fails the build here, rather than being impossible to choose.
type Unlisted = Exclude<WebhookEventType, (typeof WEBHOOK_EVENT_TYPES)[number]>;
const everyTypeListed: [Unlisted] extends [never] ? true : Unlisted = true;
void everyTypeListed;
