import { Type, type Static } from 'typebox';
import { DateTime, Int, Money, Nullable, PageFields, PageQuery, Uuid } from '../../http/schemas.js';
import {
  ANALYSIS_METHODS,
  ANALYSIS_OUTCOMES,
  CALL_DIRECTIONS,
  CALL_EVENT_TYPES,
  CALL_STATUSES,
  CALL_STATUS_FILTERS,
  COST_ITEM_KINDS,
  FINAL_CALL_STATUSES,
  TRANSCRIPT_SPEAKERS,
} from './calls.tables.js';

const StringEnum = <const T extends string[]>(values: readonly [...T], description?: string) =>
  Type.Enum(values, { type: 'string', ...(description ? { description } : {}) });

const Quantity = Type.String({
  pattern: '^\\d+(\\.\\d+)?$',
  description: 'A non-negative decimal number carried as a string.',
});

export const ListCallsQuery = Type.Object(
  {
    campaignId: Type.Optional(Uuid),
    contactId: Type.Optional(Uuid),
    agentId: Type.Optional(Uuid),
    status: Type.Optional(StringEnum(CALL_STATUS_FILTERS)),
    hasRecording: Type.Optional(
      StringEnum(['true', 'false'], 'true: only calls with a recording; false: only calls without.'),
    ),
    dateFrom: Type.Optional(
      Type.String({ format: 'date-time', description: 'Calls created at or after this instant (inclusive).' }),
    ),
    dateTo: Type.Optional(
      Type.String({
        format: 'date-time',
        description: 'Calls created before this instant (exclusive); not before dateFrom.',
      }),
    ),
    ...PageQuery,
  },
  { additionalProperties: false },
);
export type ListCallsQuery = Static<typeof ListCallsQuery>;

/** A call in a list: exactly these fields (the detail adds its own). */
export const CallItem = Type.Object(
  {
    id: Uuid,
    contactId: Nullable(Uuid),
    contactFirstName: Nullable(Type.String()),
    contactLastName: Nullable(Type.String()),
    contactPhone: Nullable(
      Type.String({
        description: 'The far-end number the call used: the number dialled (outbound) or the caller (inbound).',
      }),
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
  },
  { title: 'Call', description: 'A call as lists show it.' },
);

export const CallList = Type.Object({ calls: Type.Array(CallItem), ...PageFields }, { title: 'CallPage' });
export type CallList = Static<typeof CallList>;

/**
 * CallList as JSON, the same text the schema's compiled serializer writes: that one checks each value of a nullable
 * field against the field's schema (uuid and date-time patterns, 250 checks a page) to pick its branch, and the list
 * is the busiest read. The page's items come from toCallItem with exactly the schema's fields, in its order, each a
 * string, a number or null, so JSON.stringify writes the same text (calls.schemas.test.ts compares the two).
 */
export const serializeCallList = (page: CallList): string => JSON.stringify(page);

export const TranscriptTurn = Type.Object(
  {
    seq: Type.Integer({ minimum: 0, description: 'Position of the turn in the call, from 0.' }),
    speaker: StringEnum(TRANSCRIPT_SPEAKERS),
    text: Type.String(),
    startMs: Nullable(Type.Integer({ minimum: 0, description: 'Offset from the start of the call.' })),
    endMs: Nullable(Type.Integer({ minimum: 0 })),
  },
  { title: 'TranscriptTurn' },
);

export const CostItem = Type.Object(
  {
    id: Uuid,
    kind: StringEnum(COST_ITEM_KINDS),
    description: Type.String(),
    quantity: Quantity,
    unit: Type.String({ examples: ['minute', '1k_tokens', 'character'] }),
    unitPriceUsd: Money,
    amountUsd: Money,
  },
  { title: 'CostItem' },
);

export const CallAnalysis = Type.Object(
  {
    summary: Type.String({ description: 'A few sentences on what happened on the call.' }),
    outcome: StringEnum(
      ANALYSIS_OUTCOMES,
      "How the call ended: the callee agreed to what the agent asked (interested), asked for a callback, declined (not_interested), asked not to be called again (do_not_call), was transferred to a person, asked for a person and none took the call (person_requested), reached voicemail, hung up before any conversation (hung_up), or gave no decision (undecided). Read from the callee's last clear intent, then from how the call ended.",
    ),
    missionSucceeded: Type.Boolean({
      description:
        "Whether the agent reached its mission. Without a model: when the callee agreed, or the call's disposition is one of the account's positive codes.",
    }),
    missionReason: Type.String({ description: 'Why the mission succeeded or not, in one sentence.' }),
    nextSteps: Type.Array(Type.String(), { description: 'What the team should do next.' }),
    callback: Nullable(
      Type.Object(
        {
          asked: Type.String({ description: 'The words the callee used ("tomorrow after 3").' }),
          at: Nullable(
            Type.String({
              format: 'date-time',
              description:
                'The time asked for, read in timeZone from the end of the call: a day without a time is 10:00, an hour without am/pm a working hour (after 3 is 15:00), a weekday the coming one. Null when the words named no time.',
            }),
          ),
          timeZone: Type.String({
            description:
              "The callee's IANA time zone: the contact's, else the zone of their number, else the account's.",
          }),
        },
        { description: 'Null unless the callee asked to be called back.' },
      ),
    ),
    fields: Type.Object(
      {},
      {
        additionalProperties: Nullable(Type.Union([Type.String(), Type.Number(), Type.Boolean()])),
        description:
          "The agent's declared analysis fields by name: a number, a boolean, a string, a date (YYYY-MM-DD) or an email address; null when the call did not say it.",
      },
    ),
    method: StringEnum(
      ANALYSIS_METHODS,
      "model: written by the agent's LLM; transcript: by the built-in extractor (no model configured, or the model's answer could not be used).",
    ),
    model: Nullable(Type.String({ description: 'The LLM that wrote it; null for the built-in extractor.' })),
    analyzedAt: DateTime,
  },
  {
    title: 'CallAnalysis',
    description:
      "What an answered call came to, written by a job shortly after the call ends (call.completed is sent once it exists). With a model configured for the agent (its liveLlmId, or the deployment's LLM) the model writes it and its tokens are itemized on the call's costs; otherwise a deterministic extractor reads the transcript.",
  },
);

export const CallDetail = Type.Object(
  {
    ...CallItem.properties,
    agentVersion: Nullable(Type.Integer({ minimum: 1, description: 'The agent version the call started with.' })),
    campaignId: Nullable(Uuid),
    fromNumber: Nullable(Type.String()),
    toNumber: Nullable(Type.String()),
    answeredAt: Nullable(DateTime),
    endReason: Nullable(Type.String()),
    updatedAt: DateTime,
    callbackAt: Nullable(
      Type.String({
        format: 'date-time',
        description:
          "When the callee asked to be called back (the analysis's callback time): the due time for a follow-up and a campaign's retry. Null when no time was asked for.",
      }),
    ),
    analysis: Type.Union([CallAnalysis, Type.Null()], {
      description: 'Null until the analysis is written (shortly after the end), and for calls nobody answered.',
    }),
    transcript: Type.Array(TranscriptTurn, { description: 'Turns in spoken order.' }),
    costItems: Type.Array(CostItem, { description: 'Line items; their amounts add up to totalCostUsd.' }),
  },
  { title: 'CallDetail', description: 'A call in full, with its transcript and cost line items.' },
);

export const CallTranscript = Type.Object(
  { callId: Uuid, turns: Type.Array(TranscriptTurn) },
  { title: 'CallTranscript', description: 'The transcript of a call, turn by turn.' },
);

export const CallEvent = Type.Object(
  {
    id: Uuid,
    callId: Nullable(Uuid),
    type: StringEnum(CALL_EVENT_TYPES),
    occurredAt: DateTime,
    data: Type.Record(Type.String(), Type.Unknown(), { description: 'What the event carries; depends on its type.' }),
  },
  { title: 'CallEvent', description: 'Something that happened during a call.' },
);

export const CallEventList = Type.Object({ events: Type.Array(CallEvent), ...PageFields }, { title: 'CallEventPage' });

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

/** A code: lower-case letters, digits and underscores, starting with a letter. */
const DispositionCode = Type.String({
  pattern: '^[a-z][a-z0-9_]{0,63}$',
  description: 'A disposition code of the account.',
});
const E164 = Type.String({
  pattern: '^\\+[1-9]\\d{6,14}$',
  description: 'A phone number in E.164 form (+14155550123).',
});

export const ContactIdParams = Type.Object({ id: Uuid }, { additionalProperties: false });

export const PlaceCallBody = Type.Object(
  {
    agentId: Type.String({ format: 'uuid', description: 'An active agent of the account.' }),
    fromNumberId: Type.Optional(
      Type.String({
        format: 'uuid',
        description: "One of the account's phone numbers; by default its default number.",
      }),
    ),
  },
  { additionalProperties: false },
);
export type PlaceCallBody = Static<typeof PlaceCallBody>;

export const PlacedCall = Type.Object(
  {
    callId: Uuid,
    status: StringEnum(CALL_STATUSES, 'queued: the call waits for a free slot of the account and starts on its own.'),
  },
  { title: 'PlacedCall', description: 'The call just placed.' },
);

export const DispositionBody = Type.Object({ disposition: DispositionCode }, { additionalProperties: false });
export type DispositionBody = Static<typeof DispositionBody>;

export const CALL_ASSETS = ['recording', 'transcript'] as const;
export type CallAsset = (typeof CALL_ASSETS)[number];

export const AssetUrlQuery = Type.Object(
  { asset: StringEnum(CALL_ASSETS, 'Which asset: the recording (WAV) or the transcript (JSON).') },
  { additionalProperties: false },
);
export type AssetUrlQuery = Static<typeof AssetUrlQuery>;

export const AssetUrl = Type.Object(
  {
    url: Type.String({ description: 'A signed URL that needs no credentials until expiresAt.' }),
    expiresAt: DateTime,
  },
  { title: 'AssetUrl', description: 'A signed URL to a call asset.' },
);

export const SignedAssetQuery = Type.Object(
  {
    expires: Type.Optional(Type.String({ description: 'From the signed URL: when it expires, in unix seconds.' })),
    signature: Type.Optional(Type.String({ description: 'From the signed URL.' })),
  },
  { additionalProperties: false },
);
export type SignedAssetQuery = Static<typeof SignedAssetQuery>;

const ReportedTurn = Type.Object(
  {
    speaker: StringEnum(['agent', 'caller'] as const),
    text: Type.String({ maxLength: 20_000 }),
    startMs: Type.Optional(Nullable(Int({ minimum: 0 }))),
    endMs: Type.Optional(Nullable(Int({ minimum: 0 }))),
  },
  { additionalProperties: false },
);

export const PostCallBody = Type.Object(
  {
    callId: Type.String({
      format: 'uuid',
      description: 'The call id Parley gave the provider when it placed the call.',
    }),
    providerCallId: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    status: StringEnum(FINAL_CALL_STATUSES),
    answeredAt: Type.Optional(Nullable(DateTime)),
    endedAt: Type.Optional(DateTime),
    durationSeconds: Type.Optional(
      Int({ minimum: 0, maximum: 86_400, description: 'Connected seconds (answer to hang-up).' }),
    ),
    endReason: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    disposition: Type.Optional(Nullable(DispositionCode)),
    transcript: Type.Optional(Type.Array(ReportedTurn, { maxItems: 2_000 })),
    recordingStorageKey: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 1024 }))),
    usage: Type.Optional(
      Type.Object(
        {
          llmInputTokens: Type.Optional(Int({ minimum: 0 })),
          llmOutputTokens: Type.Optional(Int({ minimum: 0 })),
          ttsCharacters: Type.Optional(Int({ minimum: 0 })),
          sttSeconds: Type.Optional(Int({ minimum: 0 })),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
export type PostCallBody = Static<typeof PostCallBody>;

export const PostCallResult = Type.Object(
  {
    callId: Uuid,
    status: StringEnum(CALL_STATUSES),
    duplicate: Type.Boolean({ description: 'True when the call had already ended: the report changed nothing.' }),
  },
  { title: 'PostCallResult' },
);

export const InboundCallBody = Type.Object({ to: E164, from: E164 }, { additionalProperties: false });
export type InboundCallBody = Static<typeof InboundCallBody>;

export const InboundCallResult = Type.Object(
  { callId: Uuid, agentId: Uuid, status: StringEnum(CALL_STATUSES) },
  { title: 'InboundCallResult' },
);
