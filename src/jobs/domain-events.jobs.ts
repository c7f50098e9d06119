import { Type } from 'typebox';
import { defineJob, moduleJobs } from './define.js';
import type { DomainEventsService } from '../events/domain-events.service.js';

export const domainEventsJobs = moduleJobs('events', {
  jobs: {
    'domain-events.prune': defineJob({
      payload: Type.Object({}, { additionalProperties: false }),
      schedule: '17 3 * * *',
      policy: { retryLimit: 2, retryDelay: 300, expireInSeconds: 1800 },
      async handle(_payload, events: DomainEventsService, { log }) {
        const deleted = await events.prune();
        log.info({ deleted }, 'pruned old domain events');
        return { deleted };
      },
    }),
  },
});
