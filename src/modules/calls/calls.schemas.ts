import { Type, type Static } from 'typebox';
import { DateTime, Money, Nullable, PageFields, PageQuery, Uuid } from '../../http/schemas.js';
import { CALL_DIRECTIONS, CALL_EVENT_TYPES, CALL_STATUSES, COST_ITEM_KINDS, TRANSCRIPT_SPEAKERS } from './calls.tables.js';

const StringEnum = <const T extends string[]>(values: readonly [...T], description?: string) =>
  Type.Enum(values, { type: 'string', ...(description ? { description } : {}) });

/** SPEC §3: the call statuses a list can be filtered by (`queued` is a status, but not a filter value). */
export const CALL_STATUS_FILTERS = ['completed', 'failed', 'busy', 'no_answer', 'connected', 'dialing', 'ringing'] as const;

const Quantity = Type.String({ pattern: '^\\d+(\\.\\d+)?$', description: 'A non-negative decimal number carried as a string.' });

export const ListCallsQuery = Type.Object(
  {
    campaignId: Type.Optional(Uuid),
    contactId: Type.Optional(Uuid),
    agentId: Type.Optional(Uuid),
    status: Type.Optional(StringEnum(CALL_STATUS_FILTERS)),
    hasRecording: Type.Optional(StringEnum(['true', 'false'], 'true: only calls with a recording; false: only calls without.')),
    dateFrom: Type.Optional(Type.String({ format: 'date-time', description: 'Calls created at or after this instant (inclusive).' })),
    dateTo: Type.Optional(
      Type.String({ format: 'date-time', description: 'Calls created before this instant (exclusive); not before dateFrom.' }),
    ),
    ...PageQuery,
  },
  { additionalProperties: false },
);
export type ListCallsQuery = Static<typeof ListCallsQuery>;

/** SPEC §2 Call item: exactly these fields. */
export const CallItem = Type.Object({
  id: Uuid,
  contactId: Nullable(Uuid),
  contactFirstName: Nullable(Type.String()),
  contactLastName: Nullable(Type.String()),
  contactPhone: Nullable(
    Type.String({ description: 'The far-end number the call used: the number dialled (outbound) or the caller (inbound).' }),
  ),
  agentId: Nullable(Uuid),
  agentName: Nullable(Type.String({ description: "The agent's name, also when the agent has since been deleted." })),
  direction: StringEnum(CALL_DIRECTIONS),
  status: StringEnum(CALL_STATUSES),
  disposition: Nullable(Type.String()),
  durationSeconds: Nullable(Type.Integer({ minimum: 0 })),
  totalCostUsd: Money,
  recordingStorageKey: Nullable(Type.String()),
  startedAt: Nullable(DateTime),
  endedAt: Nullable(DateTime),
  createdAt: DateTime,
});

export const CallList = Type.Object({ calls: Type.Array(CallItem), ...PageFields });

export const TranscriptTurn = Type.Object({
  seq: Type.Integer({ minimum: 0, description: 'Position of the turn in the call, from 0.' }),
  speaker: StringEnum(TRANSCRIPT_SPEAKERS),
  text: Type.String(),
  startMs: Nullable(Type.Integer({ minimum: 0, description: 'Offset from the start of the call.' })),
  endMs: Nullable(Type.Integer({ minimum: 0 })),
});

export const CostItem = Type.Object({
  id: Uuid,
  kind: StringEnum(COST_ITEM_KINDS),
  description: Type.String(),
  quantity: Quantity,
  unit: Type.String({ examples: ['minute', '1k_tokens', 'character'] }),
  unitPriceUsd: Money,
  amountUsd: Money,
});

export const CallDetail = Type.Object({
  ...CallItem.properties,
  agentVersion: Nullable(Type.Integer({ minimum: 1, description: 'The agent version the call started with.' })),
  campaignId: Nullable(Uuid),
  fromNumber: Nullable(Type.String()),
  toNumber: Nullable(Type.String()),
  answeredAt: Nullable(DateTime),
  endReason: Nullable(Type.String()),
  updatedAt: DateTime,
  transcript: Type.Array(TranscriptTurn, { description: 'Turns in spoken order.' }),
  costItems: Type.Array(CostItem, { description: 'Line items; their amounts add up to totalCostUsd.' }),
});

export const CallTranscript = Type.Object({ callId: Uuid, turns: Type.Array(TranscriptTurn) });

export const CallEvent = Type.Object({
  id: Uuid,
  callId: Uuid,
  type: StringEnum(CALL_EVENT_TYPES),
  occurredAt: DateTime,
  data: Type.Record(Type.String(), Type.Unknown(), { description: 'What the event carries; depends on its type.' }),
});

export const CallEventList = Type.Object({ events: Type.Array(CallEvent), ...PageFields });

export const ListEventsQuery = Type.Object(
  { callId: Type.Optional(Uuid), type: Type.Optional(StringEnum(CALL_EVENT_TYPES)), ...PageQuery },
  { additionalProperties: false },
);
export type ListEventsQuery = Static<typeof ListEventsQuery>;

export const ListCallEventsQuery = Type.Object(
  { type: Type.Optional(StringEnum(CALL_EVENT_TYPES)), ...PageQuery },
  { additionalProperties: false },
);
export type ListCallEventsQuery = Static<typeof ListCallEventsQuery>;
