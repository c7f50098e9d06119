import { Type } from 'typebox';
import { defineJob, moduleJobs } from '../../jobs/define.js';
import type { WebhooksService } from './webhooks.service.js';
import { WEBHOOK_EVENT_TYPES } from './webhooks.tables.js';

export const webhooksJobs = moduleJobs('webhooks', {
  jobs: {
    /** One attempt of a delivery (the first, a retry, or a redelivery); a job that finds it not due or taken does nothing. */
    'webhooks.deliver': defineJob({
      payload: Type.Object(
        { accountId: Type.String({ format: 'uuid' }), deliveryId: Type.String({ format: 'uuid' }) },
        { additionalProperties: false },
      ),
      // The handler records a failed attempt itself; a job that throws (the database was away) is tried again soon.
      policy: { retryLimit: 5, retryDelay: 5, expireInSeconds: 120 },
      // Two fetch loops per process (one fetches while the other sends), sharing WEBHOOK_CONCURRENCY attempts at once;
      // a batch of 25 at 10 s each at worst ends well within the job's expiry.
      concurrency: 2,
      batch: { size: 25, parallel: (config) => Math.max(1, Math.ceil(config.webhooks.concurrencyPerWorker / 2)) },
      handle: ({ accountId, deliveryId }, webhooks: WebhooksService) => webhooks.attempt(accountId, deliveryId),
    }),
    /** Enqueues due deliveries whose job was lost (a crash, a restart); at every worker start and each minute. */
    'webhooks.sweep': defineJob({
      payload: Type.Object({}),
      schedule: '* * * * *',
      atStart: true,
      handle: (_payload, webhooks: WebhooksService) => webhooks.sweep(),
    }),
    /** Delivery records older than WEBHOOK_RETENTION_DAYS go, daily. */
    'webhooks.prune': defineJob({
      payload: Type.Object({}, { additionalProperties: false }),
      schedule: '41 3 * * *',
      policy: { retryLimit: 2, retryDelay: 300, expireInSeconds: 1800 },
      async handle(_payload, webhooks: WebhooksService, { log }) {
        const deleted = await webhooks.prune();
        log.info({ deleted }, 'pruned old webhook deliveries');
        return { deleted };
      },
    }),
  },
  subscriptions: {
    /**
     * The outbox side: one job per event, enqueued in the event's own transaction, becomes one delivery per endpoint.
     * One fetch loop per worker, taking events in batches and fanning them out one after another, in queue order, so
     * deliveries are created in the order the events happened.
     */
    'webhooks.fanout': {
      events: WEBHOOK_EVENT_TYPES,
      concurrency: 1,
      batch: { size: 100, parallel: 1 },
      handle: (event, webhooks: WebhooksService) => webhooks.fanOut(event),
    },
  },
});
