import type { FastifyRequest } from 'fastify';
import { AppError } from './errors.js';
import type { MemberRole } from './permissions.js';

/** Who is calling, resolved once per request by the auth hook. Every service call takes it first. */
export interface Auth {
  accountId: string;
  userId?: string;
  apiKeyId?: string;
  sessionId?: string;
  role: MemberRole;
  isPlatformAdmin: boolean;
  /** call_token: a per-call token of the LLM proxy (see callGrant). */
  scheme: 'api_key' | 'session' | 'call_token';
  /** With a per-call token: the one agent and call it is good for. */
  callGrant?: { agentId: string; callId: string };
  /** Per-account override of the request rate limit, or null for the configured default. */
  rateLimitPerMinute: number | null;
}

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

/** Throws 403 unless the caller is signed in as a user (some actions make no sense for an API key). */
export function requireUser(auth: Auth): asserts auth is Auth & { userId: string } {
  if (!auth.userId) throw new AppError('forbidden', 'This action needs a signed-in user, not an API key');
}
