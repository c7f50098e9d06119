/**
 * Outbound webhooks, as the rest of the service sees them: the endpoints an account manages (webhooks.endpoints.ts)
 * and the dispatcher that sends their deliveries (webhooks.dispatcher.ts), sharing the signing secrets. Deliveries
 * are written by the fan-out in each event's own transaction (webhooks.fanout.ts), which needs no service.
 */
import type { WebhooksConfig } from '../../config.js';
import type { Clock } from '../../lib/clock.js';
import { createWebhookDispatcher } from './webhooks.dispatcher.js';
import { createWebhookEndpoints } from './webhooks.endpoints.js';
import type { Lookup } from './webhooks.http.js';
import type { WebhooksRepo } from './webhooks.repo.js';
import { createWebhookSecrets } from './webhooks.secrets.js';

export interface WebhooksDeps {
  repo: WebhooksRepo;
  clock: Clock;
  config: WebhooksConfig;
  /** Name resolution for target checks (tests give their own). */
  lookup?: Lookup;
  /** The limit of one delivery attempt in milliseconds (10 s unless a test gives a shorter one). */
  attemptTimeoutMs?: number;
}

export function createWebhooksService(deps: WebhooksDeps) {
  const secrets = createWebhookSecrets(deps);
  const endpoints = createWebhookEndpoints({ ...deps, secrets });
  const dispatcher = createWebhookDispatcher({ ...deps, secrets });
  return { ...endpoints, ...dispatcher };
}

export type WebhooksService = ReturnType<typeof createWebhooksService>;
