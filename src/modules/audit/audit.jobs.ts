import { moduleJobs } from '../../jobs/define.js';
import type { AuditService } from './audit.service.js';

export const auditJobs = moduleJobs('audit', {
  subscriptions: {
    'audit.record': {
      events: 'all',
      async handle(event, audit: AuditService) {
        return { recorded: await audit.record(event) };
      },
    },
  },
});
