import { readFileSync } from 'node:fs';
import type { FastifyDynamicSwaggerOptions, OpenAPIV3_2 } from '@fastify/swagger';
import type { FastifySwaggerUiOptions } from '@fastify/swagger-ui';
import type { App } from './types.js';
import { ERROR_CODES } from './errors.js';
import { DocumentedErrorSchemas, ErrorBody } from './schemas.js';
import type { Access } from './access.js';
import { PERMISSIONS } from '../lib/permissions.js';

/**
 * The OpenAPI 3.1 document is generated from the route schemas, so it cannot drift from the code. The rules that
 * make it pleasant for generated clients are applied here, centrally, so a new route follows them without asking:
 * - operationId: every route names its own (`schema.operationId`): a generated client's method names are kept stable.
 * - named schemas: any schema with a `title` becomes `components.schemas.<title>` and is used by `$ref`.
 * - descriptions: every operation gets one (its own, or its summary) plus who may call it; parameters without one
 *   get a default from PARAMETER_DESCRIPTIONS or their name; a 200 without one gets the schema's description.
 * - yes/no query flags are documented as the string "true" or "false", as the calls filter hasRecording is.
 * - CSV request bodies are documented as `type: string`, with an example; an enum of strings says `type: string`.
 */

const errorTable = Object.entries(ERROR_CODES)
  .map(([code, { status, meaning }]) => `| ${code} | ${status} | ${meaning} |`)
  .join('\n');

/** Every tag an operation may use, each with a description. Tags declared here but used by no route are dropped. */
export const API_TAGS: Array<{ name: string; description: string }> = [
  { name: 'system', description: 'Health, public configuration and service status. No credentials needed.' },
  { name: 'auth', description: 'Users, sign-in and sessions. Signing in sets the `vsid` session cookie.' },
  { name: 'api-keys', description: 'API keys of the account. A key is shown once, when it is created.' },
  { name: 'agents', description: 'AI phone agents: their settings, prompt parts and saved prompt versions.' },
  { name: 'agent templates', description: 'Ready-made agents to start from, and the wizard that drafts one.' },
  { name: 'voices', description: 'Voices and live models an agent can use.' },
  { name: 'knowledge', description: 'Knowledge bases: reference material an agent looks up during a call.' },
  { name: 'llm proxy', description: "Chat completions through an agent's configured model." },
  { name: 'calls', description: 'Calls with their transcripts, costs, recordings and events; placing a call.' },
  { name: 'campaigns', description: 'Outbound campaigns: an agent calling a contact list on a schedule.' },
  { name: 'contacts', description: 'Contacts, contact lists imported from CSV, and the CSV export.' },
  { name: 'crm', description: 'Contacts as a CRM: creating, merging and finding duplicates.' },
  { name: 'dnc', description: "The account's do-not-call list: numbers that are never dialled." },
  { name: 'phone numbers', description: 'Numbers to call from, inbound routing to agents, and number reputation.' },
  { name: 'disposition codes', description: 'The outcomes a call can be marked with.' },
  { name: 'webhooks', description: 'Webhook endpoints: signed HTTP notifications of what happens in the account.' },
  { name: 'audit', description: 'The audit log: who changed what in the account.' },
  { name: 'admin', description: 'Platform administration: accounts and users across the platform.' },
  { name: 'admin: calls', description: 'Platform administration: calls across every account.' },
  {
    name: 'admin: catalog',
    description: 'Platform administration: the model catalog, telephony rates and the platform fee.',
  },
  { name: 'voice provider', description: 'Signed callbacks from the voice provider; not for API clients.' },
];

/** Descriptions of parameters that say nothing themselves, by location and name. */
const PARAMETER_DESCRIPTIONS: Record<string, string> = {
  'query limit': 'Page size: at most this many items (1 to 500).',
  'query offset': 'How many items to skip before the page starts.',
  'query q': 'Free-text search.',
  'query status': 'Only items with this status.',
  'query type': 'Only items of this type.',
  'query category': 'Only items in this category.',
  'query active': 'true: only active items; false: only inactive ones.',
  'query callId': 'Only items of this call.',
  'path version': 'The version number, from 1.',
};

/** Who may call an operation, in words, from the access the route declares. */
function accessSentence(access: Access | undefined): string | undefined {
  switch (access?.kind) {
    case 'public':
      return 'No credentials needed.';
    case 'account': {
      const { minimum } = PERMISSIONS[access.action];
      return `Needs an API key, or a session whose role in the account is ${minimum} or above (permission \`${access.action}\`).`;
    }
    case 'platformAdmin':
      return 'Needs the session of a platform administrator; API keys are refused.';
    case 'provider':
      return `Called by the ${access.provider} provider; the request is verified by its signature, not by credentials.`;
    default:
      return undefined;
  }
}

type JsonObject = Record<string, unknown>;
const isObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

interface ObjectSchema {
  type?: string;
  properties?: Record<string, JsonObject>;
  required?: string[];
}

/** A yes/no flag in a query string is the text "true" or "false"; documented so in every route. */
const QUERY_FLAG = { type: 'string', enum: ['true', 'false'] };

/**
 * Query and path parameters as documented: a default makes a parameter optional to the client (though it is
 * present in the typed request); a yes/no flag is the string "true" or "false"; a parameter without a description
 * gets the default for its name.
 */
function documentParameters(schema: ObjectSchema, location: 'query' | 'path', path: string): ObjectSchema {
  const properties: Record<string, JsonObject> = {};
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    let documented: JsonObject = { ...property };
    if (location === 'query' && documented.type === 'boolean') {
      const { type: _boolean, default: fallback, ...rest } = documented;
      documented = { ...rest, ...QUERY_FLAG, ...(fallback === undefined ? {} : { default: String(fallback) }) };
    }
    if (typeof documented.description !== 'string') {
      const description =
        PARAMETER_DESCRIPTIONS[`${location} ${name}`] ?? defaultParameterDescription(location, name, path);
      if (description) documented.description = description;
    }
    properties[name] = documented;
  }
  const required = (schema.required ?? []).filter((name) => properties[name]?.default === undefined);
  return { ...schema, properties, required };
}

const SINGULAR_EXCEPTIONS = new Set(['status', 'news', 'bus', 'alias']);
function singular(word: string): string {
  if (SINGULAR_EXCEPTIONS.has(word) || word.endsWith('ss') || word.endsWith('us')) return word;
  if (word.endsWith('ies')) return `${word.slice(0, -3)}y`;
  if (word.endsWith('s')) return word.slice(0, -1);
  return word;
}
const wordsOf = (segment: string) =>
  segment
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w.toLowerCase());

function defaultParameterDescription(location: 'query' | 'path', name: string, path: string): string | undefined {
  if (location === 'path' && name === 'id') {
    const segments = path.split('/');
    const owner = segments[segments.indexOf('{id}') - 1];
    return owner ? `The id of the ${wordsOf(owner).map(singular).join(' ')}.` : undefined;
  }
  const referenced = /^(.+)Id$/.exec(name)?.[1];
  const words = referenced?.replace(/[A-Z]/g, (c) => ` ${c.toLowerCase()}`);
  if (location === 'query' && words) return `Only items of this ${words}.`;
  if (location === 'path' && words) return `The id of the ${words}.`;
  return undefined;
}

/** Request bodies in these media types are text (streamed), whatever the runtime schema says. */
const TEXT_BODY_EXAMPLES: Record<string, string> = {
  'text/csv': 'phone,first_name,last_name,email\n+14155550123,Ada,Lovelace,ada@example.com\n',
  'application/csv': 'phone,first_name,last_name,email\n+14155550123,Ada,Lovelace,ada@example.com\n',
  'application/vnd.ms-excel': 'phone,first_name,last_name,email\n+14155550123,Ada,Lovelace,ada@example.com\n',
};

function documentBody(body: unknown): unknown {
  if (!isObject(body) || !isObject(body.content)) return body;
  const content: JsonObject = {};
  for (const [mediaType, entry] of Object.entries(body.content)) {
    const example = TEXT_BODY_EXAMPLES[mediaType];
    if (example !== undefined && isObject(entry) && isObject(entry.schema)) {
      const schema = entry.schema;
      content[mediaType] = { ...entry, schema: { ...schema, type: 'string', examples: schema.examples ?? [example] } };
    } else content[mediaType] = entry;
  }
  return { ...body, content };
}

function routeMethod(method: string | string[]): string {
  return [method].flat().find((m) => m !== 'HEAD') ?? 'GET';
}

/** Response headers documented per operation (the runtime schema has no place for them). */
const RESPONSE_HEADERS: Record<string, Record<string, JsonObject>> = {};
const sessionCookie = {
  description:
    'The session cookie: `vsid=<token>; Path=/api; Expires=<expiresAt>; HttpOnly; SameSite=Lax`, and `Secure` over HTTPS. Send it back as the `vsid` cookie.',
  schema: {
    type: 'string',
    examples: ['vsid=7Qh1c0m9Xn4; Path=/api; Expires=Mon, 30 Nov 2026 12:00:00 GMT; HttpOnly; SameSite=Lax'],
  },
};
for (const operationId of ['register', 'login', 'switchAccount'])
  RESPONSE_HEADERS[operationId] = { 'Set-Cookie': sessionCookie };
RESPONSE_HEADERS.logout = {
  'Set-Cookie': {
    description: 'Clears the session cookie.',
    schema: { type: 'string', examples: ['vsid=; Path=/api; Expires=Thu, 01 Jan 1970 00:00:00 GMT'] },
  },
};

export class OpenApiNamingError extends Error {}

/**
 * Moves every schema with a `title` into components.schemas under that name and leaves a `$ref` in its place.
 * Two different schemas with one title are a mistake, reported rather than silently merged.
 */
function hoistNamedSchemas(doc: JsonObject) {
  const components = (doc.components ??= {}) as JsonObject;
  const schemas = (components.schemas ??= {}) as Record<string, JsonObject>;
  const named = new Map<string, string>();
  const SKIP = new Set(['example', 'examples', 'default', 'const', 'enum']);
  const visit = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(visit);
    if (!isObject(node)) return node;
    const out: JsonObject = {};
    for (const [key, value] of Object.entries(node)) out[key] = SKIP.has(key) ? value : visit(value);
    // An enum of strings says so: SDK generators need the type to make it an enum of their language.
    if (Array.isArray(out.enum) && !('type' in out) && out.enum.every((v) => typeof v === 'string'))
      out.type = 'string';
    if (
      typeof out.title !== 'string' ||
      !('type' in out || 'anyOf' in out || 'oneOf' in out || 'enum' in out || 'allOf' in out)
    )
      return out;
    const name = out.title;
    const { title: _title, ...schema } = out;
    // A parameter's description moves from its schema to the parameter: compare without it.
    const { description: _description, ...shape } = schema;
    const json = JSON.stringify(shape);
    const earlier = named.get(name);
    if (earlier !== undefined && earlier !== json) {
      throw new OpenApiNamingError(`Two different schemas are named ${name}; give one of them another title`);
    }
    named.set(name, json);
    if (!schemas[name] || schema.description !== undefined) schemas[name] = schema;
    return { $ref: `#/components/schemas/${name}` };
  };
  doc.paths = visit(doc.paths);
  if (doc.webhooks) doc.webhooks = visit(doc.webhooks);
}

interface Operation {
  operationId?: string;
  summary?: string;
  description?: string;
  responses?: Record<
    string,
    { description?: string; content?: Record<string, { schema?: JsonObject }>; headers?: JsonObject }
  >;
}

/** A 200 that says nothing gets the description of the schema it answers, or one built from the summary. */
function describeSuccess(doc: JsonObject, op: Operation) {
  const ok = op.responses?.['200'];
  if (!ok || (ok.description && ok.description !== 'Default Response')) return;
  const schemas = ((doc.components as JsonObject).schemas ?? {}) as Record<string, JsonObject>;
  const schema = Object.values(ok.content ?? {})[0]?.schema;
  const ref = typeof schema?.$ref === 'string' ? schemas[schema.$ref.split('/').at(-1)!] : undefined;
  const described = (ref ?? schema)?.description;
  const properties = ((ref ?? schema)?.properties ?? {}) as Record<string, JsonObject>;
  const items = Object.keys(properties).find((name) => properties[name]?.type === 'array');
  if (typeof described === 'string') ok.description = described;
  else if (items && ['total', 'limit', 'offset'].every((name) => name in properties)) {
    ok.description = `A page: \`${items}\` holds the items; \`total\` counts every match, \`limit\` and \`offset\` echo the paging.`;
  } else ok.description = `Success: ${(op.summary ?? 'done').replace(/^./, (c) => c.toLowerCase())}.`;
}

/**
 * A JSON request body or 200 body that is not a named schema is named after its operation (CreateAgentRequest,
 * ListCampaignsResponse), so SDK generators give it that name rather than an invented one.
 */
function nameBodies(
  schemas: Record<string, JsonObject>,
  op: Operation & { requestBody?: { content?: Record<string, { schema?: JsonObject }> } },
) {
  if (!op.operationId) return;
  const base = op.operationId.charAt(0).toUpperCase() + op.operationId.slice(1);
  const slots: Array<[{ schema?: JsonObject } | undefined, string]> = [
    [op.requestBody?.content?.['application/json'], `${base}Request`],
    [op.responses?.['200']?.content?.['application/json'], `${base}Response`],
  ];
  for (const [media, name] of slots) {
    const schema = media?.schema;
    if (
      !media ||
      !schema ||
      typeof schema.$ref === 'string' ||
      !('type' in schema || 'anyOf' in schema || 'oneOf' in schema)
    )
      continue;
    if (schemas[name]) throw new OpenApiNamingError(`${name} names a schema already; give the route's body a title`);
    schemas[name] = schema;
    media.schema = { $ref: `#/components/schemas/${name}` };
  }
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

function finishDocument(doc: JsonObject): JsonObject {
  hoistNamedSchemas(doc);
  const schemas = (doc.components as JsonObject).schemas as Record<string, JsonObject>;
  // The documented error body is a union by code (details typed per code); the runtime one accepts them all.
  Object.assign(schemas, structuredClone(DocumentedErrorSchemas));
  const usedTags = new Set<string>();
  for (const item of Object.values((doc.paths ?? {}) as Record<string, JsonObject>)) {
    for (const method of METHODS) {
      const op = item[method] as (Operation & { tags?: string[] }) | undefined;
      if (!op) continue;
      for (const tag of op.tags ?? []) usedTags.add(tag);
      nameBodies(schemas, op as Operation & { requestBody?: { content?: Record<string, { schema?: JsonObject }> } });
      describeSuccess(doc, op);
      const headers = op.operationId ? RESPONSE_HEADERS[op.operationId] : undefined;
      if (headers && op.responses?.['200'])
        op.responses['200'].headers = { ...op.responses['200'].headers, ...headers };
      for (const status of ['4XX', '5XX']) {
        const error = op.responses?.[status];
        if (error)
          error.description =
            status === '4XX' ? 'The request was refused; `error` says why.' : 'The service failed; `error` says why.';
      }
    }
  }
  // Webhooks (what the service sends to a subscriber) are named after their event and say what a refusal does.
  for (const [event, item] of Object.entries((doc.webhooks ?? {}) as Record<string, JsonObject>)) {
    for (const method of METHODS) {
      const op = item[method] as (Operation & { tags?: string[] }) | undefined;
      if (!op) continue;
      for (const tag of op.tags ?? []) usedTags.add(tag);
      op.operationId ??= `${event
        .split(/[^A-Za-z0-9]+/)
        .filter(Boolean)
        .map((w, i) => (i ? w.charAt(0).toUpperCase() + w.slice(1) : w))
        .join('')}Webhook`;
      op.responses ??= {};
      op.responses['4XX'] ??= { description: 'Any answer other than a 2xx fails the delivery attempt.' };
    }
  }
  const declared = new Set(API_TAGS.map((t) => t.name));
  const undeclared = [...usedTags].filter((tag) => !declared.has(tag));
  // An undeclared tag is listed without a description, which the document's lint and test catch.
  doc.tags = [...API_TAGS.filter((t) => usedTags.has(t.name)), ...undeclared.map((name) => ({ name }))];
  return doc;
}

/** What modules add to the document beyond their routes (the `webhooks` section: what the service POSTs out). */
export interface OpenApiAdditions {
  webhooks?: Record<string, OpenAPIV3_2.PathItemObject>;
}

export const openApiOptions = (additions: OpenApiAdditions = {}): FastifyDynamicSwaggerOptions => ({
  openapi: {
    openapi: '3.1.0',
    info: {
      title: 'Parley Voice Agent Service',
      version: '1.0.0',
      // As LICENSE says.
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
      description: `REST/JSON control plane for AI phone agents. Every success is HTTP 200, except a byte range of a recording (206 with Content-Range); every error is \`{ error, message, details }\`.\n\n| error | HTTP | meaning |\n|---|---|---|\n${errorTable}`,
    },
    servers: [{ url: '/api' }],
    components: {
      securitySchemes: {
        apiKey: { type: 'http', scheme: 'bearer', description: 'An API key: Authorization: Bearer va_...' },
        session: {
          type: 'apiKey',
          in: 'cookie',
          name: 'vsid',
          description: 'The browser session: the `vsid` cookie set by register, login and switch-account.',
        },
      },
    },
    security: [{ apiKey: [] }, { session: [] }],
    ...(additions.webhooks ? { webhooks: additions.webhooks } : {}),
  },
  refResolver: {
    // Name shared schemas by their $id in components.schemas instead of def-N.
    buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`),
  },
  transform: ({ schema, url, route }) => {
    // Paths are documented relative to the base URL, which ends in /api.
    const documentedUrl = url.replace(/^\/api/, '') || '/';
    const openApiPath = documentedUrl.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
    const transformed = { ...(schema as Record<string, unknown>) };
    if (transformed.hide) return { schema: transformed as typeof schema, url: documentedUrl };
    if (transformed.querystring)
      transformed.querystring = documentParameters(transformed.querystring as ObjectSchema, 'query', openApiPath);
    if (transformed.params)
      transformed.params = documentParameters(transformed.params as ObjectSchema, 'path', openApiPath);
    if (transformed.body) transformed.body = documentBody(transformed.body);
    const method = routeMethod(route.method);
    // Each route names its operation: a generated client's method names are part of the contract.
    if (typeof transformed.operationId !== 'string')
      throw new Error(`${method} ${openApiPath} has no schema.operationId: name its operation on the route`);
    const access = (route.config as { access?: Access } | undefined)?.access;
    const summary = typeof transformed.summary === 'string' ? transformed.summary : undefined;
    const description =
      typeof transformed.description === 'string' ? transformed.description : summary && `${summary}.`;
    transformed.description = [description, accessSentence(access)].filter(Boolean).join('\n\n');
    if (access?.kind === 'public' || access?.kind === 'provider') transformed.security = [];
    // Platform administration takes a signed-in user with the platform-admin flag; API keys never have it.
    if (access?.kind === 'platformAdmin') transformed.security = [{ session: [] }];
    return { schema: transformed as typeof schema, url: documentedUrl };
  },
  transformObject: (document) =>
    finishDocument(('openapiObject' in document ? document.openapiObject : document.swaggerObject) as JsonObject),
});

/** The product's logo, shown on the docs page and as its icon. */
export const PRODUCT_LOGO_SVG = readFileSync(new URL('./docs/parley-logo.svg', import.meta.url));

/** The interactive docs at /api/docs: the product's name, logo and icon, offline (everything is served locally). */
export const docsUiOptions: FastifySwaggerUiOptions = {
  routePrefix: '/api/docs',
  uiConfig: { url: '/api/v1/openapi.json', deepLinking: true, displayOperationId: true, tryItOutEnabled: false },
  logo: { type: 'image/svg+xml', content: PRODUCT_LOGO_SVG, href: '/api/docs', target: '_self' },
  theme: {
    title: 'Parley API',
    favicon: [{ filename: 'parley.svg', rel: 'icon', type: 'image/svg+xml', sizes: 'any', content: PRODUCT_LOGO_SVG }],
    css: [
      {
        filename: 'parley.css',
        // The top bar's URL box loads other documents; this page documents one API.
        content:
          '.swagger-ui .topbar { background-color: #1f1a3d; } .swagger-ui .topbar .download-url-wrapper { display: none; }',
      },
    ],
  },
};

export function registerSharedSchemas(app: App) {
  app.addSchema(ErrorBody);
}
