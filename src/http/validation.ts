import { isUtf8 } from 'node:buffer';
import { Ajv, type Options } from 'ajv';
import addFormats from 'ajv-formats';
import type { LazySchemas } from './lazy-schemas.js';
import type { FastifyInstance, FastifyRequest, FastifySchemaCompiler } from 'fastify';
import { AppError, invalidField } from './errors.js';

/** JSON bodies nest at most this deep; our schemas need 3 levels, so this only stops abuse. */
export const MAX_JSON_DEPTH = 32;

/** A NUL, which PostgreSQL text cannot hold. */
const NUL = /\u0000/;
/** Half of a UTF-16 surrogate pair on its own: not Unicode text, and stored as U+FFFD if let through. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
/** C0 and C1 controls, line and paragraph separators, bidirectional embeddings, overrides and isolates. */
const NOT_SINGLE_LINE = /[\u0000-\u001F\u007F-\u009F\u2028\u2029\u202A-\u202E\u2066-\u2069]/;

/** What is wrong with a client's string, or null; `subject` is what the message talks about. */
function textProblem(text: string, subject = ''): string | null {
  if (NUL.test(text)) return `${subject}must not contain NUL characters`;
  if (LONE_SURROGATE.test(text)) return `${subject}must be valid Unicode text (it holds a lone UTF-16 surrogate)`;
  return null;
}

const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(Z|[+-](\d{2}):(\d{2}))$/;
const FIRST_STORABLE = Date.parse('0001-01-01T00:00:00Z');
const LAST_STORABLE = Date.parse('9999-12-31T23:59:59.999Z');

/**
 * RFC 3339 date-times that PostgreSQL and JavaScript agree on: a real calendar day, seconds 00-59 (a leap
 * second such as 23:59:60 is refused), a time zone, and an instant within the years 0001-9999 in UTC.
 */
export function isStorableDateTime(text: string): boolean {
  const match = DATE_TIME.exec(text);
  if (!match) return false;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const daysInMonth = new Date(Date.UTC(2000 + (year % 400), month, 0)).getUTCDate();
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth) return false;
  if (hour > 23 || minute > 59 || second > 59) return false;
  if (match[9] !== undefined && (Number(match[9]) > 23 || Number(match[10]) > 59)) return false;
  const instant = Date.parse(text);
  return instant >= FIRST_STORABLE && instant <= LAST_STORABLE;
}

/**
 * Two validators: query strings and path parameters are text on the wire, so they are coerced
 * ("25" -> 25); JSON bodies are not, so {"name": 5} is a type error rather than the string "5".
 * Both know the formats our schemas use; the stricter date-time replaces ajv-formats' own.
 */
function makeAjv(options: Options) {
  const ajv = new Ajv({ allErrors: true, removeAdditional: false, useDefaults: true, strict: false, ...options });
  (addFormats as unknown as (ajv: Ajv) => void)(ajv);
  ajv.addFormat('date-time', { type: 'string', validate: isStorableDateTime });
  ajv.addFormat('single-line', { type: 'string', validate: (text: string) => !NOT_SINGLE_LINE.test(text) });
  return ajv;
}

/** The route validators, each compiled on its first request (see lazy-schemas.ts). */
export function createValidatorCompiler(lazy: LazySchemas): FastifySchemaCompiler<unknown> {
  const forText = makeAjv({ coerceTypes: 'array' });
  const forBody = makeAjv({ coerceTypes: false });
  return ({ schema, httpPart }) => {
    const ajv = httpPart === 'body' ? forBody : forText;
    return lazy.validator(() => ajv.compile(schema as object)) as ReturnType<FastifySchemaCompiler<unknown>>;
  };
}

/** True when the quote at `index` is escaped, i.e. preceded by an odd number of backslashes. */
function isEscaped(json: string, index: number): boolean {
  let backslashes = 0;
  while (json.charCodeAt(index - 1 - backslashes) === 0x5c) backslashes++;
  return backslashes % 2 === 1;
}

/**
 * True when the JSON text opens more than `limit` objects or arrays inside one another. Runs before parsing, so a
 * megabyte of brackets costs a few dozen characters of scanning; strings are skipped with indexOf.
 */
function nestsDeeperThan(json: string, limit: number): boolean {
  let depth = 0;
  for (let i = 0; i < json.length; i++) {
    const c = json.charCodeAt(i);
    if (c === 0x22) {
      let end = json.indexOf('"', i + 1);
      while (end !== -1 && isEscaped(json, end)) end = json.indexOf('"', end + 1);
      if (end === -1) return false; // unterminated: the parser reports it
      i = end;
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > limit) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}

/**
 * Fastify's JSON parser (prototype-poisoning checks included), behind two checks it does not make: the bytes are
 * UTF-8 (decoding would otherwise turn bad bytes into U+FFFD silently), and the nesting stays within MAX_JSON_DEPTH.
 */
export function registerJsonBodyParser(app: FastifyInstance) {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const bytes = body as Buffer;
    if (!isUtf8(bytes)) return done(new AppError('invalid_json', 'The body is not valid UTF-8'), undefined);
    const text = bytes.toString('utf8');
    if (nestsDeeperThan(text, MAX_JSON_DEPTH)) {
      return done(
        new AppError(
          'validation_failed',
          `Invalid request: body nests deeper than the limit of ${MAX_JSON_DEPTH} levels`,
          {
            fields: [{ field: 'body', message: `nests deeper than the limit of ${MAX_JSON_DEPTH} levels` }],
            maxDepth: MAX_JSON_DEPTH,
          },
        ),
        undefined,
      );
    }
    parseJson(request, text, done);
  });
}

/** Each key and value of the raw query string must decode to UTF-8; the parser would keep "%FF" as it is. */
function checkQueryEncoding(url: string) {
  const start = url.indexOf('?');
  if (start === -1 || url.indexOf('%', start) === -1) return;
  for (const pair of url.slice(start + 1).split('&')) {
    if (!pair.includes('%')) continue;
    const [rawKey = '', ...rest] = pair.split('=');
    const decode = (part: string) => decodeURIComponent(part.replace(/\+/g, ' '));
    let key: string;
    try {
      key = decode(rawKey);
    } catch {
      throw invalidField('querystring', 'has a parameter name that is not valid percent-encoded UTF-8');
    }
    try {
      decode(rest.join('='));
    } catch {
      throw invalidField(`querystring/${key}`, 'is not valid percent-encoded UTF-8');
    }
  }
}

/** Parsed JSON, query and params objects; a streamed body (or any other class instance) is not walked. */
function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const proto = Object.getPrototypeOf(value) as object | null;
  // The query parser's objects inherit from a prototype that itself has none.
  return proto === null || proto === Object.prototype || Object.getPrototypeOf(proto) === null;
}

/** Walks a parsed request part without recursion (a body may be deep) and throws on the first bad string. */
function checkStrings(root: unknown, context: string) {
  const pending: Array<[unknown, string]> = [[root, context]];
  while (pending.length > 0) {
    const [value, path] = pending.pop()!;
    if (typeof value === 'string') {
      const problem = textProblem(value);
      if (problem) throw invalidField(path, problem);
    } else if (Array.isArray(value)) {
      value.forEach((item, index) => pending.push([item, `${path}/${index}`]));
    } else if (isPlainObject(value)) {
      for (const [key, item] of Object.entries(value)) {
        const problem = textProblem(key, 'field names ');
        if (problem) throw invalidField(path, problem);
        pending.push([item, `${path}/${key}`]);
      }
    }
  }
}

/**
 * The one place client text is checked, for every route: the query string decodes as UTF-8, and no string in the
 * query, the path parameters or a JSON body (keys included) holds a NUL or a lone surrogate. A streamed (CSV)
 * body is left to its own reader.
 */
export async function checkRequestText(request: FastifyRequest) {
  checkQueryEncoding(request.url);
  checkStrings(request.query, 'querystring');
  checkStrings(request.params, 'params');
  checkStrings(request.body, 'body');
}
