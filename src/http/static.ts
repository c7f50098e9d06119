/**
 * The dashboard, served at `/` from its built bundle (web/dist/, made by `npm run build:web`; never committed).
 * - A file of the bundle is answered as it is: the hashed files under assets/ are cached for a year (their name
 *   changes with their content), everything else, index.html first, is revalidated on every use.
 * - Any other path without a file extension is a page of the app (a deep link): it gets index.html, and the app's
 *   router shows the page. A missing file with an extension is a 404.
 * - Paths under /api never reach these routes (the first segment may not be `api`): an unknown API path keeps the
 *   API's JSON 404.
 * - Without a bundle, `/` and the app's pages say how to build it; the API works as ever.
 * Text files are compressed (Brotli or gzip, as the browser accepts), once per file version, in memory.
 */
import { readFile, stat } from 'node:fs/promises';
import { extname, join, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App } from './types.js';

/** Where the build puts the bundle: web/dist/ at the repository's root (the same path from src/ and from dist/). */
export const DASHBOARD_DIR = fileURLToPath(new URL('../../web/dist/', import.meta.url));

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.ico': 'image/x-icon',
  '.webp': 'image/webp',
  '.woff2': 'font/woff2',
  '.woff': 'font/woff',
  '.txt': 'text/plain; charset=utf-8',
  '.wasm': 'application/wasm',
};
const COMPRESSIBLE = /^(text\/|application\/(json|javascript)|image\/svg)/;
const MIN_COMPRESSED_BYTES = 1024;
const IMMUTABLE = 'public, max-age=31536000, immutable';
const REVALIDATE = 'no-cache';

interface CachedFile {
  version: string;
  body: Buffer;
  type: string;
  etag: string;
  br?: Buffer;
  gzip?: Buffer;
}

export interface DashboardOptions {
  /** The built bundle; DASHBOARD_DIR unless a test says otherwise. */
  dir?: string;
  /** PUBLIC_BASE_URL: signed recording URLs point there, so the page may load media from it. */
  publicBaseUrl?: string | null;
}

/**
 * What the page may load: its own scripts and styles only (Mantine sets inline style attributes), media from itself
 * (and the public base URL, where signed recording URLs point), and it may not be framed by another site.
 */
function contentSecurityPolicy(publicBaseUrl: string | null | undefined) {
  let extra = '';
  if (publicBaseUrl) {
    try {
      extra = ` ${new URL(publicBaseUrl).origin}`;
    } catch {
      extra = '';
    }
  }
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    `media-src 'self' blob:${extra}`,
    `connect-src 'self'${extra}`,
    "font-src 'self' data:",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

const NOT_BUILT_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Parley: the dashboard is not built</title></head>
<body style="font-family: system-ui, sans-serif; max-width: 40rem; margin: 3rem auto; padding: 0 1rem; line-height: 1.5">
<h1>The dashboard is not built yet</h1>
<p>The API is running: its documentation is at <a href="/api/docs">/api/docs</a>.</p>
<p>To build the dashboard, run <code>npm run build:web</code> in Parley's directory (<code>npm install</code> and
<code>npm start</code> build it when it is missing), then reload this page.</p>
</body></html>
`;

/** The bundle-relative path of a request, or null when it tries to leave the bundle's directory. */
function relativePath(raw: string): string | null {
  if (raw.includes('\0') || raw.includes('\\') || raw.split('/').includes('..')) return null;
  return normalize(`/${raw}`).slice(1);
}

export function dashboardRoutes(app: App, options: DashboardOptions = {}) {
  const dir = options.dir ?? DASHBOARD_DIR;
  const csp = contentSecurityPolicy(options.publicBaseUrl);
  const cache = new Map<string, CachedFile>();

  /** The file at `path` in the bundle (from memory while it is unchanged), or null when there is none. */
  async function load(path: string): Promise<CachedFile | null> {
    const absolute = join(dir, path);
    if (!absolute.startsWith(dir.endsWith(sep) ? dir : dir + sep)) return null;
    const info = await stat(absolute).catch(() => null);
    if (!info?.isFile()) return null;
    const version = `${info.size}-${info.mtimeMs}`;
    const cached = cache.get(path);
    if (cached?.version === version) return cached;
    const body = await readFile(absolute);
    const file = {
      version,
      body,
      type: CONTENT_TYPES[extname(path).toLowerCase()] ?? 'application/octet-stream',
      etag: `"${info.size.toString(16)}-${Math.floor(info.mtimeMs).toString(16)}"`,
    };
    cache.set(path, file);
    return file;
  }

  function send(request: FastifyRequest, reply: FastifyReply, file: CachedFile, cacheControl: string) {
    reply.header('cache-control', cacheControl).header('etag', file.etag).header('x-content-type-options', 'nosniff');
    if (file.type.startsWith('text/html')) {
      reply
        .header('content-security-policy', csp)
        .header('x-frame-options', 'DENY')
        .header('referrer-policy', 'same-origin');
    }
    if (request.headers['if-none-match'] === file.etag) return reply.status(304).send();
    reply.type(file.type);
    if (!COMPRESSIBLE.test(file.type) || file.body.length < MIN_COMPRESSED_BYTES) return reply.send(file.body);
    reply.header('vary', 'accept-encoding');
    const accepted = String(request.headers['accept-encoding'] ?? '');
    if (/\bbr\b/.test(accepted)) {
      file.br ??= brotliCompressSync(file.body, { params: { [constants.BROTLI_PARAM_QUALITY]: 9 } });
      return reply.header('content-encoding', 'br').send(file.br);
    }
    if (/\bgzip\b/.test(accepted)) {
      file.gzip ??= gzipSync(file.body, { level: 9 });
      return reply.header('content-encoding', 'gzip').send(file.gzip);
    }
    return reply.send(file.body);
  }

  async function serve(request: FastifyRequest, reply: FastifyReply, raw: string) {
    const path = relativePath(raw);
    if (path === null) return reply.callNotFound();
    if (path !== '' && path !== 'index.html') {
      const file = await load(path);
      if (file) return send(request, reply, file, path.startsWith('assets/') ? IMMUTABLE : REVALIDATE);
      // A file that is not there (an old asset, a typo) is a 404; any other path is a page of the app.
      if (extname(path) !== '') return reply.callNotFound();
    }
    const index = await load('index.html');
    if (index) return send(request, reply, index, REVALIDATE);
    return reply.status(503).header('cache-control', REVALIDATE).type('text/html; charset=utf-8').send(NOT_BUILT_PAGE);
  }

  const schema = { hide: true };
  // The first segment may be anything but `api`: the API's paths, matched or not, stay the API's.
  const FIRST_SEGMENT = ':first(^(?!api$).+)';
  app.get('/', { schema }, (request, reply) => serve(request, reply, ''));
  app.get(`/${FIRST_SEGMENT}`, { schema }, (request, reply) =>
    serve(request, reply, (request.params as { first: string }).first),
  );
  app.get(`/${FIRST_SEGMENT}/*`, { schema }, (request, reply) => {
    const params = request.params as { first: string; '*': string };
    return serve(request, reply, `${params.first}/${params['*']}`);
  });
}
