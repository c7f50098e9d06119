import { Type, type Static } from 'typebox';
import { DateTime, Int, Money, Nullable, PageFields, PageQuery, SingleLineText, Uuid } from '../../http/schemas.js';
import { WEEKDAYS } from './campaigns.window.js';
import {
  CAMPAIGN_STATUSES,
  GATE_DENIALS,
  PAUSE_REASONS,
  RETRY_OUTCOMES,
  VOICEMAIL_ACTIONS,
} from './campaigns.tables.js';

export const CampaignStatus = Type.Enum([...CAMPAIGN_STATUSES], {
  description: 'draft -> running <-> paused -> completed; draft, running and paused may be cancelled.',
});
const LocalTime = Type.String({
  pattern: '^([01]\\d|2[0-3]):[0-5]\\d$',
  description: 'HH:MM, 24-hour clock',
  examples: ['09:00'],
});

export const ScheduleInput = Type.Object(
  {
    days: Type.Array(Type.Enum([...WEEKDAYS]), { minItems: 1, maxItems: 7, uniqueItems: true }),
    start: LocalTime,
    end: LocalTime,
  },
  {
    title: 'CampaignScheduleInput',
    additionalProperties: false,
    description:
      "When to call, in the callee's local time (default Mon–Sat 09:00–20:00). Calls never go before 08:00 or after 21:00 local time, whatever the schedule says.",
  },
);

const RetryRule = Type.Object(
  {
    attempts: Int({ minimum: 0, maximum: 20, description: 'Retries after this outcome (0: none).' }),
    spacingMinutes: Int({
      minimum: 1,
      maximum: 43_200,
      description: 'Minutes between attempts; the retry waits for the next calling window.',
    }),
  },
  { title: 'CampaignRetryRuleInput', additionalProperties: false },
);
export const RetryRulesInput = Type.Object(
  Object.fromEntries(RETRY_OUTCOMES.map((outcome) => [outcome, Type.Optional(RetryRule)])) as Record<
    (typeof RETRY_OUTCOMES)[number],
    ReturnType<typeof Type.Optional<typeof RetryRule>>
  >,
  {
    title: 'CampaignRetryRulesInput',
    additionalProperties: false,
    description: 'Retries per outcome; an outcome left out is not retried.',
  },
);

const Name = SingleLineText({ minLength: 1, maxLength: 200 });
const Ids = (description: string, minItems: number) =>
  Type.Array(Uuid, { minItems, maxItems: 100, uniqueItems: true, description });

const writable = {
  name: Name,
  agentId: Uuid,
  contactListIds: Ids('The lists whose contacts are called (copied when the campaign first starts).', 1),
  fromNumberIds: Ids("Numbers to call from, used in turn; empty: the account's best number.", 0),
  maxConcurrency: Int({
    minimum: 1,
    maximum: 1000,
    description: 'Calls of the campaign live at once (the account limit applies too).',
  }),
  callsPerMinute: Int({ minimum: 1, maximum: 10_000, description: 'Dials a minute at most.' }),
  schedule: ScheduleInput,
  retryRules: RetryRulesInput,
  maxAttemptsPerContact: Int({ minimum: 1, maximum: 20 }),
  stopAt: Nullable(DateTime),
  voicemailAction: Type.Enum([...VOICEMAIL_ACTIONS]),
};

export const CreateCampaignBody = Type.Object(
  {
    name: writable.name,
    agentId: writable.agentId,
    contactListIds: writable.contactListIds,
    fromNumberIds: Type.Optional(writable.fromNumberIds),
    maxConcurrency: Type.Optional({ ...writable.maxConcurrency, default: 5 }),
    callsPerMinute: Type.Optional({ ...writable.callsPerMinute, default: 30 }),
    schedule: Type.Optional(writable.schedule),
    retryRules: Type.Optional(writable.retryRules),
    maxAttemptsPerContact: Type.Optional({ ...writable.maxAttemptsPerContact, default: 3 }),
    stopAt: Type.Optional(writable.stopAt),
    voicemailAction: Type.Optional(writable.voicemailAction),
  },
  { additionalProperties: false },
);
export type CreateCampaignInput = Static<typeof CreateCampaignBody>;

export const UpdateCampaignBody = Type.Partial(Type.Object(writable, { additionalProperties: false }), {
  additionalProperties: false,
  description: 'A running campaign takes only changes of pace, schedule and concurrency; pause it to change the rest.',
});
export type UpdateCampaignInput = Static<typeof UpdateCampaignBody>;

export const ListCampaignsQuery = Type.Object(
  { ...PageQuery, status: Type.Optional(CampaignStatus) },
  { additionalProperties: false },
);
export type ListCampaignsQuery = Static<typeof ListCampaignsQuery>;

const RetryRuleOut = Type.Object(
  { attempts: Type.Integer(), spacingMinutes: Type.Integer() },
  { title: 'CampaignRetryRule' },
);

export const Campaign = Type.Object({
  id: Uuid,
  name: Type.String(),
  agentId: Uuid,
  contactListIds: Type.Array(Uuid),
  fromNumberIds: Type.Array(Uuid),
  maxConcurrency: Type.Integer(),
  callsPerMinute: Type.Integer(),
  schedule: Type.Object(
    { days: Type.Array(Type.String()), start: Type.String(), end: Type.String() },
    { title: 'CampaignSchedule' },
  ),
  retryRules: Type.Object(Object.fromEntries(RETRY_OUTCOMES.map((outcome) => [outcome, RetryRuleOut])), {
    title: 'CampaignRetryRules',
  }),
  maxAttemptsPerContact: Type.Integer(),
  stopAt: Nullable(DateTime),
  voicemailAction: Type.Enum([...VOICEMAIL_ACTIONS]),
  status: CampaignStatus,
  pause: Nullable(
    Type.Object(
      {
        reason: Type.Enum([...PAUSE_REASONS]),
        details: Type.Record(Type.String(), Type.Unknown()),
      },
      {
        title: 'CampaignPause',
        description:
          'Why a paused campaign is paused: manual, compliance (with the abandon-rate figures) or no_usable_number.',
      },
    ),
  ),
  startedAt: Nullable(DateTime),
  completedAt: Nullable(DateTime),
  createdAt: DateTime,
  updatedAt: DateTime,
});

export const CampaignList = Type.Object({ campaigns: Type.Array(Campaign), ...PageFields });

const Rate = Type.Object(
  {
    abandoned: Type.Integer(),
    liveAnswered: Type.Integer(),
    rate: Type.Number({ description: 'abandoned ÷ live-answered (0 without live-answered calls).' }),
  },
  { title: 'CampaignAbandonRate' },
);

export const CampaignStats = Type.Object({
  campaignId: Uuid,
  status: CampaignStatus,
  counts: Type.Object({
    dialed: Type.Integer(),
    connected: Type.Integer(),
    liveAnswered: Type.Integer(),
    voicemail: Type.Integer(),
    busy: Type.Integer(),
    noAnswer: Type.Integer(),
    failed: Type.Integer(),
    abandoned: Type.Integer(),
  }),
  abandonRate: Type.Object({
    last30Days: Rate,
    today: Rate,
    lastHour: Rate,
    threshold: Type.Number({
      description: 'Above this 30-day abandon rate the campaign is paused for compliance (0.035: 3.5%).',
    }),
    governorTarget: Type.Number({
      description:
        'The pace governor keeps the 30-day abandon rate under this (0.03: 3%), dialling fewer calls at once as it nears it.',
    }),
    paceFactor: Type.Number({
      description: 'The pace the governor allows now, as a share of maxConcurrency (1: the full maximum).',
    }),
  }),
  gateDenials: Type.Record(Type.String(), Type.Integer(), {
    description: `Dials the pre-dial gate refused, by reason: ${GATE_DENIALS.join(', ')}.`,
  }),
  avgTalkSeconds: Nullable(Type.Number()),
  costUsd: Money,
  dispositions: Type.Record(Type.String(), Type.Integer()),
  contacts: Type.Object({
    total: Type.Integer(),
    finished: Type.Integer(),
    remaining: Type.Integer(),
    dueNow: Type.Integer(),
    inCall: Type.Integer(),
  }),
  projectedCompletionAt: Nullable(DateTime),
});
