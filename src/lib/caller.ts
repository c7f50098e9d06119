/** The caller of a service: who is calling and what they may do, resolved once per request. */
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

/** Throws 403 unless the caller is signed in as a user (some actions make no sense for an API key). */
export function requireUser(auth: Auth): asserts auth is Auth & { userId: string } {
  if (!auth.userId) throw new AppError('forbidden', 'This action needs a signed-in user, not an API key');
}
