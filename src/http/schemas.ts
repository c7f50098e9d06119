import { Type, type Static, type TNumberOptions, type TSchema, type TStringOptions } from 'typebox';
import { ERROR_CODES } from './errors.js';

/** Building blocks every module's schemas reuse, so the OpenAPI document stays uniform. */
export const Uuid = Type.String({ format: 'uuid' });
/** Another resource named by its id and name (a contact's lists, a picker's accounts). */
export const NamedRef = Type.Object(
  { id: Uuid, name: Type.String() },
  { title: 'NamedRef', description: 'A resource named by its id and its name.' },
);
export const DateTime = Type.String({ format: 'date-time' });
export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
/** Money is a decimal string in USD, never a float (no rounding drift in sums). */
export const Money = Type.String({ pattern: '^-?\\d+(\\.\\d+)?$', examples: ['0.1375'] });

export const IdParams = Type.Object({ id: Uuid }, { additionalProperties: false });

export const ErrorBody = Type.Object(
  {
    error: Type.Union(Object.keys(ERROR_CODES).map((c) => Type.Literal(c))),
    message: Type.String(),
    details: Type.Record(Type.String(), Type.Unknown()),
  },
  { $id: 'ErrorBody', description: 'The error body of every non-2xx answer: { error, message, details }.' },
);

const errorRef = Type.Unsafe({ $ref: 'ErrorBody#' });

const SPECIFIC_ERRORS = {
  validation_failed: {
    name: 'ValidationFailedError',
    details: {
      type: 'object',
      required: ['fields'],
      properties: {
        fields: {
          type: 'array',
          description: 'One entry per failing field.',
          items: {
            type: 'object',
            required: ['field', 'message'],
            properties: {
              field: {
                type: 'string',
                description: 'Where: body, querystring or params, then the path, e.g. body/transfer/number.',
                examples: ['querystring/status'],
              },
              message: { type: 'string', description: 'What is wrong with it.' },
            },
          },
        },
      },
    },
  },
  rate_limited: {
    name: 'RateLimitedError',
    details: {
      type: 'object',
      required: ['retryAfterSec'],
      properties: {
        retryAfterSec: {
          type: 'integer',
          minimum: 0,
          description: 'Seconds to wait before trying again (also in Retry-After).',
        },
      },
    },
  },
  invalid_csv: {
    name: 'InvalidCsvError',
    details: {
      type: 'object',
      required: ['line'],
      properties: {
        line: { type: 'integer', minimum: 1, description: 'The line of the file where reading failed, from 1.' },
        reason: { type: 'string', description: 'Why the line could not be read.' },
      },
    },
  },
} as const;

const errorVariant = (codes: string[], details: object, description: string) => ({
  type: 'object',
  description,
  required: ['error', 'message', 'details'],
  properties: {
    error: codes.length === 1 ? { type: 'string', const: codes[0] } : { type: 'string', enum: codes },
    message: { type: 'string', description: 'For people; it may change. Branch on error, never on message.' },
    details,
  },
});

/**
 * The error body as the API document shows it: one schema per code whose details have a fixed shape, and one for
 * the rest, so a generated client narrows details by checking error. (The runtime schema accepts them all.)
 */
export const DocumentedErrorSchemas: Record<string, object> = (() => {
  const specific = Object.keys(SPECIFIC_ERRORS);
  const others = Object.keys(ERROR_CODES).filter((code) => !specific.includes(code));
  const schemas: Record<string, object> = {};
  const mapping: Record<string, string> = {};
  for (const [code, { name, details }] of Object.entries(SPECIFIC_ERRORS)) {
    schemas[name] = errorVariant([code], details, ERROR_CODES[code as keyof typeof ERROR_CODES].meaning);
    mapping[code] = `#/components/schemas/${name}`;
  }
  schemas.GeneralError = errorVariant(
    others,
    { type: 'object', additionalProperties: {}, description: 'Extra facts about the error; none are guaranteed.' },
    'Any other error; the table in the introduction says what each code means.',
  );
  for (const code of others) mapping[code] = '#/components/schemas/GeneralError';
  schemas.ErrorBody = {
    description: 'The error body of every non-2xx answer: { error, message, details }. details depends on error.',
    oneOf: Object.keys(schemas).map((name) => ({ $ref: `#/components/schemas/${name}` })),
    discriminator: { propertyName: 'error', mapping },
  };
  return schemas;
})();

/** Response map for a route: its 200 body plus the shared error body for 4xx and 5xx. */
export function responses<T extends TSchema>(ok: T) {
  return { 200: ok, '4xx': errorRef, '5xx': errorRef } as const;
}

/** The range of a PostgreSQL `integer` column. */
export const INT4_MIN = -2_147_483_648;
export const INT4_MAX = 2_147_483_647;

/**
 * An integer a client sends. Bounded to the int4 range unless the options narrow it, so no value that passes
 * validation can overflow in SQL; a wider column must say so with explicit bounds.
 */
export const Int = (options: TNumberOptions = {}) => Type.Integer({ minimum: INT4_MIN, maximum: INT4_MAX, ...options });

export const MAX_PAGE_SIZE = 500;
/** Deep offsets are legal up to the int4 maximum; past the last row a page is simply empty. */
export const MAX_OFFSET = INT4_MAX;

/** Paging: limit 1..500 (default 25), offset >= 0 (default 0). */
export const PageQuery = {
  limit: Int({ minimum: 1, maximum: MAX_PAGE_SIZE, default: 25 }),
  offset: Int({ minimum: 0, maximum: MAX_OFFSET, default: 0 }),
};

/** A query string that takes nothing but paging. */
export const PageOnlyQuery = Type.Object(PageQuery, { additionalProperties: false });
export type PageOnlyQuery = Static<typeof PageOnlyQuery>;

/**
 * One line of text for names and titles. Beyond the rules every string follows (well-formed Unicode, no NUL),
 * it refuses C0/C1 control characters (tabs, line breaks, escapes), line and paragraph separators, and the
 * bidirectional overrides and isolates that can make a name display as something else. The check is the
 * `single-line` format, registered with the validator in validation.ts.
 */
export const SingleLineText = (options: TStringOptions = {}) =>
  Type.String({
    ...options,
    format: 'single-line',
    description: [options.description, 'One line: no control characters or bidirectional overrides.']
      .filter(Boolean)
      .join(' '),
  });

export const PageFields = {
  total: Type.Integer({ minimum: 0 }),
  limit: Type.Integer(),
  offset: Type.Integer(),
};

export const OkBody = Type.Object({ ok: Type.Literal(true) }, { title: 'Ok', description: 'Done.' });

export const DeletedBody = Type.Object(
  { id: Type.String(), deleted: Type.Literal(true) },
  { title: 'Deleted', description: 'The resource was deleted.' },
);
