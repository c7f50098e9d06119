import { Type, type Static } from 'typebox';
import { Nullable, SingleLineText } from '../../http/schemas.js';
import { AgentVoicemail, CreateAgentBody } from '../agents/agents.schemas.js';
import { VERSIONED_FIELDS } from '../agents/agents.prompt.js';
import { DispositionCategory } from '../dispositions/dispositions.schemas.js';
import { Finding } from '../safety/safety.schemas.js';
import { QUESTION_TYPES } from './agent-templates.types.js';
import { TONE_NAMES } from './agent-templates.catalog.js';

const TemplateKey = Type.String({
  minLength: 1,
  maxLength: 64,
  pattern: '^[a-z0-9-]+$',
  description: 'A template id, e.g. appointment-setting.',
});
export const TemplateParams = Type.Object({ id: TemplateKey }, { additionalProperties: false });
export const WizardParams = Type.Object({ key: TemplateKey }, { additionalProperties: false });

const Variable = Type.Object({
  key: Type.String(),
  label: Type.String(),
  type: Type.Enum([...QUESTION_TYPES]),
  help: Type.String(),
  required: Type.Boolean(),
  default: Type.String({ description: 'What the blank reads when no value is given.' }),
  options: Nullable(Type.Array(Type.String())),
});

const TemplateSummary = {
  id: Type.String(),
  name: Type.String(),
  description: Type.String(),
  direction: Type.Enum(['inbound', 'outbound']),
  tone: Type.Enum([...TONE_NAMES]),
};

export const TemplateListItem = Type.Object({
  ...TemplateSummary,
  variables: Type.Array(Type.String(), { description: 'The keys of its blanks.' }),
});
export const TemplateList = Type.Object({ templates: Type.Array(TemplateListItem) });

const Parts = Type.Object(Object.fromEntries(VERSIONED_FIELDS.map((name) => [name, Type.String()])));

export const TemplateDetail = Type.Object({
  ...TemplateSummary,
  variables: Type.Array(Variable),
  parts: Type.Object(Parts.properties, {
    description: 'The prompt parts and first message, with {{key}} blanks the variables fill.',
  }),
  transfer: Type.Object({ whenToTransfer: Type.String() }),
  voicemail: AgentVoicemail,
  dispositions: Type.Array(
    Type.Object({
      code: Type.String(),
      label: Type.String(),
      category: DispositionCategory,
      description: Type.String(),
    }),
    {
      description:
        "The outcomes its calls end with beyond every account's codes (its closers are labelled with them); added to the account's disposition codes when an agent is made from it.",
    },
  ),
  contactColumns: Type.Array(Type.String(), {
    description:
      'Columns of the contact its text reads on each call ({{appointmentTime}} reads the column "Appointment Time"); a sentence with a column the contact lacks is not said.',
  }),
});

const VariableValues = Type.Record(Type.String({ maxLength: 64 }), Type.String({ maxLength: 2000 }), {
  maxProperties: 50,
  description: "Values for the template's blanks, by key; a blank left out reads its default.",
});

const Overrides = Type.Partial(CreateAgentBody, {
  description: "Agent fields that replace the template's (any field of POST /v1/agents).",
});

export const FromTemplateBody = Type.Object(
  {
    templateId: TemplateKey,
    variables: Type.Optional(VariableValues),
    overrides: Type.Optional(Overrides),
  },
  { additionalProperties: false },
);
export type FromTemplateInput = Static<typeof FromTemplateBody>;
export type TemplateOverrides = Static<typeof Overrides>;

const Question = Type.Object({
  key: Type.String(),
  label: Type.String(),
  type: Type.Enum([...QUESTION_TYPES]),
  help: Type.String(),
  required: Type.Boolean(),
  default: Type.Union([Type.String(), Type.Boolean(), Type.Null()]),
  options: Nullable(Type.Array(Type.String())),
});

export const WizardList = Type.Object({
  templates: Type.Array(
    Type.Object({ key: Type.String(), name: Type.String(), description: Type.String(), questionCount: Type.Integer() }),
  ),
});
export const WizardDetail = Type.Object({
  key: Type.String(),
  name: Type.String(),
  description: Type.String(),
  questions: Type.Array(Question),
});

export const WizardAgentBody = Type.Object(
  {
    templateKey: TemplateKey,
    answers: Type.Record(
      Type.String({ maxLength: 64 }),
      Type.Union([Type.String({ maxLength: 4000 }), Type.Boolean(), Type.Null()]),
      {
        maxProperties: 50,
        description: 'Answers by question key (GET /v1/wizard/templates/{key}); blank answers take the default.',
      },
    ),
    name: Type.Optional(
      SingleLineText({
        minLength: 1,
        maxLength: 120,
        description: 'The agent name; by default the business name and the template name.',
      }),
    ),
  },
  { additionalProperties: false },
);
export type WizardAgentInput = Static<typeof WizardAgentBody>;

export const GenerateBody = Type.Object(
  {
    businessDescription: Type.String({
      minLength: 10,
      maxLength: 4000,
      description: 'What the business does, who its customers are, anything the agent should know.',
    }),
    goal: Type.String({ minLength: 3, maxLength: 1000, description: 'What the agent should achieve on its calls.' }),
    tone: Type.Optional(Type.Enum([...TONE_NAMES])),
    language: Type.Optional(
      SingleLineText({
        minLength: 2,
        maxLength: 40,
        description: 'The language the agent speaks, e.g. English or es.',
      }),
    ),
  },
  { additionalProperties: false },
);
export type GenerateInputBody = Static<typeof GenerateBody>;

export const GeneratedAgent = Type.Object({
  definition: Type.Object(
    {
      name: Type.String(),
      ...Parts.properties,
      transfer: Type.Object({ whenToTransfer: Type.String() }),
      voicemail: AgentVoicemail,
    },
    { description: 'Ready for POST /v1/agents; nothing is saved.' },
  ),
  generator: Type.Object({
    kind: Type.Enum(['llm', 'builtin'], {
      description: 'llm: the configured model wrote it; builtin: the offline generator adapted a template.',
    }),
    model: Nullable(Type.String()),
    templateId: Nullable(Type.String()),
    fallbackReason: Nullable(Type.String({ description: 'Why the model was not used although one is configured.' })),
  }),
  safety: Type.Object(
    { result: Type.Enum(['pass', 'fail']), findings: Type.Array(Finding) },
    { description: 'The safety rules run on the draft.' },
  ),
});
