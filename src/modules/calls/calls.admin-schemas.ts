import { Type, type Static } from 'typebox';
import { NamedRef, Nullable, PageFields, PageQuery, Uuid } from '../../http/schemas.js';
import { CALL_DIRECTIONS, CALL_STATUSES } from './calls.tables.js';
import { CallDetail, CallItem } from './calls.schemas.js';

const StringEnum = <const T extends string[]>(values: readonly [...T], description?: string) =>
  Type.Enum(values, { type: 'string', ...(description ? { description } : {}) });

const SearchText = (description: string) =>
  Type.Optional(
    Type.String({ minLength: 3, maxLength: 100, description: `${description} 3 to 100 characters, ignoring case.` }),
  );

export const AdminListCallsQuery = Type.Object(
  {
    accountId: Type.Optional(Uuid),
    agentId: Type.Optional(Uuid),
    status: Type.Optional(StringEnum(CALL_STATUSES, 'Only calls in this status.')),
    direction: Type.Optional(StringEnum(CALL_DIRECTIONS, 'Only calls in this direction.')),
    dateFrom: Type.Optional(
      Type.String({ format: 'date-time', description: 'Calls created at or after this instant (inclusive).' }),
    ),
    dateTo: Type.Optional(
      Type.String({
        format: 'date-time',
        description: 'Calls created before this instant (exclusive); not before dateFrom.',
      }),
    ),
    q: Type.Optional(
      Type.String({
        pattern: '^\\+?[0-9]{3,20}$',
        description:
          "Digits found anywhere in the caller's or the called number (E.164 form, e.g. 4155550100 or +1415): 3 to 20 digits, with an optional leading +.",
      }),
    ),
    ...PageQuery,
  },
  { additionalProperties: false },
);
export type AdminListCallsQuery = Static<typeof AdminListCallsQuery>;

const AccountFields = {
  accountId: Uuid,
  accountName: Type.String({ description: 'The name of the account the call belongs to.' }),
};

export const AdminCallItem = Type.Object({
  ...CallItem.properties,
  ...AccountFields,
  fromNumber: Nullable(Type.String()),
  toNumber: Nullable(Type.String()),
});
export const AdminCallList = Type.Object({ calls: Type.Array(AdminCallItem), ...PageFields });
export const AdminCallDetail = Type.Object({ ...CallDetail.properties, ...AccountFields });

export const AgentPickerQuery = Type.Object(
  { accountId: Type.Optional(Uuid), q: SearchText("Words of the agent's name."), ...PageQuery },
  { additionalProperties: false },
);
export type AgentPickerQuery = Static<typeof AgentPickerQuery>;

export const AgentPickerList = Type.Object({
  agents: Type.Array(
    Type.Object({
      id: Uuid,
      name: Type.String(),
      accountId: Uuid,
      accountName: Type.String(),
      deleted: Type.Boolean({ description: 'The agent was deleted; its calls remain.' }),
    }),
  ),
  ...PageFields,
});

export const AccountPickerQuery = Type.Object(
  { q: SearchText("Words of the account's name."), ...PageQuery },
  { additionalProperties: false },
);
export type AccountPickerQuery = Static<typeof AccountPickerQuery>;

export const AccountPickerList = Type.Object({ accounts: Type.Array(NamedRef), ...PageFields });

export const InjectBody = Type.Object(
  {
    text: Type.String({
      minLength: 1,
      maxLength: 1000,
      description: 'What the agent says next, word for word; it is added to the transcript as an agent turn.',
    }),
  },
  { additionalProperties: false },
);
export type InjectBody = Static<typeof InjectBody>;

export const CallControlResult = Type.Object({
  callId: Uuid,
  status: StringEnum(CALL_STATUSES, 'The status when the request was taken; the call ends (or speaks) moments later.'),
  requested: Type.Literal(true),
});

const E164 = Type.String({
  pattern: '^\\+[1-9]\\d{6,14}$',
  description: 'A phone number in E.164 form (+14155550123).',
});

export const TestCallBody = Type.Object(
  {
    agentId: Type.String({
      format: 'uuid',
      description: 'An active agent of any account; the call belongs to that account.',
    }),
    toNumber: E164,
  },
  { additionalProperties: false },
);
export type TestCallBody = Static<typeof TestCallBody>;

export const TestCallResult = Type.Object({
  callId: Uuid,
  status: StringEnum(CALL_STATUSES, 'queued: the call starts when the account has a free slot.'),
  accountId: Uuid,
  fromNumber: Type.String({ description: "The account's number the call goes out from." }),
});
