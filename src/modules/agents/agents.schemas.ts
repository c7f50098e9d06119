import { Type, type Static, type TSchema } from 'typebox';
import { DateTime, Int, Nullable, PageFields, PageQuery, SingleLineText, Uuid } from '../../http/schemas.js';
import { PROMPT_LIMITS, VERSIONED_FIELDS } from './agents.prompt.js';
import { AGENT_STATUSES, ANALYSIS_FIELD_TYPES, VOICEMAIL_ACTIONS } from './agents.tables.js';

export const AgentStatus = Type.Enum([...AGENT_STATUSES], {
  title: 'AgentStatus',
  description: 'draft and paused agents take no new calls; any status may move to any other.',
});
const VoicemailAction = Type.Enum([...VOICEMAIL_ACTIONS]);
export const AgentVoicemail = Type.Object(
  { action: VoicemailAction, message: Type.String() },
  {
    title: 'AgentVoicemail',
    description: 'What the agent does when a voicemail answers: hang up, or leave this message after the beep.',
  },
);
const E164 = Type.String({
  pattern: '^\\+[1-9]\\d{6,14}$',
  description: 'E.164, e.g. +14155550123',
  examples: ['+14155550123'],
});
const Name = SingleLineText({ minLength: 1, maxLength: 120 });
const ShortText = (description: string) => Type.String({ maxLength: PROMPT_LIMITS.shortText, description });
const Part = (description: string, maxLength: number = PROMPT_LIMITS.part) => Type.String({ maxLength, description });

/** The nine prompt parts in assembly order, plus the first message: the versioned fields. */
const VersionedFields = {
  soul: Part('Personality: who the agent is and how it speaks.'),
  mission: Part('The one goal of the call.'),
  playbook: Part('The steps the agent follows.'),
  examples: Part('Example exchanges to imitate.'),
  objections: Part('Objections to expect and how to answer them.'),
  closers: Part('How to close: the ask and the wrap-up.'),
  notes: Part('Anything else the agent must keep in mind.'),
  faq: Part('Questions callers ask, with answers.'),
  knowledgeBase: Part('Reference material; retrieved in chunks during a call.', PROMPT_LIMITS.knowledgeBase),
  firstMessage: Type.String({
    maxLength: PROMPT_LIMITS.firstMessage,
    description: 'What the agent says when the call connects; empty means it waits for the other side to speak.',
  }),
};

const TransferInput = Type.Object(
  {
    number: Type.Optional(Nullable(E164)),
    whenToTransfer: Type.Optional(ShortText('When the agent should hand the call to a person.')),
  },
  {
    title: 'AgentTransferInput',
    additionalProperties: false,
    description: 'Call transfer to a person. Fields left out keep their value.',
  },
);

const VoicemailInput = Type.Object(
  {
    action: Type.Optional(VoicemailAction),
    message: Type.Optional(ShortText('The message left after the beep; required for leave_message.')),
  },
  {
    title: 'AgentVoicemailInput',
    additionalProperties: false,
    description: 'What to do when voicemail answers. Fields left out keep their value.',
  },
);

/** Fields one agent may declare for its calls' analysis. */
export const MAX_ANALYSIS_FIELDS = 20;
const analysisFieldProperties = <D extends TSchema>(description: D) => ({
  name: Type.String({
    pattern: '^[a-z][A-Za-z0-9_]{0,39}$',
    description: "The value's key in each call's analysis.fields: a letter, then letters, digits or _.",
    examples: ['budget'],
  }),
  type: Type.Enum([...ANALYSIS_FIELD_TYPES], {
    description:
      'string, number, boolean, date (answered as YYYY-MM-DD, read in the callee’s time zone) or email (an address said or spelled out, as read back).',
  }),
  description,
});
const analysisOf = <F extends TSchema>(field: F, title: string) =>
  Type.Object(
    {
      fields: Type.Array(field, {
        maxItems: MAX_ANALYSIS_FIELDS,
        description: 'Values the post-call analysis extracts from each call, by name (names are unique).',
      }),
    },
    {
      title,
      additionalProperties: false,
      description:
        'What the analysis written after each answered call extracts. A setting: a change applies to calls analysed from then on and does not change the version.',
    },
  );
const AnalysisFieldDescription = { maxLength: 300, examples: ['The monthly budget the caller names, in dollars'] };
const AgentAnalysisInput = analysisOf(
  Type.Object(
    analysisFieldProperties(
      SingleLineText({
        ...AnalysisFieldDescription,
        description: 'What to extract, in plain words; the analysis reads it (and the name) to find the value.',
      }),
    ),
    { title: 'AnalysisFieldInput', additionalProperties: false },
  ),
  'AgentAnalysisInput',
);
const AgentAnalysis = analysisOf(
  Type.Object(analysisFieldProperties(Type.String({ ...AnalysisFieldDescription, description: 'What to extract.' })), {
    title: 'AnalysisField',
  }),
  'AgentAnalysis',
);

const writableFields = {
  ...Type.Partial(Type.Object(VersionedFields)).properties,
  voice: Type.Optional(
    Nullable(SingleLineText({ minLength: 1, maxLength: 200, description: 'Voice id; answered as voiceId.' })),
  ),
  liveLlmId: Type.Optional(Nullable(SingleLineText({ minLength: 1, maxLength: 200 }))),
  transfer: Type.Optional(TransferInput),
  voicemail: Type.Optional(VoicemailInput),
  analysis: Type.Optional(AgentAnalysisInput),
  status: Type.Optional(AgentStatus),
};

export const CreateAgentBody = Type.Object({ ...writableFields, name: Name }, { additionalProperties: false });
export const UpdateAgentBody = Type.Object(
  { ...writableFields, name: Type.Optional(Name) },
  { additionalProperties: false },
);
export type CreateAgentInput = Static<typeof CreateAgentBody>;
export type UpdateAgentInput = Static<typeof UpdateAgentBody>;

export const ListAgentsQuery = Type.Object(
  { ...PageQuery, status: Type.Optional(AgentStatus) },
  { additionalProperties: false },
);
export type ListAgentsQuery = Static<typeof ListAgentsQuery>;
export const VersionParams = Type.Object({ id: Uuid, version: Int({ minimum: 1 }) }, { additionalProperties: false });

/** The agent list item: a summary of the agent, without its prompt parts. */
export const AgentListItem = Type.Object(
  {
    id: Uuid,
    name: Type.String(),
    status: AgentStatus,
    version: Type.Integer({ minimum: 1 }),
    voiceId: Nullable(Type.String()),
    liveLlmId: Nullable(Type.String()),
    inboundDid: Nullable(
      Type.String({ description: 'The inbound number assigned to the agent; set by phone-number assignment.' }),
    ),
    lastCallAt: Nullable(DateTime),
    createdAt: DateTime,
  },
  { title: 'Agent', description: 'An agent as lists show it.' },
);

export const KnowledgeIndexState = Type.Object(
  {
    chunks: Type.Integer({ minimum: 0 }),
    indexedAt: Nullable(DateTime),
    pending: Type.Boolean({ description: 'True while a change of the knowledge base waits to be indexed.' }),
  },
  { description: 'The search index of the knowledge base, retrieved from in chunks during calls.' },
);
export type KnowledgeIndexState = Static<typeof KnowledgeIndexState>;

export const Agent = Type.Object(
  {
    ...AgentListItem.properties,
    updatedAt: DateTime,
    ...VersionedFields,
    transfer: Type.Object({ number: Nullable(E164), whenToTransfer: Type.String() }),
    voicemail: AgentVoicemail,
    analysis: AgentAnalysis,
    systemPrompt: Type.String({
      description: 'Read-only: the non-empty prompt parts, assembled in order under headings.',
    }),
    knowledgeIndex: Type.Optional(KnowledgeIndexState),
  },
  {
    title: 'AgentDetail',
    description: 'An agent in full: its settings, prompt parts and the assembled system prompt.',
  },
);

export const AgentList = Type.Object({ agents: Type.Array(AgentListItem), ...PageFields }, { title: 'AgentPage' });

const versionSummaryFields = {
  version: Type.Integer({ minimum: 1 }),
  createdAt: DateTime,
  createdByUserId: Nullable(Uuid),
  createdByApiKeyId: Nullable(Uuid),
  changedParts: Type.Array(Type.Enum([...VERSIONED_FIELDS]), {
    description: 'Fields that differ from the previous version; for version 1, the non-empty ones.',
  }),
};

export const AgentVersionSummary = Type.Object(versionSummaryFields, {
  title: 'AgentVersionSummary',
  description: 'A saved version of the prompt of an agent, as lists show it: what changed, without the text.',
});

export const AgentVersion = Type.Object(
  {
    ...versionSummaryFields,
    parts: Type.Object(VersionedFields, { description: 'The full prompt at this version.' }),
  },
  { title: 'AgentVersion', description: 'A saved version of the prompt of an agent, with the full prompt.' },
);

export const AgentVersionList = Type.Object(
  { versions: Type.Array(AgentVersionSummary), ...PageFields },
  { title: 'AgentVersionPage' },
);
