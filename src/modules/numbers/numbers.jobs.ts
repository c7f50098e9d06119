import { Type } from 'typebox';
import { defineJob, moduleJobs } from '../../jobs/define.js';
import type { NumbersService } from './numbers.service.js';

export const numbersJobs = moduleJobs('numbers', {
  jobs: {
    'numbers.renew-monthly-fees': defineJob({
      payload: Type.Object({}, { additionalProperties: false }),
      schedule: '23 * * * *',
      policy: { retryLimit: 3, retryDelay: 300, expireInSeconds: 1800 },
      async handle(_payload, numbers: NumbersService, { log }) {
        const charged = await numbers.renewMonthlyFees();
        log.info({ charged }, 'charged the monthly fees of bought numbers');
        return { charged };
      },
    }),
  },
  subscriptions: {
    // Each ended outbound call counts toward its number's reputation.
    'numbers.record-call': {
      events: ['call.completed', 'call.failed'],
      concurrency: 4,
      async handle(event, numbers: NumbersService) {
        return numbers.recordCallEnded(event);
      },
    },
    // A deleted agent's inboundDid is cleared with it; its numbers are freed here, a moment later.
    'numbers.release-deleted-agent': {
      events: ['agent.deleted'],
      async handle(event, numbers: NumbersService) {
        return { freed: await numbers.releaseDeletedAgent(event) };
      },
    },
  },
});
