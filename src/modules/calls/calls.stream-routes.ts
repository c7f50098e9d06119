/** GET /v1/calls/{id}/stream and GET /v1/events/stream: live events as Server-Sent Events (calls.stream.ts). */
import { Type } from 'typebox';
import { allow } from '../../http/access.js';
import { IdParams, responses } from '../../http/schemas.js';
import { createEventStreams, lastEventId, requireEventStreamAccepted } from '../../http/sse.js';
import type { App } from '../../http/types.js';
import { createCallStreams } from './calls.stream.js';
import type { CallsService } from './calls.service.js';

const tags = ['calls'];

const ResumeQuery = Type.Object(
  {
    lastEventId: Type.Optional(
      Type.String({
        maxLength: 100,
        description: 'The id of the last event received, for clients that cannot send the Last-Event-ID header.',
      }),
    ),
  },
  { additionalProperties: false },
);

const MESSAGES =
  "Each message is `id: <event id>`, `event: <event type>` and `data: <the CallEvent as JSON>`, the same object GET /v1/calls/{id}/events lists; a transcript turn is a `call.turn` event whose data holds the turn (seq, speaker, text, startMs, endMs). A comment line (`: keep-alive`) comes every 15 s when nothing else does. Reconnect with the Last-Event-ID header (browsers' EventSource does it by itself) to go on after the last event received.";

const EventStream = (description: string) => ({
  description,
  content: { 'text/event-stream': { schema: Type.String({ description: 'Server-Sent Events, UTF-8.' }) } },
});

export function callStreamRoutes(app: App, calls: CallsService) {
  const streams = createCallStreams({ calls });
  const events = createEventStreams(app);
  const read = allow.account('account.read');

  app.get(
    '/calls/:id/stream',
    {
      config: { access: read },
      schema: {
        operationId: 'streamCallEvents',
        tags,
        summary: "A call's events and transcript turns as they happen (Server-Sent Events)",
        description: `Every event of the call from its first (or after Last-Event-ID), then each new one within about half a second of it being written, until the call has ended: then an \`end\` message (data: {"callId"}) closes the stream. ${MESSAGES} An id the stream cannot place starts again from the call's first event. Another account's call is a 404, as for GET /v1/calls/{id}.`,
        params: IdParams,
        querystring: ResumeQuery,
        response: { ...responses(Type.String()), 200: EventStream("The call's events, as they happen.") },
      },
    },
    async (req, reply) => {
      requireEventStreamAccepted(req);
      const open = await streams.call(req.auth, req.params.id, lastEventId(req));
      return events.send(req, reply, open);
    },
  );

  app.get(
    '/events/stream',
    {
      config: { access: read },
      schema: {
        operationId: 'streamEvents',
        tags,
        summary: "The account's call events as they happen (Server-Sent Events)",
        description: `Each new call event of the account, oldest first, within about half a second of it being written (events already there when the stream opens are not sent: list them with GET /v1/events). The stream does not end. ${MESSAGES} After a reconnect, the events since Last-Event-ID are sent first when it is among the account's 1,000 newest events; an event may then arrive twice (its id tells).`,
        querystring: ResumeQuery,
        response: { ...responses(Type.String()), 200: EventStream("The account's call events, as they happen.") },
      },
    },
    async (req, reply) => {
      requireEventStreamAccepted(req);
      const open = await streams.account(req.auth, lastEventId(req));
      return events.send(req, reply, open);
    },
  );
}
