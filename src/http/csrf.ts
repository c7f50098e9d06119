/**
 * A browser sends the vsid session cookie with every request to this server, whichever site's page made it. So a
 * write signed in with that cookie must prove it came from the dashboard's own page:
 * - its `Origin`, when the browser sends one, is this server's (PUBLIC_BASE_URL's origin, or the request's own
 *   scheme and Host), and `Sec-Fetch-Site`, when sent, is `same-origin`;
 * - it carries `X-Requested-With`, a header a form cannot send, and that a page on another site can only send
 *   after a CORS preflight this server never approves.
 * A request with neither `Origin` nor `Sec-Fetch-Site` does not come from a page in a browser (every current
 * browser sends them on a cross-site write; curl with a cookie jar sends neither): it is let through. Requests
 * signed with an API key (or a call token) in the Authorization header are not affected: a browser never adds that
 * header by itself. Reads (GET, HEAD) are not affected: another site's page cannot read their answers.
 */
import type { FastifyRequest } from 'fastify';
import { AppError } from '../lib/errors.js';
import { SESSION_COOKIE } from './auth.js';

/** The header the dashboard sends with every request (any value will do). */
export const CSRF_HEADER = 'x-requested-with';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

function originOf(url: string | null): string | null {
  if (!url) return null;
  try {
    return new URL(url).origin;
  } catch {
    return null;
  }
}

function refused(reason: 'cross_origin' | 'missing_header', message: string) {
  return new AppError('forbidden', message, { reason });
}

/** An onRequest hook: refuses a cookie-signed write from a browser that did not come from our own page. */
export function refuseCrossSiteCookieWrites(config: { publicBaseUrl: string | null }) {
  const publicOrigin = originOf(config.publicBaseUrl);
  return async function checkCookieWrite(request: FastifyRequest) {
    if (SAFE_METHODS.has(request.method)) return;
    if (request.headers.authorization !== undefined) return;
    if (!request.cookies?.[SESSION_COOKIE]) return;
    const origin = request.headers.origin;
    const site = request.headers['sec-fetch-site'];
    if (origin === undefined && site === undefined) return;
    const ownOrigin = `${request.protocol}://${request.host}`.toLowerCase();
    if (
      (origin !== undefined && origin.toLowerCase() !== ownOrigin && origin !== publicOrigin) ||
      (site !== undefined && site !== 'same-origin')
    ) {
      throw refused(
        'cross_origin',
        'A change signed in with the session cookie must come from this server’s own pages: this request came from another site',
      );
    }
    if (request.headers[CSRF_HEADER] === undefined) {
      throw refused(
        'missing_header',
        'A change signed in with the session cookie from a browser must send the X-Requested-With header (the dashboard does); scripts use an API key',
      );
    }
  };
}
