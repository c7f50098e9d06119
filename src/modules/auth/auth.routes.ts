import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../../http/types.js';
import { SESSION_COOKIE } from '../../http/auth.js';
import { allow } from '../../http/access.js';
import { OkBody, responses } from '../../http/schemas.js';
import type { AuthService } from './auth.service.js';
import {
  ChangePasswordBody,
  LoginBody,
  MeBody,
  PasswordChangedBody,
  RecentSessionsQuery,
  RegisterBody,
  RevokedBody,
  SessionList,
  SessionStartedBody,
  SwitchAccountBody,
  SwitchedAccountBody,
} from './auth.schemas.js';

const tags = ['auth'];
const self = allow.account('self.manage');

function clientInfo(request: FastifyRequest) {
  return { ip: request.ip ?? null, userAgent: request.headers['user-agent']?.slice(0, 512) ?? null };
}

interface StartedSession {
  userId: string;
  accountId: string;
  session: { token: string; expiresAt: Date };
}

/**
 * Sets the session cookie and answers with who signed in. The cookie is opaque, HttpOnly and SameSite=Lax;
 * Secure whenever the service is reached over https.
 */
function signedIn(request: FastifyRequest, reply: FastifyReply, started: StartedSession, publicBaseUrl: string | null) {
  reply.setCookie(SESSION_COOKIE, started.session.token, {
    path: '/api',
    httpOnly: true,
    sameSite: 'lax',
    secure: request.protocol === 'https' || publicBaseUrl?.startsWith('https:') === true,
    expires: started.session.expiresAt,
  });
  return { userId: started.userId, accountId: started.accountId, expiresAt: started.session.expiresAt.toISOString() };
}

export function authRoutes(
  app: App,
  { auth, config }: { auth: AuthService; config: { publicBaseUrl: string | null } },
) {
  signInRoutes(app, auth, config.publicBaseUrl);
  userRoutes(app, auth);
}

/** Signing in and out: register, login, logout (the routes that set or clear the session cookie). */
function signInRoutes(app: App, auth: AuthService, publicBaseUrl: string | null) {
  app.post(
    '/auth/register',
    {
      config: { access: allow.public },
      schema: {
        operationId: 'register',
        tags,
        summary: 'Create a user and an account, and sign in',
        body: RegisterBody,
        response: responses(SessionStartedBody),
      },
    },
    async (req, reply) => signedIn(req, reply, await auth.register(req.body, clientInfo(req)), publicBaseUrl),
  );

  app.post(
    '/auth/login',
    {
      config: { access: allow.public },
      schema: {
        operationId: 'login',
        tags,
        summary: 'Sign in; sets the vsid session cookie',
        body: LoginBody,
        response: responses(SessionStartedBody),
      },
    },
    async (req, reply) => signedIn(req, reply, await auth.login(req.body, clientInfo(req)), publicBaseUrl),
  );

  app.post(
    '/auth/logout',
    {
      config: { access: self },
      schema: { operationId: 'logout', tags, summary: 'End the current session', response: responses(OkBody) },
    },
    async (req, reply) => {
      await auth.logout(req.auth);
      reply.clearCookie(SESSION_COOKIE, { path: '/api' });
      return { ok: true as const };
    },
  );
}

/** The signed-in user: who they are, their accounts, their password and their sessions. */
function userRoutes(app: App, auth: AuthService) {
  app.get(
    '/auth/me',
    {
      config: { access: self },
      schema: {
        operationId: 'getMe',
        tags,
        summary: 'The caller: user, current account and role, and every account of the user',
        response: responses(MeBody),
      },
    },
    async (req) => auth.me(req.auth),
  );

  app.post(
    '/auth/switch-account',
    {
      config: { access: self },
      schema: {
        operationId: 'switchAccount',
        tags,
        summary: 'Move the current session to another account of the user',
        body: SwitchAccountBody,
        response: responses(SwitchedAccountBody),
      },
    },
    async (req) => auth.switchAccount(req.auth, req.body.accountId),
  );

  app.post(
    '/auth/password/change',
    {
      config: { access: self },
      schema: {
        operationId: 'changePassword',
        tags,
        summary: 'Change the password; signs out every other session',
        body: ChangePasswordBody,
        response: responses(PasswordChangedBody),
      },
    },
    async (req) => auth.changePassword(req.auth, req.body),
  );

  app.get(
    '/auth/sessions/recent',
    {
      config: { access: self },
      schema: {
        operationId: 'listRecentSessions',
        tags,
        summary: "The user's recent sessions, newest first",
        querystring: RecentSessionsQuery,
        response: responses(SessionList),
      },
    },
    async (req) => auth.recentSessions(req.auth, req.query.limit),
  );

  app.post(
    '/auth/sessions/revoke-all',
    {
      config: { access: self },
      schema: {
        operationId: 'revokeAllSessions',
        tags,
        summary: 'Sign out every other session of the user',
        response: responses(RevokedBody),
      },
    },
    async (req) => auth.revokeAllSessions(req.auth),
  );
}
