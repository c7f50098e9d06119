import { Type, type Static } from 'typebox';
import { DateTime, Nullable, PageFields, PageQuery } from '../../http/schemas.js';

const Phone = Type.String({ minLength: 1, maxLength: 64, description: 'Any common format; stored in E.164.' });
const Reason = Type.String({ maxLength: 500 });

export const AddDncBody = Type.Object(
  { phone: Phone, reason: Type.Optional(Nullable(Reason)) },
  { additionalProperties: false },
);
export type AddDncInput = Static<typeof AddDncBody>;

export const DncEntry = Type.Object(
  {
    phone: Type.String({ description: 'E.164, e.g. +14155550123.' }),
    reason: Nullable(Type.String()),
    createdAt: DateTime,
  },
  { title: 'DncEntry', description: 'A number on the do-not-call list.' },
);

export const DncQuery = Type.Object(
  {
    q: Type.Optional(
      Type.String({ minLength: 1, maxLength: 100, description: 'Digits of the number, or words of the reason.' }),
    ),
    ...PageQuery,
  },
  { additionalProperties: false },
);
export type DncQuery = Static<typeof DncQuery>;

export const DncPage = Type.Object({ dncEntries: Type.Array(DncEntry), ...PageFields }, { title: 'DncPage' });

export const DncPhoneParams = Type.Object(
  {
    phone: Type.String({
      minLength: 1,
      maxLength: 64,
      description: 'URL-encoded, any common format: %2B14155550123, (415)%20555-0123.',
    }),
  },
  { additionalProperties: false },
);

export const DeletedDncBody = Type.Object(
  { phone: Type.String(), deleted: Type.Literal(true) },
  { title: 'DeletedDncEntry', description: 'The number is off the do-not-call list.' },
);

export const BULK_MAX_ITEMS = 10_000;

export const BulkDncBody = {
  content: {
    'application/json': {
      schema: Type.Array(
        Type.Union([
          Phone,
          Type.Object({ phone: Phone, reason: Type.Optional(Nullable(Reason)) }, { additionalProperties: false }),
        ]),
        {
          minItems: 1,
          maxItems: BULK_MAX_ITEMS,
          description: 'Numbers, or { phone, reason } objects.',
        },
      ),
    },
    'text/csv': {
      schema: Type.Unknown({
        description:
          'CSV with a phone column (and optionally reason), or one number per line without a header. Streamed; up to CSV_BODY_LIMIT_BYTES.',
      }),
    },
  },
};

export const BulkDncResult = Type.Object(
  {
    rows: Type.Integer({ description: 'Numbers sent (blank rows are not counted).' }),
    added: Type.Integer({ description: 'Numbers newly put on the list.' }),
    duplicates: Type.Integer({ description: 'Numbers already on the list, or repeated in the request.' }),
    invalid: Type.Integer(),
    contactsFlagged: Type.Integer({ description: "The account's contacts newly flagged do-not-call." }),
    errors: Type.Array(
      Type.Object({
        row: Type.Integer({ description: 'CSV row (header is row 1), or 1-based array position.' }),
        phone: Type.String(),
        reason: Type.String(),
        message: Type.String(),
      }),
      { description: 'The first 100 invalid rows.' },
    ),
  },
  { title: 'DncBulkResult', description: 'What the bulk add did, with the first invalid rows.' },
);
