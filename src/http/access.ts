/**
 * Access is declared on every route, in its options: `config: { access: allow.account('agents.write') }`.
 * The onRequest hook installed in app.ts reads it from the route the router matched (`checkAccess`), so the rule
 * follows the route whatever spelling of the URL reached it.
 */
import type { FastifyRequest } from 'fastify';
import { AppError } from './errors.js';
import { roleMayTake, type Action } from '../lib/permissions.js';
import type { Auth } from './auth.js';

export type Access =
  /** Anyone; credentials are optional and a stale one is ignored. */
  | { kind: 'public' }
  /**
   * A member of the account (API key or session) whose role may take the action. With `callToken`, a per-call token
   * (Bearer pct_...) is accepted too; the route checks that it names the agent and call it acts on.
   */
  | { kind: 'account'; action: Action; callToken?: true }
  /** A signed-in user with the platform-admin flag. */
  | { kind: 'platformAdmin' }
  /** A signed callback from an outside provider; the route verifies the signature itself. */
  | { kind: 'provider'; provider: string };

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Who may call the route. Every route under /api/v1 must declare it. */
    access?: Access;
  }
}

export const allow = {
  public: { kind: 'public' } as Access,
  account: (action: Action): Access => ({ kind: 'account', action }),
  /** An account member, or the holder of a per-call token (what a voice provider gets for one call). */
  accountOrCallToken: (action: Action): Access => ({ kind: 'account', action, callToken: true }),
  platformAdmin: { kind: 'platformAdmin' } as Access,
  provider: (provider: string): Access => ({ kind: 'provider', provider }),
};

/** The access a matched route declared; unmatched requests (404) and plugin routes such as the docs have none. */
export function routeAccess(request: FastifyRequest): Access | undefined {
  return request.routeOptions.config?.access;
}

/** Throws 403 when the authenticated caller may not use a route with this access. */
export function checkAccess(access: Access, auth: Auth): void {
  if (access.kind === 'account' && !roleMayTake(auth.role, access.action)) {
    throw new AppError(
      'forbidden',
      auth.role === 'viewer'
        ? 'The viewer role is read-only'
        : `Your role (${auth.role}) may not do this (${access.action})`,
    );
  }
  if (access.kind === 'platformAdmin' && !auth.isPlatformAdmin) {
    throw new AppError('forbidden', 'This needs a platform administrator');
  }
}
