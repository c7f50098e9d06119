import { Type } from 'typebox';
import { defineJob, moduleJobs } from '../../jobs/define.js';
import type { WebhooksService } from './webhooks.service.js';
import { DISPATCH_LOOP } from './webhooks.dispatcher.js';

export const webhooksJobs = moduleJobs('webhooks', {
  jobs: {
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
  loops: {
    /**
     * Sends due deliveries: first attempts, retries whose wait is over, and attempts lost with a process that died
     * (their lease ran out). Each worker process runs it; claims never overlap.
     */
    [DISPATCH_LOOP]: { run: (webhooks: WebhooksService, context) => webhooks.dispatchLoop(context) },
  },
});
