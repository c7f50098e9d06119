import { Type, type Static } from 'typebox';
import { Nullable, PageFields, PageQuery, Money } from '../../http/schemas.js';

export const VOICE_GENDERS = ['female', 'male', 'neutral', 'unknown'] as const;

export const ListVoicesQuery = Type.Object(
  {
    ...PageQuery,
    language: Type.Optional(
      Type.String({
        pattern: '^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$',
        maxLength: 35,
        description: 'Only voices of this language tag (e.g. en-us).',
      }),
    ),
    gender: Type.Optional(Type.Enum([...VOICE_GENDERS], { description: 'Only voices of this gender.' })),
  },
  { additionalProperties: false },
);
export type ListVoicesQuery = Static<typeof ListVoicesQuery>;

export const VoiceParams = Type.Object(
  { id: Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_.+-]+$' }) },
  { additionalProperties: false },
);

export const VoiceItem = Type.Object({
  id: Type.String({ description: "The value of an agent's voice." }),
  name: Type.String(),
  language: Type.String({ description: 'BCP 47 tag; mul for voices that speak many languages.' }),
  gender: Type.Enum([...VOICE_GENDERS]),
  provider: Type.String(),
  sampleUrl: Type.String({ description: 'A short WAV of this voice; needs the same sign-in as this list.' }),
});

export const VoiceList = Type.Object({
  voices: Type.Array(VoiceItem),
  ...PageFields,
  engine: Type.Object({
    name: Type.String(),
    defaultVoice: Nullable(Type.String({ description: 'The voice of agents whose voice is null.' })),
    available: Type.Boolean(),
    message: Nullable(Type.String({ description: 'Why there are no voices, and how to get some.' })),
  }),
});

export const LiveModel = Type.Object({
  id: Type.String({ format: 'uuid' }),
  slug: Type.String({ description: "The value of an agent's liveLlmId (the id works too)." }),
  name: Type.String(),
  provider: Type.String(),
  model: Type.String(),
  kind: Type.Enum(['model', 'builtin_engine'], {
    description: 'builtin_engine: the deterministic playbook engine, not a language model.',
  }),
  builtIn: Type.Boolean(),
  isDefault: Type.Boolean({ description: 'Used by agents whose liveLlmId is null.' }),
  latencyClass: Type.Enum(['low', 'medium', 'high']),
  contextTokens: Nullable(Type.Integer()),
  inputPer1kTokensUsd: Money,
  outputPer1kTokensUsd: Money,
});

export const LiveModelList = Type.Object({ models: Type.Array(LiveModel) });
