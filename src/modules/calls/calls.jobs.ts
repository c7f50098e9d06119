import { Type } from 'typebox';
import { defineJob, moduleJobs } from '../../jobs/define.js';
import type { CallsService } from './calls.service.js';

export const callsJobs = moduleJobs('calls', {
  jobs: {
    /**
     * Runs one call from start to end, in the worker role: a call placed through any api instance is carried by a
     * worker. A call waiting for a free slot of its account ends this job; the call that frees the slot starts it again.
     */
    'calls.run': defineJob({
      payload: Type.Object(
        { accountId: Type.String({ format: 'uuid' }), callId: Type.String({ format: 'uuid' }) },
        { additionalProperties: false },
      ),
      // Never retried: a call cut off by a crash is closed by the sweep, not dialled twice.
      policy: { retryLimit: 0, expireInSeconds: 4 * 3600 },
      concurrency: (config) => config.calls.concurrencyPerWorker,
      handle: ({ accountId, callId }, calls: CallsService) => calls.run(accountId, callId),
    }),
    /**
     * Writes the analysis of an answered call, sent in the transaction that ended it; a completed call's call.completed
     * event goes out with it. Retried: the analysis is written once, so a second run does nothing.
     */
    'calls.analyze': defineJob({
      payload: Type.Object(
        { accountId: Type.String({ format: 'uuid' }), callId: Type.String({ format: 'uuid' }) },
        { additionalProperties: false },
      ),
      policy: { retryLimit: 5, retryDelay: 5, retryBackoff: true, expireInSeconds: 300 },
      concurrency: 4,
      handle: ({ accountId, callId }, calls: CallsService) => calls.analyzeCall(accountId, callId),
    }),
    /** Closes calls left live by a process that died, and starts waiting calls; at every worker start and each minute. */
    'calls.sweep': defineJob({
      payload: Type.Object({}),
      schedule: '* * * * *',
      atStart: true,
      handle: (_payload, calls: CallsService) => calls.sweepLostCalls(),
    }),
  },
});
