import type { App } from '../../http/types.js';
import { allow } from '../../http/access.js';
import { IdParams, responses } from '../../http/schemas.js';
import type { CallsService } from './calls.service.js';
import {
  CallDetail,
  CallEventList,
  CallList,
  CallTranscript,
  ListCallEventsQuery,
  ListCallsQuery,
  ListEventsQuery,
} from './calls.schemas.js';

const read = allow.account('account.read');
const tags = ['calls'];

export function callsRoutes(app: App, { calls }: { calls: CallsService }) {
  app.get(
    '/calls',
    { config: { access: read },
      schema: {
        tags,
        summary: 'List calls, newest first',
        description: 'dateFrom and dateTo bound created_at: dateFrom is inclusive, dateTo exclusive.',
        querystring: ListCallsQuery,
        response: responses(CallList),
      },
    },
    async (req) => calls.list(req.auth, req.query),
  );
  app.get(
    '/calls/:id',
    { config: { access: read }, schema: { tags, summary: 'Full call detail with transcript and cost line items', params: IdParams, response: responses(CallDetail) } },
    async (req) => calls.get(req.auth, req.params.id),
  );
  app.get(
    '/calls/:id/transcript.json',
    { config: { access: read }, schema: { tags, summary: 'Transcript of a call, turn by turn', params: IdParams, response: responses(CallTranscript) } },
    async (req) => calls.transcript(req.auth, req.params.id),
  );
  app.get(
    '/calls/:id/events',
    { config: { access: read },
      schema: {
        tags,
        summary: 'Events of one call, oldest first',
        params: IdParams,
        querystring: ListCallEventsQuery,
        response: responses(CallEventList),
      },
    },
    async (req) => calls.callEvents(req.auth, req.params.id, req.query),
  );
  app.get(
    '/events',
    { config: { access: read }, schema: { tags, summary: 'Call events of the account, newest first', querystring: ListEventsQuery, response: responses(CallEventList) } },
    async (req) => calls.events(req.auth, req.query),
  );
}
