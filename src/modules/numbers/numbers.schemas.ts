import { Type, type Static } from 'typebox';
import { DateTime, Money, Nullable, PageFields, PageQuery, Uuid } from '../../http/schemas.js';
import { AgentStatus } from '../agents/agents.schemas.js';
import { NUMBER_CAPABILITIES, NUMBER_SOURCES, REPUTATION_LABELS } from './numbers.tables.js';

const PhoneText = (description: string) =>
  Type.String({ minLength: 1, maxLength: 64, description, examples: ['+14155550123'] });
const Country = Type.String({ pattern: '^[A-Za-z]{2}$', description: 'ISO 3166-1 alpha-2 country, e.g. US, CA, GB.' });
const AreaCode = Type.String({
  pattern: '^[0-9]{1,5}$',
  description: 'Area code without the trunk prefix: 415 in the US, 20 (London) or 161 (Manchester) in the UK.',
});
const Capability = Type.Enum([...NUMBER_CAPABILITIES]);
const Label = Type.Enum([...REPUTATION_LABELS], {
  description: 'clean (70-100), at_risk (40-69) or spam_likely (0-39).',
});

const ReputationFields = {
  score: Type.Integer({ minimum: 0, maximum: 100 }),
  label: Label,
  calls24h: Type.Integer({
    minimum: 0,
    description: 'Outbound calls from the number in the 24 hours before the check.',
  }),
  answeredCalls24h: Type.Integer({ minimum: 0 }),
  shortCalls24h: Type.Integer({ minimum: 0, description: 'Answered calls that lasted under 10 seconds.' }),
  answerRate: Nullable(
    Type.Number({ minimum: 0, maximum: 1, description: 'answeredCalls24h / calls24h; null without calls.' }),
  ),
  checkedAt: DateTime,
};

export const PhoneNumber = Type.Object(
  {
    id: Uuid,
    number: Type.String({ description: 'E.164, e.g. +14155550123.' }),
    country: Type.String({ description: 'ISO 3166-1 alpha-2.' }),
    areaCode: Nullable(
      Type.String({ description: 'The area code of a +1 number, or the one a number was bought in; otherwise null.' }),
    ),
    capabilities: Type.Array(Capability),
    agentId: Nullable(Uuid),
    source: Type.Enum([...NUMBER_SOURCES], {
      description: 'byo: brought by the account; purchased: bought here and charged monthly.',
    }),
    monthlyFeeUsd: Money,
    reputation: Nullable(
      Type.Object(ReputationFields, { description: 'The last reputation check; null before the first.' }),
    ),
    createdAt: DateTime,
    updatedAt: DateTime,
  },
  {
    title: 'PhoneNumber',
    description: 'A number of the account to call from, and the agent that takes its inbound calls.',
  },
);

export const PhoneNumberList = Type.Object(
  { phoneNumbers: Type.Array(PhoneNumber), ...PageFields },
  { title: 'PhoneNumberPage' },
);

export const AddPhoneNumberBody = Type.Object(
  { number: PhoneText('A number the account owns, in E.164 or any common format (read in the account’s country).') },
  { additionalProperties: false },
);
export type AddPhoneNumberInput = Static<typeof AddPhoneNumberBody>;

export const UpdatePhoneNumberBody = Type.Object(
  {
    agentId: Nullable(
      Type.String({
        format: 'uuid',
        description:
          'The agent that takes inbound calls to the number, or null for none. An agent has one inbound number: giving it this one frees its previous one.',
      }),
    ),
  },
  { additionalProperties: false },
);
export type UpdatePhoneNumberInput = Static<typeof UpdatePhoneNumberBody>;

export const InventorySearchQuery = Type.Object(
  { ...PageQuery, country: Country, areaCode: AreaCode },
  { additionalProperties: false },
);
export type InventorySearchQuery = Static<typeof InventorySearchQuery>;

export const AvailableNumber = Type.Object(
  {
    number: Type.String({ description: 'E.164.' }),
    country: Type.String(),
    areaCode: Type.String(),
    capabilities: Type.Array(Capability),
    monthlyFeeUsd: Money,
  },
  { title: 'AvailableNumber' },
);

export const AvailableNumberList = Type.Object(
  {
    availableNumbers: Type.Array(AvailableNumber, {
      description: 'Free numbers, always in the same order for an area code.',
    }),
    ...PageFields,
  },
  { title: 'AvailableNumberList' },
);

export const PurchaseBody = Type.Object(
  {
    number: Type.Optional(PhoneText('A number from a search.')),
    country: Type.Optional(Country),
    areaCode: Type.Optional(AreaCode),
  },
  { additionalProperties: false, description: 'Either number, or country and areaCode (the first free number there).' },
);
export type PurchaseInput = Static<typeof PurchaseBody>;

export const NumberReputation = Type.Object(
  { phoneNumberId: Uuid, number: Type.String(), ...ReputationFields },
  { title: 'NumberReputation' },
);
export const NumberReputationList = Type.Object(
  { reputations: Type.Array(NumberReputation), ...PageFields },
  { title: 'NumberReputationList' },
);

export const InboundRouteQuery = Type.Object(
  { to: PhoneText('The dialled number, URL-encoded (%2B14155550123), in E.164 or any common format.') },
  { additionalProperties: false },
);

export const InboundRoute = Type.Object(
  {
    number: Type.String({ description: 'E.164.' }),
    phoneNumberId: Uuid,
    agentId: Uuid,
    agentName: Type.String(),
    agentStatus: AgentStatus,
    accountId: Uuid,
  },
  { title: 'InboundRoute', description: 'The agent that takes calls to the number.' },
);
