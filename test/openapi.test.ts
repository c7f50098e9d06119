import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from './helpers.js';
import { ERROR_CODES } from '../src/http/errors.js';

let t: TestApp;
before(async () => (t = await buildTestApp()));
after(() => t.close());

test('openapi.json is OpenAPI 3.1, version 1.0.0, public, with both security schemes', async () => {
  const response = await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' });
  assert.equal(response.statusCode, 200);
  const doc = response.json();
  assert.equal(doc.openapi, '3.1.0');
  assert.equal(doc.info.version, '1.0.0');
  assert.deepEqual(doc.servers, [{ url: '/api' }]);
  assert.deepEqual(Object.keys(doc.components.securitySchemes).sort(), ['apiKey', 'session']);
  assert.equal(doc.components.securitySchemes.session.name, 'vsid');
  for (const code of Object.keys(ERROR_CODES)) assert.ok(doc.info.description.includes(`| ${code} |`), code);
});

test('every operation documents its request, its 200 body and the error body', async () => {
  const doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
  const errorCodes = doc.components.schemas.ErrorBody.properties.error.anyOf.map((s: { const?: string; enum?: string[] }) => s.const ?? s.enum?.[0]);
  assert.deepEqual(errorCodes.sort(), Object.keys(ERROR_CODES).sort());
  let operations = 0;
  for (const [path, item] of Object.entries<Record<string, any>>(doc.paths)) {
    assert.ok(path === '/health' || path.startsWith('/v1/'), `path relative to the /api base: ${path}`);
    for (const [method, op] of Object.entries<any>(item)) {
      operations++;
      const where = `${method.toUpperCase()} ${path}`;
      assert.ok(op.summary, `${where} has a summary`);
      const okContent = Object.values<{ schema?: unknown }>(op.responses['200']?.content ?? {});
      assert.ok(okContent.length > 0 && okContent.every((c) => c.schema), `${where} documents its 200 body`);
      assert.equal(op.responses['4XX']?.content?.['application/json']?.schema?.$ref, '#/components/schemas/ErrorBody', `${where} 4xx`);
      assert.equal(op.responses['5XX']?.content?.['application/json']?.schema?.$ref, '#/components/schemas/ErrorBody', `${where} 5xx`);
      if (['post', 'put', 'patch'].includes(method) && !op.requestBody) {
        // Action endpoints without a body (logout, revoke-all, start/pause) are fine; a body must be documented when taken.
        assert.ok(!/register|login|api-keys$/.test(path), `${where} documents its request body`);
      }
    }
  }
  assert.ok(operations >= 13);
  const register = doc.paths['/v1/auth/register'].post;
  assert.deepEqual(register.security, [], 'public routes need no credentials');
  assert.ok(register.requestBody.content['application/json'].schema.properties.email);
});

test('interactive docs are served at /api/docs without credentials', async () => {
  const response = await t.app.inject({ method: 'GET', url: '/api/docs/' });
  assert.equal(response.statusCode, 200);
  assert.match(response.headers['content-type'] as string, /text\/html/);
  assert.match(response.body, /swagger/i);
});

test('query parameters with defaults are documented as optional', async () => {
  const doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
  const params = doc.paths['/v1/agents'].get.parameters as Array<{ name: string; required?: boolean }>;
  for (const name of ['limit', 'offset']) {
    const param = params.find((p) => p.name === name)!;
    assert.ok(param, name);
    assert.notEqual(param.required, true, `${name} is optional`);
  }
});
