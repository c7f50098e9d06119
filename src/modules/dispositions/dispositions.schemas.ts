import { Type, type Static } from 'typebox';
import { DateTime, PageFields, PageQuery, Uuid } from '../../http/schemas.js';
import { DISPOSITION_CATEGORIES } from './dispositions.tables.js';

export const DispositionCategory = Type.Enum([...DISPOSITION_CATEGORIES], {
  title: 'DispositionCategory',
  description: 'For reporting: positive, neutral, negative, or compliance (do-not-call and the like).',
});
const Code = Type.String({
  pattern: '^[a-z][a-z0-9_]{0,63}$',
  description:
    'A slug: lowercase letters, digits and underscores, starting with a letter (up to 64). It is what calls store.',
  examples: ['appointment_booked'],
});
const Label = Type.String({ minLength: 1, maxLength: 80, description: 'What people see.' });
const Description = Type.String({ maxLength: 500 });

export const CreateDispositionBody = Type.Object(
  {
    code: Code,
    label: Label,
    description: Type.Optional(Description),
    category: DispositionCategory,
    active: Type.Optional(
      Type.Boolean({ description: 'Inactive codes stay on past calls but cannot be set on new ones.' }),
    ),
  },
  { additionalProperties: false },
);
export type CreateDispositionInput = Static<typeof CreateDispositionBody>;

export const UpdateDispositionBody = Type.Object(
  {
    label: Type.Optional(Label),
    description: Type.Optional(Description),
    category: Type.Optional(DispositionCategory),
    active: Type.Optional(Type.Boolean({ description: 'System codes are always active.' })),
  },
  { additionalProperties: false, description: 'The code itself never changes: calls are stored with it.' },
);
export type UpdateDispositionInput = Static<typeof UpdateDispositionBody>;

export const ListDispositionsQuery = Type.Object(
  { ...PageQuery, category: Type.Optional(DispositionCategory), active: Type.Optional(Type.Boolean()) },
  { additionalProperties: false },
);
export type ListDispositionsQuery = Static<typeof ListDispositionsQuery>;

export const DispositionCode = Type.Object(
  {
    id: Uuid,
    code: Type.String(),
    label: Type.String(),
    description: Type.String(),
    category: DispositionCategory,
    isSystem: Type.Boolean({
      description: 'The call engine sets this code by itself: it can be relabelled, not deleted or turned off.',
    }),
    active: Type.Boolean(),
    createdAt: DateTime,
    updatedAt: DateTime,
  },
  { title: 'DispositionCode', description: 'An outcome a call can be marked with.' },
);

export const DispositionCodeList = Type.Object(
  { dispositionCodes: Type.Array(DispositionCode), ...PageFields },
  { title: 'DispositionCodePage' },
);
