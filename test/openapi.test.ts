import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { buildTestApp, signUp, call, type TestApp } from './helpers.js';
import { ERROR_CODES } from '../src/lib/errors.js';
import { PRODUCT_LOGO_SVG } from '../src/http/openapi.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- the document is walked as plain JSON */
type Json = Record<string, any>;

let t: TestApp;
let doc: Json;
before(async () => {
  t = await buildTestApp();
  const response = await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' });
  assert.equal(response.statusCode, 200);
  doc = response.json();
});
after(() => t.close());

const METHODS = ['get', 'put', 'post', 'delete', 'patch'];
function operations(): Array<{ where: string; path: string; method: string; op: Json }> {
  return Object.entries<Json>(doc.paths).flatMap(([path, item]) =>
    METHODS.filter((m) => item[m]).map((method) => ({
      where: `${method.toUpperCase()} ${path}`,
      path,
      method,
      op: item[method],
    })),
  );
}
const component = (ref: string) => doc.components.schemas[ref.replace('#/components/schemas/', '')];

test('openapi.json is OpenAPI 3.1, version 1.0.0, Apache-2.0 as LICENSE, public, with both security schemes', async () => {
  assert.equal(doc.openapi, '3.1.0');
  assert.equal(doc.info.version, '1.0.0');
  assert.match(readFileSync(new URL('../LICENSE', import.meta.url), 'utf8'), /^\s*Apache License\s+Version 2\.0,/);
  assert.deepEqual(doc.info.license, { name: 'Apache-2.0', identifier: 'Apache-2.0' });
  assert.deepEqual(doc.servers, [{ url: '/api' }]);
  assert.deepEqual(Object.keys(doc.components.securitySchemes).sort(), ['apiKey', 'session']);
  assert.deepEqual(
    {
      type: doc.components.securitySchemes.session.type,
      in: doc.components.securitySchemes.session.in,
      name: doc.components.securitySchemes.session.name,
    },
    { type: 'apiKey', in: 'cookie', name: 'vsid' },
  );
  for (const code of Object.keys(ERROR_CODES)) assert.ok(doc.info.description.includes(`| ${code} |`), code);
});

/** The lint engine of @redocly/cli (the one its `redocly lint` runs), called in process to stay fast. */
async function redoclyCore(): Promise<typeof import('@redocly/openapi-core')> {
  const fromCli = createRequire(createRequire(import.meta.url).resolve('@redocly/cli/package.json'));
  return import(pathToFileURL(fromCli.resolve('@redocly/openapi-core')).href);
}

test("Redocly's recommended-strict ruleset finds nothing", async () => {
  const { createConfig, lintFromString } = await redoclyCore();
  const config = await createConfig({ extends: ['recommended-strict'] });
  const problems = await lintFromString({ source: JSON.stringify(doc), absoluteRef: 'openapi.json', config });
  const report = problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`);
  assert.deepEqual(report, []);
});

test('every operation has a unique operationId, a summary, a description, its 200 body and the error body', () => {
  const ids = new Map<string, string>();
  const all = operations();
  const undescribed: string[] = [];
  for (const { where, path, method, op } of all) {
    assert.ok(path === '/health' || path.startsWith('/v1/'), `path relative to the /api base: ${path}`);
    assert.match(op.operationId ?? '', /^[a-z][A-Za-z0-9]*$/, `${where} has a camelCase operationId`);
    assert.equal(ids.get(op.operationId), undefined, `${where} and ${ids.get(op.operationId)} share ${op.operationId}`);
    ids.set(op.operationId, where);
    assert.ok(op.summary, `${where} has a summary`);
    assert.ok(op.description, `${where} has a description`);
    const ok = op.responses['200'];
    assert.ok(ok.description && ok.description !== 'Default Response', `${where} describes its 200`);
    const okContent = Object.values<Json>(ok.content ?? {});
    assert.ok(okContent.length > 0 && okContent.every((c) => c.schema), `${where} documents its 200 body`);
    for (const status of ['4XX', '5XX']) {
      assert.equal(
        op.responses[status]?.content?.['application/json']?.schema?.$ref,
        '#/components/schemas/ErrorBody',
        `${where} ${status}`,
      );
    }
    if (['post', 'put', 'patch'].includes(method) && !op.requestBody) {
      // Action endpoints without a body (logout, revoke-all, start/pause) are fine; a body must be documented when taken.
      assert.ok(!/register|login|api-keys$/.test(path), `${where} documents its request body`);
    }
    for (const parameter of op.parameters ?? []) {
      if (!parameter.description) undescribed.push(`${where}: ${parameter.in} parameter ${parameter.name}`);
    }
  }
  assert.deepEqual(undescribed, [], 'every parameter has a description');
  assert.ok(all.length >= 70);
  assert.deepEqual(doc.paths['/v1/auth/register'].post.security, [], 'public routes need no credentials');
});

test('operationIds are stable names a client calls', () => {
  const byRoute = Object.fromEntries(operations().map(({ where, op }) => [where, op.operationId]));
  const expected: Record<string, string> = {
    'GET /v1/calls': 'listCalls',
    'GET /v1/calls/{id}': 'getCall',
    'POST /v1/agents': 'createAgent',
    'PATCH /v1/agents/{id}': 'updateAgent',
    'GET /v1/agents/{id}/versions/{version}': 'getAgentVersion',
    'POST /v1/contact-lists': 'importContactList',
    'GET /v1/exports/contacts.csv': 'exportContacts',
    'POST /v1/crm/contacts/{id}/call': 'placeCall',
    'POST /v1/auth/login': 'login',
    'POST /v1/dnc/bulk': 'addDncEntriesInBulk',
    'DELETE /v1/api-keys/{id}': 'deleteApiKey',
  };
  for (const [where, operationId] of Object.entries(expected)) assert.equal(byRoute[where], operationId, where);
});

test('every route schema compiles (they are compiled on first use, so a broken one would fail only then)', () => {
  const compiled = t.compileSchemas();
  // Validators and serializers of every route and its HEAD twin, less those the tests above already used.
  assert.ok(compiled > 400, `${compiled} schemas compiled`);
  assert.equal(t.compileSchemas(), 0, 'each is compiled once');
});

test('every route names its own operationId, and no two are the same', async () => {
  const routes = readdirSync(new URL('../src/modules/', import.meta.url), { recursive: true, encoding: 'utf8' })
    .filter((file) => /routes\.ts$/.test(file))
    .map((file) => readFileSync(new URL(`../src/modules/${file}`, import.meta.url), 'utf8'))
    .join('\n');
  const named = routes.match(/operationId: /g)?.length ?? 0;
  assert.ok(named >= 100, `${named} routes name their operation`);
  const ids = Object.values(doc.paths as Record<string, Record<string, { operationId: string }>>).flatMap((item) =>
    Object.values(item).map((op) => op.operationId),
  );
  assert.equal(new Set(ids).size, ids.length);
});

test('resources are named schemas, used by $ref, never copied inline', () => {
  const schemas = doc.components.schemas;
  for (const name of [
    'Agent',
    'AgentDetail',
    'Call',
    'CallDetail',
    'Contact',
    'ContactList',
    'DncEntry',
    'ApiKey',
    'ErrorBody',
    'PhoneNumber',
  ]) {
    assert.ok(schemas[name], `${name} is a component`);
  }
  assert.equal(
    doc.paths['/v1/calls'].get.responses['200'].content['application/json'].schema.$ref,
    '#/components/schemas/CallPage',
  );
  assert.equal(schemas.CallPage.properties.calls.items.$ref, '#/components/schemas/Call');
  assert.equal(
    doc.paths['/v1/agents/{id}'].get.responses['200'].content['application/json'].schema.$ref,
    '#/components/schemas/AgentDetail',
  );
  assert.equal(
    doc.paths['/v1/agents'].post.requestBody.content['application/json'].schema.$ref,
    '#/components/schemas/CreateAgentRequest',
  );
  // An object schema (two or more fields) written out in two places is a resource that needs a title.
  const seen = new Map<string, number>();
  const visit = (node: unknown, topLevel: boolean) => {
    if (Array.isArray(node)) return node.forEach((n) => visit(n, false));
    if (typeof node !== 'object' || node === null) return;
    const schema = node as Json;
    if (!topLevel && schema.type === 'object' && Object.keys(schema.properties ?? {}).length >= 2) {
      const key = JSON.stringify(schema);
      seen.set(key, (seen.get(key) ?? 0) + 1);
    }
    for (const [key, value] of Object.entries(schema)) if (!['example', 'examples'].includes(key)) visit(value, false);
  };
  visit(doc.paths, false);
  for (const schema of Object.values(schemas)) visit(schema, true);
  const copies = [...seen].filter(([, count]) => count > 1).map(([json]) => json.slice(0, 160));
  assert.deepEqual(copies, [], 'inline copies of one object schema');
});

test('webhooks sections added to the document get names and a refusal answer', async () => {
  const { openApiOptions } = await import('../src/http/openapi.js');
  const webhook = {
    post: { summary: 'call.completed', tags: ['webhooks'], responses: { '200': { description: 'Acknowledged.' } } },
  };
  const finished = openApiOptions().transformObject!({
    openapiObject: {
      openapi: '3.1.0',
      info: { title: 't', version: '1' },
      paths: {},
      components: { schemas: {} },
      webhooks: { 'call.completed': webhook },
    },
  }) as Json;
  assert.equal(finished.webhooks['call.completed'].post.operationId, 'callCompletedWebhook');
  assert.ok(finished.webhooks['call.completed'].post.responses['4XX'].description);
  assert.equal((webhook.post as Json).operationId, undefined, 'the options are not changed');
  assert.ok(finished.tags.some((tag: Json) => tag.name === 'webhooks' && tag.description));
});

test('every operation has a tag, and every tag in use is declared, with a description', () => {
  const declared = new Map<string, string | undefined>(doc.tags.map((tag: Json) => [tag.name, tag.description]));
  const webhooks = Object.entries<Json>(doc.webhooks ?? {}).map(([name, item]) => ({
    where: `webhook ${name}`,
    op: item.post,
  }));
  assert.ok(webhooks.length > 0, 'the webhook operations are checked too');
  for (const { where, op } of [...operations(), ...webhooks]) {
    assert.ok(Array.isArray(op.tags) && op.tags.length > 0, `${where} has a tag`);
    for (const tag of op.tags)
      assert.ok(declared.get(tag), `${where}: tag "${tag}" is declared with a description (API_TAGS)`);
  }
});

test('a yes/no query flag is the string "true" or "false" everywhere', async () => {
  const flags: string[] = [];
  for (const { where, op } of operations()) {
    for (const parameter of (op.parameters ?? []).filter((p: Json) => p.in === 'query')) {
      const schema = parameter.schema.$ref ? component(parameter.schema.$ref) : parameter.schema;
      assert.notEqual(schema.type, 'boolean', `${where} ${parameter.name}`);
      if (JSON.stringify(schema.enum) === '["true","false"]') flags.push(`${where} ${parameter.name}`);
    }
  }
  assert.ok(flags.includes('GET /v1/calls hasRecording'));
  assert.ok(flags.includes('GET /v1/contacts dnc'));
  // On the wire both are accepted as documented.
  const owner = await signUp(t.app);
  assert.equal((await call(owner, 'GET', '/contacts?dnc=true')).statusCode, 200);
  assert.equal((await call(owner, 'GET', '/calls?hasRecording=true')).statusCode, 200);
  assert.equal((await call(owner, 'GET', '/contacts?dnc=yes')).statusCode, 400);
});

test('CSV bodies are text with an example; the export answers text/csv', () => {
  const csvBody = doc.paths['/v1/contact-lists'].post.requestBody.content['text/csv'];
  assert.equal(csvBody.schema.type, 'string');
  assert.match(csvBody.example, /^phone,/);
  assert.equal(doc.paths['/v1/dnc/bulk'].post.requestBody.content['text/csv'].schema.type, 'string');
  const exported = doc.paths['/v1/exports/contacts.csv'].get.responses['200'].content;
  assert.deepEqual(Object.keys(exported), ['text/csv']);
  assert.equal(exported['text/csv'].schema.type, 'string');
});

test('register, login and switch-account document the session cookie they set', () => {
  for (const path of ['/v1/auth/register', '/v1/auth/login', '/v1/auth/switch-account']) {
    const header = doc.paths[path].post.responses['200'].headers?.['Set-Cookie'];
    assert.match(header?.description ?? '', /vsid/, path);
  }
});

test('the error body is typed per code, and real errors match it', async () => {
  const schemas = doc.components.schemas;
  const variants = schemas.ErrorBody.oneOf.map((s: Json) => component(s.$ref));
  const codes = variants.flatMap((v: Json) => v.properties.error.enum ?? [v.properties.error.const]);
  assert.deepEqual(codes.sort(), Object.keys(ERROR_CODES).sort());
  assert.equal(schemas.ValidationFailedError.properties.details.properties.fields.type, 'array');
  assert.equal(schemas.RateLimitedError.properties.details.properties.retryAfterSec.type, 'integer');
  assert.equal(schemas.InvalidCsvError.properties.details.properties.line.type, 'integer');

  const ajv = new Ajv({ strict: false });
  const validate = ajv.compile({ ...doc, $ref: '#/components/schemas/ErrorBody' });
  const owner = await signUp(t.app);
  const invalid = await call(owner, 'GET', '/calls?status=bogus');
  assert.ok(validate(invalid.json()), JSON.stringify(validate.errors));
  const csv = await t.app.inject({
    method: 'POST',
    url: '/api/v1/contact-lists?name=Broken',
    headers: { authorization: `Bearer ${owner.apiKey}`, 'content-type': 'text/csv' },
    payload: 'phone,name\n"+14155550123,Ada\n',
  });
  assert.equal(csv.json().error, 'invalid_csv');
  assert.ok(validate(csv.json()), JSON.stringify(validate.errors));
});

test('the docs page at /api/docs shows Parley, with its logo, without credentials', async () => {
  const page = await t.app.inject({ method: 'GET', url: '/api/docs/' });
  assert.equal(page.statusCode, 200);
  assert.match(page.headers['content-type'] as string, /text\/html/);
  assert.match(page.body, /<title>Parley API<\/title>/);
  assert.match(page.body, /parley\.svg/, 'the icon is the logo');
  const initializer = await t.app.inject({ method: 'GET', url: '/api/docs/static/swagger-initializer.js' });
  assert.ok(initializer.body.includes(Buffer.from(PRODUCT_LOGO_SVG).toString('base64')), 'the top bar shows the logo');
  assert.match(PRODUCT_LOGO_SVG.toString(), /<title>Parley<\/title>/);
});

test('query parameters with defaults are documented as optional', () => {
  const params = doc.paths['/v1/agents'].get.parameters as Array<{ name: string; required?: boolean }>;
  for (const name of ['limit', 'offset']) {
    const param = params.find((p) => p.name === name)!;
    assert.ok(param, name);
    assert.notEqual(param.required, true, `${name} is optional`);
  }
});
