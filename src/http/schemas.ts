import { Type, type Static, type TSchema } from 'typebox';
import { ERROR_CODES } from './errors.js';

/** Building blocks every module's schemas reuse, so the OpenAPI document stays uniform. */
export const Uuid = Type.String({ format: 'uuid' });
export const DateTime = Type.String({ format: 'date-time' });
export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
/** Money is a decimal string in USD, never a float (DESIGN §1). */
export const Money = Type.String({ pattern: '^-?\\d+(\\.\\d+)?$', examples: ['0.1375'] });

export const IdParams = Type.Object({ id: Uuid }, { additionalProperties: false });

export const ErrorBody = Type.Object(
  {
    error: Type.Union(Object.keys(ERROR_CODES).map((c) => Type.Literal(c))),
    message: Type.String(),
    details: Type.Record(Type.String(), Type.Unknown()),
  },
  { $id: 'ErrorBody', description: 'The error body of every non-2xx answer (SPEC §7).' },
);

const errorRef = Type.Unsafe({ $ref: 'ErrorBody#' });

/** Response map for a route: its 200 body plus the shared error body for 4xx and 5xx. */
export function responses<T extends TSchema>(ok: T) {
  return { 200: ok, '4xx': errorRef, '5xx': errorRef } as const;
}

/** SPEC §8 / DESIGN §1: limit 1..500 (default 25), offset >= 0 (default 0). */
export const PageQuery = {
  limit: Type.Integer({ minimum: 1, maximum: 500, default: 25 }),
  offset: Type.Integer({ minimum: 0, default: 0 }),
};

/** A query string that takes nothing but paging. */
export const PageOnlyQuery = Type.Object(PageQuery, { additionalProperties: false });
export type PageOnlyQuery = Static<typeof PageOnlyQuery>;

export const PageFields = {
  total: Type.Integer({ minimum: 0 }),
  limit: Type.Integer(),
  offset: Type.Integer(),
};

export const OkBody = Type.Object({ ok: Type.Literal(true) });

export const DeletedBody = Type.Object({ id: Type.String(), deleted: Type.Literal(true) });
