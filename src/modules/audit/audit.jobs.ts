import { moduleJobs } from '../../jobs/define.js';
import { DOMAIN_EVENT_TYPES, type DomainEventType } from '../../events/domain-events.js';
import type { AuditService } from './audit.service.js';

/** A call's progress is the engine's doing, not a change anyone made; the call's own timeline records it. */
const ENGINE_PROGRESS: ReadonlySet<DomainEventType> = new Set(['call.connected', 'call.completed', 'call.failed']);

export const auditJobs = moduleJobs('audit', {
  subscriptions: {
    'audit.record': {
      events: DOMAIN_EVENT_TYPES.filter((type) => !ENGINE_PROGRESS.has(type)),
      async handle(event, audit: AuditService) {
        return { recorded: await audit.record(event) };
      },
    },
  },
});
