/**
 * The dashboard's files and pages, served from a bundle directory made here (a stand-in for web/dist/): caching by
 * content hash, deep links, /api kept out, compression, and the page shown when nothing is built.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import Fastify from 'fastify';
import { installErrorHandling } from './errors.js';
import { dashboardRoutes } from './static.js';
import type { App } from './types.js';

const INDEX = '<!doctype html><title>Parley</title><script type="module" src="/assets/index-abc123.js"></script>';
const SCRIPT = `console.log(${JSON.stringify('x'.repeat(4000))});`;

let dir: string;
let empty: string;
let app: App;
let notBuilt: App;

async function serverFor(bundle: string) {
  const server = Fastify() as unknown as App;
  installErrorHandling(server);
  dashboardRoutes(server, { dir: bundle, publicBaseUrl: 'https://calls.example.com/base' });
  server.get('/api/v1/known', async () => ({ ok: true }));
  await server.ready();
  return server;
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'parley-dashboard-'));
  mkdirSync(join(dir, 'assets'));
  writeFileSync(join(dir, 'index.html'), INDEX);
  writeFileSync(join(dir, 'assets', 'index-abc123.js'), SCRIPT);
  writeFileSync(join(dir, 'robots.txt'), 'User-agent: *\n');
  empty = mkdtempSync(join(tmpdir(), 'parley-dashboard-empty-'));
  app = await serverFor(dir);
  notBuilt = await serverFor(empty);
});
after(async () => {
  await app.close();
  await notBuilt.close();
  rmSync(dir, { recursive: true, force: true });
  rmSync(empty, { recursive: true, force: true });
});

test('/ answers the app, revalidated on every use, with a policy that keeps other sites out', async () => {
  const root = await app.inject({ method: 'GET', url: '/' });
  assert.equal(root.statusCode, 200);
  assert.equal(root.body, INDEX);
  assert.match(String(root.headers['content-type']), /^text\/html/);
  assert.equal(root.headers['cache-control'], 'no-cache');
  assert.equal(root.headers['x-frame-options'], 'DENY');
  const csp = String(root.headers['content-security-policy']);
  assert.match(csp, /frame-ancestors 'none'/);
  assert.match(csp, /script-src 'self'(;|$)/);
  assert.match(csp, /media-src 'self' blob: https:\/\/calls\.example\.com(;|$)/, 'signed recording URLs');

  const again = await app.inject({ method: 'GET', url: '/', headers: { 'if-none-match': String(root.headers.etag) } });
  assert.equal(again.statusCode, 304);
});

test('a deep link to a page of the app answers index.html; a missing file is a 404', async () => {
  for (const url of ['/agents', '/calls/7d3c/recording', '/sign-in?next=%2Fcalls', '/agents/']) {
    const page = await app.inject({ method: 'GET', url });
    assert.equal(page.statusCode, 200, url);
    assert.equal(page.body, INDEX, url);
    assert.equal(page.headers['cache-control'], 'no-cache', url);
  }
  const missing = await app.inject({ method: 'GET', url: '/assets/index-old999.js' });
  assert.equal(missing.statusCode, 404);
  assert.equal(missing.json().error, 'not_found');
  const robots = await app.inject({ method: 'GET', url: '/robots.txt' });
  assert.equal(robots.statusCode, 200);
  assert.equal(robots.headers['cache-control'], 'no-cache', 'a file whose name does not change is revalidated');
});

test('hashed assets are cached for a year and sent compressed when the browser accepts it', async () => {
  const plain = await app.inject({ method: 'GET', url: '/assets/index-abc123.js' });
  assert.equal(plain.statusCode, 200);
  assert.equal(plain.headers['cache-control'], 'public, max-age=31536000, immutable');
  assert.match(String(plain.headers['content-type']), /^text\/javascript/);
  assert.equal(plain.body, SCRIPT);

  const gzipped = await app.inject({
    method: 'GET',
    url: '/assets/index-abc123.js',
    headers: { 'accept-encoding': 'gzip' },
  });
  assert.equal(gzipped.headers['content-encoding'], 'gzip');
  assert.equal(gzipped.headers.vary, 'accept-encoding');
  assert.equal(gunzipSync(gzipped.rawPayload).toString(), SCRIPT);
  assert.ok(gzipped.rawPayload.length < SCRIPT.length / 10);
  const brotli = await app.inject({
    method: 'GET',
    url: '/assets/index-abc123.js',
    headers: { 'accept-encoding': 'gzip, deflate, br' },
  });
  assert.equal(brotli.headers['content-encoding'], 'br');
});

test('paths under /api never get the app, and nothing outside the bundle is served', async () => {
  for (const url of ['/api', '/api/', '/api/v1/nope', '/api/v1/agents/x/y']) {
    const response = await app.inject({ method: 'GET', url });
    assert.equal(response.statusCode, 404, url);
    assert.equal(response.json().error, 'not_found', url);
  }
  assert.deepEqual((await app.inject({ method: 'GET', url: '/api/v1/known' })).json(), { ok: true });
  for (const url of ['/assets/..%2F..%2Fetc%2Fpasswd', '/%2e%2e/%2e%2e/etc/passwd', '/assets/%5c..%5cindex.html']) {
    // Refused, or (once the URL's dots are resolved) a page of the app: never a file outside the bundle.
    const response = await app.inject({ method: 'GET', url });
    assert.ok(response.statusCode === 404 || response.body === INDEX, `${url}: ${response.statusCode}`);
    assert.doesNotMatch(response.body, /root:/, url);
  }
});

test('without a bundle, the pages say how to build it and the API still answers', async () => {
  for (const url of ['/', '/agents']) {
    const page = await notBuilt.inject({ method: 'GET', url });
    assert.equal(page.statusCode, 503, url);
    assert.match(page.body, /npm run build:web/);
    assert.match(page.body, /\/api\/docs/);
  }
  assert.deepEqual((await notBuilt.inject({ method: 'GET', url: '/api/v1/known' })).json(), { ok: true });
});
