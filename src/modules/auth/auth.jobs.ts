import { Type } from 'typebox';
import { defineJob, moduleJobs } from '../../jobs/define.js';
import type { AuthService } from './auth.service.js';

export const authJobs = moduleJobs('auth', {
  jobs: {
    'sessions.purge': defineJob({
      payload: Type.Object({}, { additionalProperties: false }),
      schedule: '0 * * * *',
      policy: { retryLimit: 2, retryDelay: 60, expireInSeconds: 600 },
      async handle(_payload, auth: AuthService, { log }): Promise<{ deleted: number }> {
        const deleted = await auth.purgeDeadSessions();
        log.info({ deleted }, 'purged dead sessions');
        return { deleted };
      },
    }),
  },
});
