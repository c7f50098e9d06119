/**
 * Hostile input over every operation of the app's own OpenAPI document: wrong types, integers past every SQL range,
 * NUL bytes, lone surrogates, bad percent-encoding, 200,000-character strings, deep nesting, prototype keys, unknown
 * fields. A route registered tomorrow is in the document, so it is fuzzed with no change here.
 *
 * Each request is sent as the account owner, with real ids of the account (and of another account) where a path
 * takes one. It must answer below 500, every 4xx in the error body with the status of its code, and a refused write
 * must change nothing: no table of the database gains, loses or rewrites a row. Deterministic: the only randomness
 * comes from a fixed seed. Run alone with `npm run test:only -- fuzz`.
 *
 * It runs in the embedded-database pass only: what it checks is the validation in front of the storage, and PGlite is
 * PostgreSQL's own engine, so a second pass on a PostgreSQL server (some 100 s) would find the same answers.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { ERROR_CODES, type ErrorCode } from '../src/lib/errors.js';
import { buildTestApp, signUp, type SignedUp, type TestApp } from './helpers.js';
import { insertCall } from './factories/calls.js';

// ---------------------------------------------------------------------------------------------------------------
// Deterministic randomness

function mulberry32(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const SEED = 0x5eed_2024;
let rand = mulberry32(SEED);
const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)]!;
const seededUuid = () => {
  const hex = Array.from({ length: 32 }, () => Math.floor(rand() * 16).toString(16)).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
};

/** Short strings mixing ASCII with the characters that break things: controls, surrogates, bidi, SQL wildcards. */
function randomString(): string {
  const pools = [
    () => String.fromCharCode(32 + Math.floor(rand() * 95)),
    () => String.fromCharCode(Math.floor(rand() * 32)),
    () => String.fromCharCode(0x7f + Math.floor(rand() * 33)),
    () => String.fromCharCode(0xd800 + Math.floor(rand() * 0x800)),
    () => pick(['\u202e', '\u2066', '\u2028', '\ufeff', '\uffff', '😀', '中', 'é', 'e\u0301']),
    () => pick(['%', '_', '\\', "'", '"', '%_%', '\\%', '--', ';', '$1', '{{x}}']),
  ];
  return Array.from({ length: Math.floor(rand() * 24) }, () => pick(pools)()).join('');
}

/** Integers around powers of two up to 2^70, as JSON number text, sometimes in exponent form. */
function randomNumberText(): string {
  const magnitude = 2 ** Math.floor(rand() * 71) + Math.floor(rand() * 3) - 1;
  const signed = rand() < 0.3 ? -magnitude : magnitude;
  return rand() < 0.2 ? signed.toExponential() : BigInt(Math.round(signed)).toString();
}

// ---------------------------------------------------------------------------------------------------------------
// Hostile values

/**
 * Each field gets every value of the core lists, which cover one case of each kind, plus a seeded draw from the
 * extra lists and a few random values: enough to find a class of bug without sending every variant everywhere.
 */
const CORE_STRINGS: readonly string[] = [
  '',
  'a\u0000b',
  '\ud800',
  'a\udc00b',
  '%_%',
  '\\',
  "' OR '1'='1' --",
  'x\u202eexe.txt',
  'a\nb',
  '\u0085',
  'x'.repeat(200_000),
  '2024-12-31T23:59:60Z',
  '0000-01-01T00:00:00Z',
  '+99999999999999999999',
  '😀',
];
const EXTRA_STRINGS: readonly string[] = [
  ' ',
  '\u0000',
  '\udbff\udfff',
  '%',
  '_',
  '\\%',
  '$1',
  '\u2066x\u2069',
  'a\r\nb',
  '\t',
  '\u001b[2J',
  '\u007f',
  '\u2028',
  '\ufeff',
  '\uffff',
  '2024-02-30T00:00:00Z',
  '10000-01-01T00:00:00Z',
  '+275760-09-13T00:00:00.000Z',
  '0001-01-01T00:00:00+01:00',
  '9999-12-31T23:59:59-01:00',
  '00000000-0000-0000-0000-000000000000',
  'FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF',
  '+1',
  '1'.repeat(64),
  'NaN',
  'Infinity',
  '__proto__',
  'constructor',
  'null',
];

const CORE_NUMBERS: readonly string[] = ['-1', '1.5', '2147483648', '9223372036854775808', '1e999', '-1e999'];
const EXTRA_NUMBERS: readonly string[] = [
  '0',
  '-0',
  '2147483647',
  '-2147483649',
  '4294967296',
  '9007199254740993',
  '9223372036854775807',
  '-9223372036854775809',
  '1e20',
  '1e-999',
];

const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

const CORE_SHAPES: readonly string[] = ['null', 'true', '[]', '{}', nested(40), '{"__proto__":{"polluted":true}}'];
const EXTRA_SHAPES: readonly string[] = [
  'false',
  '[null]',
  '["a",1,null]',
  '{"a":{"b":{"c":1}}}',
  '{"constructor":{"prototype":{"polluted":true}}}',
  '{"toString":"x","hasOwnProperty":1}',
];

/** Raw query-string or path text, sent as is: bad percent-encoding and encoded NUL, bidi and overlong bytes. */
const CORE_RAW_URL: readonly string[] = ['%00', '%FF', '%ED%A0%80', '%', '%E2%80%AE', '%25_%25', '%5C', 'NaN'];
const EXTRA_RAW_URL: readonly string[] = [
  '%C0%80',
  '%F4%90%80%80',
  '%zz',
  '%0A',
  '+',
  '%2B14155552671',
  '..',
  '%2F..%2F',
];

/** `count` items of `items`, drawn with the seeded generator. */
const draw = <T>(items: readonly T[], count: number): T[] => Array.from({ length: count }, () => pick(items));

/** Percent-encodes text as UTF-8, and a lone surrogate as the three bytes no decoder accepts. */
function encodeText(text: string): string {
  let out = '';
  for (const char of text) {
    const unit = char.charCodeAt(0);
    if (char.length === 1 && unit >= 0xd800 && unit <= 0xdfff) {
      out += [0xe0 | (unit >> 12), 0x80 | ((unit >> 6) & 0x3f), 0x80 | (unit & 0x3f)]
        .map((b) => `%${b.toString(16).toUpperCase()}`)
        .join('');
    } else out += encodeURIComponent(char);
  }
  return out;
}

/** Hostile values for one JSON field, as JSON text (so 1e999 and 2^63 arrive exactly as written). */
function hostileJsonValues(): string[] {
  return [
    ...[...CORE_STRINGS, ...draw(EXTRA_STRINGS, 3), randomString(), randomString()].map((s) => JSON.stringify(s)),
    ...CORE_NUMBERS,
    ...draw(EXTRA_NUMBERS, 2),
    randomNumberText(),
    ...CORE_SHAPES,
    ...draw(EXTRA_SHAPES, 1),
  ];
}

/** Hostile values for one query or path parameter, already encoded for the URL. */
function hostileUrlValues(): string[] {
  return [
    ...[...CORE_STRINGS, ...draw(EXTRA_STRINGS, 3), randomString(), randomString()].map(encodeText),
    ...CORE_RAW_URL,
    ...draw(EXTRA_RAW_URL, 2),
    ...[...CORE_NUMBERS, ...draw(EXTRA_NUMBERS, 2)].map(encodeText),
    randomNumberText(),
  ];
}

// ---------------------------------------------------------------------------------------------------------------
// The OpenAPI document, read as the client sees it

interface Schema {
  type?: string | string[];
  anyOf?: Schema[];
  enum?: unknown[];
  const?: unknown;
  format?: string;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  properties?: Record<string, Schema>;
  patternProperties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  minItems?: number;
  minProperties?: number;
  examples?: unknown[];
  default?: unknown;
  description?: string;
  $ref?: string;
}

interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  schema: Schema;
}

interface Operation {
  method: string;
  /** As documented, relative to /api: /v1/agents/{id}. */
  path: string;
  module: string;
  isPublic: boolean;
  pathParams: Parameter[];
  queryParams: Parameter[];
  jsonBody: Schema | null;
  csvBody: boolean;
}

interface OpenApiDocument {
  paths: Record<
    string,
    Record<
      string,
      {
        tags?: string[];
        parameters?: Parameter[];
        security?: unknown[];
        requestBody?: { content: Record<string, { schema: Schema }> };
      }
    >
  >;
  components?: { schemas?: Record<string, Schema> };
}

function operationsOf(doc: OpenApiDocument): Operation[] {
  const operations: Operation[] = [];
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const parameters = op.parameters ?? [];
      const content = op.requestBody?.content ?? {};
      operations.push({
        method: method.toUpperCase(),
        path,
        module: op.tags?.[0] ?? 'untagged',
        isPublic: Array.isArray(op.security) && op.security.length === 0,
        pathParams: parameters.filter((p) => p.in === 'path'),
        queryParams: parameters.filter((p) => p.in === 'query'),
        jsonBody: content['application/json']?.schema ?? null,
        csvBody: 'text/csv' in content,
      });
    }
  }
  return operations;
}

let components: Record<string, Schema> = {};
const resolve = (schema: Schema): Schema =>
  schema.$ref ? (components[schema.$ref.replace(/^#\/components\/schemas\//, '')] ?? {}) : schema;
const branches = (schema: Schema): Schema[] => (schema.anyOf ? schema.anyOf.map(resolve) : [resolve(schema)]);
const typeOf = (schema: Schema) => (Array.isArray(schema.type) ? schema.type[0] : schema.type);

let uniqueCounter = 0;
const PATTERN_CANDIDATES = ['US', '+14155552671', '1', 'a', 'skip', 'true'];

/** A value the schema accepts, kept minimal (required fields only), so one hostile field at a time gets through. */
function sample(schema: Schema, name = ''): unknown {
  const s = branches(schema).find((b) => typeOf(b) !== 'null') ?? resolve(schema);
  if (s.const !== undefined) return s.const;
  if (s.enum) return s.enum[0];
  if (s.default !== undefined) return s.default;
  if (s.examples?.length) return s.examples[0];
  switch (typeOf(s)) {
    case 'integer':
    case 'number':
      return Math.min(Math.max(1, s.minimum ?? 1), s.maximum ?? 1);
    case 'boolean':
      return true;
    case 'array':
      return Array.from({ length: Math.max(1, s.minItems ?? 1) }, () => sample(s.items ?? {}, name));
    case 'object': {
      const object: Record<string, unknown> = {};
      const properties = Object.entries(s.properties ?? {});
      for (const [key, value] of properties) if (s.required?.includes(key)) object[key] = sample(value, key);
      for (const [key, value] of properties) {
        if (Object.keys(object).length >= (s.minProperties ?? 0)) break;
        if (!(key in object)) object[key] = sample(value, key);
      }
      return object;
    }
    case 'string':
    default: {
      if (s.format === 'uuid') return seededUuid();
      if (s.format === 'date-time') return '2024-01-01T00:00:00Z';
      if (s.format === 'email') return `fuzz-${++uniqueCounter}@example.com`;
      if (s.pattern) {
        const pattern = new RegExp(s.pattern, 'u');
        const fit = PATTERN_CANDIDATES.find((c) => pattern.test(c));
        if (fit) return fit;
      }
      if (/phone|E\.164/i.test(`${name} ${s.description ?? ''}`)) return '+14155552671';
      return 'fuzz'.padEnd(s.minLength ?? 0, 'z');
    }
  }
}

type Key = string | number;
interface Field {
  path: Key[];
  schema: Schema;
}

/** Every field of a body schema, nested objects and array items included, three levels deep. */
function fieldsOf(schema: Schema, path: Key[] = [], depth = 0): Field[] {
  if (depth > 3) return [];
  const fields: Field[] = [];
  for (const branch of branches(schema)) {
    const children: Array<[Key, Schema]> = [
      ...Object.entries(branch.properties ?? {}),
      ...Object.values(branch.patternProperties ?? {}).map((s): [Key, Schema] => ['fuzzKey', s]),
      ...(branch.items ? [[0, branch.items] as [Key, Schema]] : []),
    ];
    for (const [key, child] of children) {
      fields.push({ path: [...path, key], schema: child }, ...fieldsOf(child, [...path, key], depth + 1));
    }
  }
  const seen = new Set<string>();
  return fields.filter((f) => !seen.has(f.path.join('/')) && seen.add(f.path.join('/')));
}

/** The branch of a schema that can hold `key` (a property name, or an array index). */
function branchHolding(schema: Schema, key: Key): Schema | null {
  return (
    branches(schema).find((b) =>
      typeof key === 'number' ? b.items : b.properties?.[key] || (key === 'fuzzKey' && b.patternProperties),
    ) ?? null
  );
}

function childSchema(branch: Schema, key: Key): Schema {
  if (typeof key === 'number') return branch.items ?? {};
  return branch.properties?.[key] ?? Object.values(branch.patternProperties ?? {})[0] ?? {};
}

/** A copy of `base` with `value` at `path`, creating valid containers on the way. */
function withValueAt(base: unknown, rootSchema: Schema, path: Key[], value: unknown): unknown {
  const root = structuredClone(base);
  let holder = root as Record<Key, unknown>;
  let schema = rootSchema;
  for (let i = 0; i < path.length - 1; i++) {
    const key = path[i]!;
    const branch = branchHolding(schema, key) ?? {};
    const next = childSchema(branch, key);
    const wanted = typeof path[i + 1] === 'number' ? 'array' : 'object';
    const current = holder[key];
    const fits =
      wanted === 'array'
        ? Array.isArray(current)
        : current !== null && typeof current === 'object' && !Array.isArray(current);
    if (!fits) {
      const container = branchHolding(next, path[i + 1]!);
      holder[key] = container ? sample(container) : wanted === 'array' ? [] : {};
    }
    holder = holder[key] as Record<Key, unknown>;
    schema = next;
  }
  holder[path[path.length - 1]!] = value;
  return root;
}

const MARKER = 'fuzz-marker-5f1c9a';
/** JSON text of `base` with the raw JSON text `raw` at `path`. */
function jsonWith(base: unknown, schema: Schema, path: Key[], raw: string): string {
  return JSON.stringify(withValueAt(base, schema, path, MARKER)).replace(JSON.stringify(MARKER), () => raw);
}

// ---------------------------------------------------------------------------------------------------------------
// Requests

interface Case {
  label: string;
  pathValues: Record<string, string>;
  query: string;
  body?: { contentType: string | null; payload: string | Buffer };
}

function urlOf(op: Operation, c: Case) {
  const path = op.path.replace(/\{(\w+)\}/g, (_, name: string) => c.pathValues[name] ?? 'missing');
  return `/api${path}${c.query ? `?${c.query}` : ''}`;
}

const queryText = (values: Record<string, string>) =>
  Object.entries(values)
    .map(([k, v]) => `${encodeText(k)}=${v}`)
    .join('&');

const CSV_SAMPLE = 'First Name,Phone\nAda,+14155552671\n';

function cases(op: Operation, realPathValues: Array<Record<string, string>>): Case[] {
  rand = mulberry32(SEED ^ [...`${op.method} ${op.path}`].reduce((h, c) => Math.imul(h, 31) + c.charCodeAt(0), 7));
  const pathBase =
    realPathValues[0] ??
    Object.fromEntries(op.pathParams.map((p) => [p.name, encodeText(String(sample(p.schema, p.name)))]));
  const queryBase: Record<string, string> = {};
  for (const p of op.queryParams) if (p.required) queryBase[p.name] = encodeText(String(sample(p.schema, p.name)));
  const jsonBase = op.jsonBody ? sample(op.jsonBody) : null;
  const baseBody: Case['body'] = op.jsonBody
    ? { contentType: 'application/json', payload: JSON.stringify(jsonBase) }
    : op.csvBody
      ? { contentType: 'text/csv', payload: CSV_SAMPLE }
      : undefined;
  const out: Case[] = [];
  const add = (label: string, change: Partial<Case>) =>
    out.push({
      label,
      pathValues: pathBase,
      query: queryText(queryBase),
      ...(baseBody ? { body: baseBody } : {}),
      ...change,
    });

  add('base', {});
  // Path parameters: real ids of this account and of another one, random ids, and hostile text.
  for (const param of op.pathParams) {
    const values = [
      ...realPathValues.map((v) => v[param.name]!).filter(Boolean),
      seededUuid(),
      seededUuid().toUpperCase(),
      ...hostileUrlValues(),
    ];
    values.push('x'.repeat(101), `${'1'.repeat(99)}`);
    for (const value of values)
      add(`path ${param.name}=${value.slice(0, 40)}`, { pathValues: { ...pathBase, [param.name]: value } });
  }
  // Query parameters, one at a time (the same schema twice, as dateFrom and dateTo, is validated the same way: the
  // second gets a seeded handful), then the query string as a whole.
  const querySchemasSeen = new Set<string>();
  for (const param of op.queryParams) {
    const { description: _, ...rules } = resolve(param.schema);
    const repeat = querySchemasSeen.has(JSON.stringify(rules));
    querySchemasSeen.add(JSON.stringify(rules));
    for (const value of repeat ? draw(hostileUrlValues(), 6) : hostileUrlValues()) {
      add(`query ${param.name}=${value.slice(0, 40)}`, { query: queryText({ ...queryBase, [param.name]: value }) });
    }
    add(`query ${param.name} twice`, { query: `${queryText(queryBase)}&${param.name}=1&${param.name}=2` });
    add(`query ${param.name}[]`, { query: `${queryText(queryBase)}&${param.name}[]=1` });
    add(`query ${param.name} without value`, { query: `${queryText(queryBase)}&${param.name}` });
  }
  const base = queryText(queryBase);
  for (const extra of [
    'unknownParam=1',
    '__proto__=1',
    'constructor=x',
    'hasOwnProperty=1',
    '%FF=1',
    '=',
    '&&&',
    `long=${'x'.repeat(200_000)}`,
  ]) {
    add(`query +${extra.slice(0, 30)}`, { query: base ? `${base}&${extra}` : extra });
  }
  // Bodies: every method that may carry one gets them, documented or not.
  if (op.method !== 'GET' && op.method !== 'HEAD') {
    const json = (label: string, payload: string | Buffer, contentType: string | null = 'application/json') =>
      add(`body ${label}`, { body: { contentType, payload } });
    if (op.jsonBody) {
      // Fields with the same schema (nine prompt parts, say) pass the same validation: the first gets every value,
      // the others a seeded handful, which keeps the run short without leaving any field out.
      const schemasSeen = new Set<string>();
      for (const field of fieldsOf(op.jsonBody)) {
        const { description: _, ...rules } = resolve(field.schema);
        const repeat = schemasSeen.has(JSON.stringify(rules));
        schemasSeen.add(JSON.stringify(rules));
        const values = repeat ? draw(hostileJsonValues(), 6) : hostileJsonValues();
        // A fresh base each time: unique values (an email) keep an earlier success from turning the rest into conflicts.
        const body = op.jsonBody;
        for (const raw of values)
          json(`${field.path.join('/')}=${raw.slice(0, 40)}`, jsonWith(sample(body), body, field.path, raw));
        const invalidUtf8 = jsonWith(sample(body), body, field.path, `"${MARKER}"`).split(MARKER);
        json(
          `${field.path.join('/')}=invalid UTF-8`,
          Buffer.concat([Buffer.from(invalidUtf8[0]!), Buffer.from([0xc3, 0x28, 0xff]), Buffer.from(invalidUtf8[1]!)]),
        );
      }
    }
    const baseText = JSON.stringify(jsonBase ?? {});
    const objectBase = jsonBase !== null && typeof jsonBase === 'object' && !Array.isArray(jsonBase);
    const extend = (extra: string) =>
      objectBase && baseText !== '{}' ? `${baseText.slice(0, -1)},${extra}}` : `{${extra}}`;
    json('empty', '');
    for (const shape of [
      'null',
      '[]',
      '{}',
      '"x"',
      '1',
      '1e999',
      'NaN',
      '{',
      '[{}]',
      `[${baseText}]`,
      `[${baseText},${baseText}]`,
    ])
      json(shape.slice(0, 40), shape);
    json('unknown field', extend('"unknownField":1'));
    json('__proto__ key', extend('"__proto__":{"polluted":true}'));
    json('constructor.prototype', extend('"constructor":{"prototype":{"polluted":true}}'));
    json('duplicate key with NUL', extend('"unknownField":"a","unknownField":"\\u0000"'));
    json('nested 33 deep', nested(33));
    json('nested 100000 deep', nested(100_000));
    json('nested object 40 deep', '{"a":'.repeat(40) + '1' + '}'.repeat(40));
    json('900 kB string', extend(`"unknownField":"${'x'.repeat(900_000)}"`));
    json('over the body limit', extend(`"unknownField":"${'x'.repeat(1_100_000)}"`));
    json('invalid UTF-8', Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]));
    json('UTF-16 charset', baseText, 'application/json; charset=utf-16');
    json('text/plain', baseText, 'text/plain');
    json('no content type', baseText, null);
    if (op.csvBody) json('CSV labelled as JSON', CSV_SAMPLE);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// The run

let t: TestApp;
let owner: SignedUp;
let other: SignedUp;
let operations: Operation[] = [];
/** Path parameter values that exist: first in the fuzzed account, then in another account. */
const realValues = new Map<string, Array<Record<string, string>>>();

/** The owner's session; a fuzzed sign-out ends it, and the run signs in again. */
const session = { cookie: '' };
/** True when the session had ended and a new one was started. */
async function signInAgainIfSignedOut(): Promise<boolean> {
  const me = await t.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: { cookie: session.cookie } });
  if (me.statusCode === 200) return false;
  const login = await t.app.inject({
    method: 'POST',
    url: '/api/v1/auth/login',
    payload: { email: owner.email, password: owner.password },
  });
  assert.equal(login.statusCode, 200, `sign in again: ${login.body}`);
  session.cookie = `vsid=${login.cookies.find((c) => c.name === 'vsid')!.value}`;
  return true;
}

/** What a user would create first: an agent with two versions, a contact list, a DNC entry, a spare key, calls. */
async function seedAccount(user: SignedUp) {
  const send = async (method: 'POST' | 'PATCH', url: string, payload: unknown, contentType = 'application/json') => {
    const body = typeof payload === 'string' ? payload : JSON.stringify(payload);
    const response = await t.app.inject({
      method,
      url,
      headers: { cookie: user.cookie, 'content-type': contentType },
      payload: body,
    });
    assert.equal(response.statusCode, 200, `${method} ${url}: ${response.body}`);
    return response.json() as Record<string, unknown>;
  };
  const agent = await send('POST', '/api/v1/agents', { name: 'Fuzz agent', mission: 'Book a demo' });
  await send('PATCH', `/api/v1/agents/${agent.id}`, { soul: 'Calm' });
  await send(
    'POST',
    '/api/v1/contact-lists?name=Fuzz&defaultCountry=US',
    'First Name,Phone\nAda,+14155552671\nBob,+14155552672\n',
    'text/csv',
  );
  await send('POST', '/api/v1/dnc', { phone: '+14155552673', reason: 'asked' });
  await send('POST', '/api/v1/api-keys', { name: 'spare' });
  const contacts = (
    await t.app.inject({ method: 'GET', url: '/api/v1/contacts', headers: { cookie: user.cookie } })
  ).json() as { contacts: Array<{ id: string }> };
  for (const status of ['completed', 'failed'] as const) {
    await insertCall(t.infra.database.db, user.accountId, {
      status,
      agentId: agent.id as string,
      contactId: contacts.contacts[0]!.id,
    });
  }
}

/**
 * Real values for the path parameters of `op`, as `cookie` sees them: each parameter comes from the list one level
 * up (GET /v1/agents gives {id} of /v1/agents/{id}; GET /v1/agents/{id}/versions gives {version}).
 */
async function discover(op: Operation, cookie: string): Promise<Record<string, string> | null> {
  const values: Record<string, string> = {};
  const segments = op.path.split('/');
  for (const [index, segment] of segments.entries()) {
    const name = /^\{(\w+)\}$/.exec(segment)?.[1];
    if (!name) continue;
    const listPath = segments
      .slice(0, index)
      .join('/')
      .replace(/\{(\w+)\}/g, (_, n: string) => values[n]!);
    const response = await t.app.inject({ method: 'GET', url: `/api${listPath}`, headers: { cookie } });
    if (response.statusCode !== 200) return null;
    const list = Object.values(response.json() as Record<string, unknown>).find(
      (v): v is Array<Record<string, unknown>> => Array.isArray(v),
    );
    const item = list?.find((i) => i[name] !== undefined || i.id !== undefined);
    if (!item) return null;
    values[name] = encodeText(String(item[name] ?? item.id));
  }
  return values;
}

/** Columns that record use rather than change (a session's last request, a key's last use). */
const USE_COLUMNS = ['last_seen_at', 'last_used_at'];

/**
 * The state of every table: its row count and its newest row version (xmin), which any insert or update moves and
 * a rolled-back one does not. A table that records use (see USE_COLUMNS) counts rows only. One query, so it can
 * run after every write; identical before and after a refused write means nothing was written, in any account.
 */
let fingerprintQuery = '';
async function fingerprint(): Promise<string> {
  const db = t.infra.database.db;
  if (!fingerprintQuery) {
    const tables = await sql<{ name: string; tracksUse: boolean }>`
      SELECT t.table_name AS name,
             EXISTS (SELECT 1 FROM information_schema.columns c
                     WHERE c.table_schema = t.table_schema AND c.table_name = t.table_name
                       AND c.column_name IN (${sql.join(USE_COLUMNS)})) AS "tracksUse"
      FROM information_schema.tables t
      WHERE t.table_schema = 'public' AND t.table_type = 'BASE TABLE'
      ORDER BY t.table_name`.execute(db);
    assert.ok(tables.rows.length >= 10, 'the fingerprint sees the tables');
    const part = ({ name, tracksUse }: { name: string; tracksUse: boolean }) =>
      tracksUse
        ? `(SELECT '${name}=' || count(*) FROM "${name}")`
        : `(SELECT '${name}=' || count(*) || '@' || coalesce(max(xmin::text::bigint), 0) FROM "${name}")`;
    fingerprintQuery = `SELECT concat_ws(' ', ${tables.rows.map(part).join(', ')}) AS fp`;
  }
  const result = await sql<{ fp: string }>`${sql.raw(fingerprintQuery)}`.execute(db);
  return result.rows[0]!.fp;
}

/**
 * The database's transaction horizon: it moves whenever a transaction that wrote (or tried to) ends, and read-only
 * ones do not move it. Unmoved after a refused write, nothing was even attempted and the fingerprint can be skipped.
 */
async function transactionHorizon(): Promise<string> {
  const result = await sql<{
    horizon: string;
  }>`SELECT pg_snapshot_xmax(pg_current_snapshot())::text AS horizon`.execute(t.infra.database.db);
  return result.rows[0]!.horizon;
}

/** The answer to one case, or why there was none (a response cut off mid-stream, say). */
async function send(op: Operation, c: Case) {
  const headers: Record<string, string> = { cookie: session.cookie };
  if (c.body?.contentType) headers['content-type'] = c.body.contentType;
  try {
    return await t.app.inject({
      method: op.method as 'GET',
      url: urlOf(op, c),
      headers,
      ...(c.body ? { payload: c.body.payload } : {}),
    });
  } catch (error) {
    return String((error as { code?: string }).code ?? error);
  }
}

function problemWith(response: { statusCode: number; body: string }): string | null {
  if (response.statusCode >= 500) return 'a 5xx';
  if (response.statusCode < 400) return null;
  let body: { error?: unknown; message?: unknown; details?: unknown };
  try {
    body = JSON.parse(response.body);
  } catch {
    return 'a 4xx that is not JSON';
  }
  if (
    typeof body.error !== 'string' ||
    typeof body.message !== 'string' ||
    typeof body.details !== 'object' ||
    body.details === null
  ) {
    return 'a 4xx without the error body';
  }
  const known = ERROR_CODES[body.error as ErrorCode];
  if (!known) return `an unknown error code ${body.error}`;
  if (known.status !== response.statusCode)
    return `${body.error} with HTTP ${response.statusCode} instead of ${known.status}`;
  return null;
}

/** Set when the suite runs on a PostgreSQL server: the fuzz has run in the embedded pass. */
const SKIP_ON_SERVER = process.env.DATABASE_URL ? 'validation is fuzzed once, in the embedded-database pass' : false;

before(async () => {
  if (SKIP_ON_SERVER) return;
  t = await buildTestApp({
    env: {
      RATE_LIMIT_PER_MINUTE: '100000000',
      ANON_RATE_LIMIT_PER_MINUTE: '100000000',
      LOGIN_MAX_FAILURES: '100000000',
    },
  });
  owner = await signUp(t.app);
  other = await signUp(t.app);
  session.cookie = owner.cookie;
  await seedAccount(owner);
  await seedAccount(other);
  const doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json() as OpenApiDocument;
  components = doc.components?.schemas ?? {};
  operations = operationsOf(doc);
  for (const op of operations) {
    if (op.pathParams.length === 0) continue;
    const found = [await discover(op, owner.cookie), await discover(op, other.cookie)].filter(
      (v): v is Record<string, string> => v !== null,
    );
    realValues.set(`${op.method} ${op.path}`, found);
  }
});
after(() => t?.close());

test('every operation answers hostile input with a 4xx in the error body, and refused writes change nothing', {
  skip: SKIP_ON_SERVER,
}, async (context) => {
  assert.ok(operations.length >= 30, 'the OpenAPI document lists the operations');
  const modules = [...new Set(operations.map((op) => op.module))];
  // Deletions last within a module, so the other operations still find their resources.
  const order = (op: Operation) => ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].indexOf(op.method);
  for (const module of modules) {
    await context.test(module, async (moduleContext) => {
      const failures: string[] = [];
      let sent = 0;
      const started = Date.now();
      for (const op of operations.filter((o) => o.module === module).sort((a, b) => order(a) - order(b))) {
        const isWrite = op.method !== 'GET' && op.method !== 'HEAD';
        const baseline = async () => ({ horizon: await transactionHorizon(), print: await fingerprint() });
        let before = isWrite ? await baseline() : null;
        for (const c of cases(op, realValues.get(`${op.method} ${op.path}`) ?? [])) {
          let response = await send(op, c);
          // An earlier case signed the owner out: sign in again and send this one once more.
          if (
            typeof response !== 'string' &&
            response.statusCode === 401 &&
            !op.isPublic &&
            (await signInAgainIfSignedOut())
          ) {
            if (isWrite) before = await baseline();
            response = await send(op, c);
          }
          sent++;
          if (typeof response === 'string') {
            failures.push(`no complete answer (${response}): ${op.method} ${op.path} [${c.label}]`);
            continue;
          }
          const describe = () =>
            `${op.method} ${op.path} [${c.label}] -> ${response.statusCode} ${response.body.slice(0, 300)}`;
          const problem = problemWith(response);
          if (problem) failures.push(`${problem}: ${describe()}`);
          if (!isWrite) continue;
          if (response.statusCode < 400) {
            before = await baseline();
            continue;
          }
          const horizon = await transactionHorizon();
          if (horizon === before!.horizon) continue;
          if ((await fingerprint()) !== before!.print)
            failures.push(`a refused write changed the database: ${describe()}`);
          before!.horizon = horizon;
        }
      }
      // Still serving, no prototype polluted, and still signed in as the owner.
      assert.equal((await t.app.inject({ method: 'GET', url: '/api/health' })).statusCode, 200);
      assert.equal(({} as Record<string, unknown>).polluted, undefined);
      await signInAgainIfSignedOut();
      moduleContext.diagnostic(`${module}: ${sent} requests in ${Date.now() - started} ms`);
      assert.deepEqual(failures.slice(0, 25), [], `${failures.length} failures`);
    });
  }
});

test('every integer a client sends is bounded within the PostgreSQL integer range', {
  skip: SKIP_ON_SERVER,
}, async () => {
  const unbounded: string[] = [];
  const visit = (schema: Schema, where: string) => {
    const s = resolve(schema);
    if (
      typeOf(s) === 'integer' &&
      !(s.minimum !== undefined && s.maximum !== undefined && s.minimum >= -(2 ** 31) && s.maximum < 2 ** 31)
    ) {
      unbounded.push(where);
    }
    for (const b of s.anyOf ?? []) visit(b, where);
    for (const [k, v] of Object.entries(s.properties ?? {})) visit(v, `${where}/${k}`);
    for (const v of Object.values(s.patternProperties ?? {})) visit(v, `${where}/*`);
    if (s.items) visit(s.items, `${where}/items`);
  };
  for (const op of operations) {
    for (const p of [...op.pathParams, ...op.queryParams]) visit(p.schema, `${op.method} ${op.path} ${p.in}/${p.name}`);
    if (op.jsonBody) visit(op.jsonBody, `${op.method} ${op.path} body`);
  }
  assert.deepEqual(unbounded, []);
});
