import type { FastifyRequest } from 'fastify';
import type { Auth } from '../lib/caller.js';
import { AppError } from '../lib/errors.js';

export { requireUser, type Auth } from '../lib/caller.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set on every route that is not public; public routes leave it undefined. */
    auth: Auth;
  }
}

export const SESSION_COOKIE = 'vsid';

export interface Authenticators {
  apiKey(token: string): Promise<Auth | null>;
  session(token: string): Promise<Auth | null>;
  /** A per-call token (pct_...), on the routes that accept one. */
  callToken?(token: string): Promise<Auth | null>;
}

/** Per-call tokens start with this; an API key never does. */
export const CALL_TOKEN_PREFIX = 'pct_';

function bearerToken(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (!header) return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match) throw new AppError('unauthorized', 'Authorization header must be "Bearer <API key>"');
  return match[1]!;
}

/**
 * Resolves the caller from an API key (Authorization: Bearer va_...) or the vsid session cookie.
 * Returns null when the request carries neither; throws 401 when it carries a bad one.
 */
export async function resolveAuth(request: FastifyRequest, authenticators: Authenticators): Promise<Auth | null> {
  const token = bearerToken(request);
  if (token?.startsWith(CALL_TOKEN_PREFIX) && authenticators.callToken) {
    const auth = await authenticators.callToken(token);
    if (!auth) throw new AppError('unauthorized', 'Invalid or expired call token: it ends with its call');
    return auth;
  }
  if (token) {
    const auth = await authenticators.apiKey(token);
    if (!auth) throw new AppError('unauthorized', 'Invalid or revoked API key');
    return auth;
  }
  const sessionToken = request.cookies?.[SESSION_COOKIE];
  if (sessionToken) {
    const auth = await authenticators.session(sessionToken);
    if (!auth) throw new AppError('unauthorized', 'Session expired or signed out; sign in again');
    return auth;
  }
  return null;
}
