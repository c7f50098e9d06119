import type { App } from '../../http/types.js';
import { allow } from '../../http/access.js';
import { responses } from '../../http/schemas.js';
import type { AuditService } from './audit.service.js';
import { AuditEventList, ListAuditEventsQuery } from './audit.schemas.js';

const tags = ['audit'];

export function auditRoutes(app: App, { audit }: { audit: AuditService }) {
  app.get(
    '/audit-events',
    {
      config: { access: allow.account('audit.read') },
      schema: {
        operationId: 'listAuditEvents',
        tags,
        summary: "The account's audit log, newest first",
        description:
          'Every change to agents, API keys, contacts, contact lists and the do-not-call list, with who made it.',
        querystring: ListAuditEventsQuery,
        response: responses(AuditEventList),
      },
    },
    async (req) => audit.list(req.auth, req.query),
  );
}
