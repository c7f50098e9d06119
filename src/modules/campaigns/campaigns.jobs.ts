import { Type } from 'typebox';
import { defineJob, moduleJobs } from '../../jobs/define.js';
import type { CampaignsService } from './campaigns.service.js';

export const campaignsJobs = moduleJobs('campaigns', {
  jobs: {
    /** One dial pass of a running campaign; it asks for the next pass while the campaign runs. */
    'campaigns.dial': defineJob({
      payload: Type.Object(
        { accountId: Type.String({ format: 'uuid' }), campaignId: Type.String({ format: 'uuid' }) },
        { additionalProperties: false },
      ),
      // A retried pass is safe: an attempt already dialled is never dialled again. A pass takes seconds; one still
      // active after two minutes was taken by a process that died.
      policy: { retryLimit: 2, retryDelay: 2, expireInSeconds: 120 },
      concurrency: 2,
      handle: ({ accountId, campaignId }, campaigns: CampaignsService) => campaigns.dialPass(accountId, campaignId),
    }),
    /** Wakes every running campaign's dialer: at worker start (after a crash) and each minute. */
    'campaigns.sweep': defineJob({
      payload: Type.Object({}),
      schedule: '* * * * *',
      atStart: true,
      handle: (_payload, campaigns: CampaignsService) => campaigns.sweep(),
    }),
  },
  subscriptions: {
    /** A campaign call ended: its attempt gets the outcome, the contact is retried or finished, the pace adjusts. */
    'campaigns.call-ended': {
      events: ['call.completed', 'call.failed'],
      concurrency: 8,
      async handle(event, campaigns: CampaignsService) {
        return campaigns.callEnded(event);
      },
    },
  },
});
