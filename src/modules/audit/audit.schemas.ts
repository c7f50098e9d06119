import { Type, type Static } from 'typebox';
import { DateTime, Nullable, PageFields, PageQuery, Uuid } from '../../http/schemas.js';
import { DOMAIN_EVENT_TYPES } from '../../events/domain-events.js';

const EventType = Type.Enum([...DOMAIN_EVENT_TYPES]);

export const ListAuditEventsQuery = Type.Object(
  {
    ...PageQuery,
    type: Type.Optional(EventType),
    subjectId: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description: 'The id of the changed resource (or the number, for do-not-call changes).',
      }),
    ),
  },
  { additionalProperties: false },
);
export type ListAuditEventsQuery = Static<typeof ListAuditEventsQuery>;

export const AuditEvent = Type.Object(
  {
    id: Uuid,
    type: EventType,
    subject: Type.Object({ type: Type.String(), id: Type.String() }),
    actor: Type.Union([Type.Object({ userId: Nullable(Uuid), apiKeyId: Nullable(Uuid) }), Type.Null()], {
      description: 'Who made the change; null when the system did.',
    }),
    data: Type.Record(Type.String(), Type.Unknown(), {
      description: 'What changed, by event type (for updates, the changed fields).',
    }),
    occurredAt: DateTime,
  },
  { title: 'AuditEvent', description: 'One change in the account: what changed, and who changed it.' },
);

export const AuditEventList = Type.Object(
  { auditEvents: Type.Array(AuditEvent), ...PageFields },
  { title: 'AuditEventPage' },
);
