import { Ajv, type Options } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

/**
 * Two validators: query strings and path parameters are text on the wire, so they are coerced
 * ("25" -> 25); JSON bodies are not, so {"name": 5} is a type error rather than the string "5".
 */
function makeAjv(options: Options) {
  const ajv = new Ajv({ allErrors: true, removeAdditional: false, useDefaults: true, strict: false, ...options });
  (addFormats as unknown as (ajv: Ajv) => void)(ajv);
  return ajv;
}

export function createValidatorCompiler(): FastifySchemaCompiler<unknown> {
  const forText = makeAjv({ coerceTypes: 'array' });
  const forBody = makeAjv({ coerceTypes: false });
  return ({ schema, httpPart }) => {
    const ajv = httpPart === 'body' ? forBody : forText;
    return ajv.compile(schema as object) as ReturnType<FastifySchemaCompiler<unknown>>;
  };
}
