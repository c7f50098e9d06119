import { randomUUID } from 'node:crypto';
import Fastify from 'fastify';
import cookie from '@fastify/cookie';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import {
  AppError,
  clientErrorHandler,
  frameworkErrorHandler,
  installErrorHandling,
  MAX_HEADER_BYTES,
  MAX_PATH_PARAM_LENGTH,
} from './http/errors.js';
import { resolveAuth, type Auth } from './http/auth.js';
import { enforceRateLimit } from './http/rate-limit.js';
import { checkRequestText, createValidatorCompiler, registerJsonBodyParser } from './http/validation.js';
import { registerCsvBodyParser } from './http/csv-body.js';
import { openApiOptions, registerSharedSchemas } from './http/openapi.js';
import type { App } from './http/types.js';
import type { Config } from './config.js';
import { createServices, type CoreDeps, type Services } from './services.js';
import { authRoutes } from './modules/auth/auth.routes.js';
import { apiKeysRoutes } from './modules/api-keys/api-keys.routes.js';
import { healthRoutes, systemRoutes } from './modules/system/system.routes.js';
import { agentsRoutes } from './modules/agents/agents.routes.js';
import { callsRoutes } from './modules/calls/calls.routes.js';
import { contactsRoutes } from './modules/contacts/contacts.routes.js';
import { dncRoutes } from './modules/dnc/dnc.routes.js';

/** Every /api/v1 module, in one list: adding a module is one line here and one in services.ts. */
const v1Modules: Array<(app: App, services: Services) => void> = [
  systemRoutes,
  authRoutes,
  apiKeysRoutes,
  agentsRoutes,
  callsRoutes,
  contactsRoutes,
  dncRoutes,
];

/** Viewers may read everything in their account but change nothing beyond their own sign-in. */
function isReadOnlyViolation(auth: Auth, method: string, url: string) {
  return auth.role === 'viewer' && method !== 'GET' && method !== 'HEAD' && !url.startsWith('/api/v1/auth/');
}

/**
 * Fastify 5 takes a bare hop count as "trust nothing"; a function keeps the count's usual meaning: the socket peer
 * and the n-1 hops before it are proxies, and the address they were given is the client.
 */
function trustProxyOption(trust: Config['trustProxy']) {
  return typeof trust === 'number' ? (_address: string, hop: number) => hop < trust : trust;
}

export interface BuildAppOptions extends CoreDeps {
  logger?: boolean | object;
}

export async function buildApp(options: BuildAppOptions) {
  const { config } = options;
  const app = Fastify({
    logger: options.logger ?? {
      level: config.logLevel,
      redact: ['req.headers.authorization', 'req.headers.cookie', 'res.headers["set-cookie"]'],
    },
    bodyLimit: config.jsonBodyLimitBytes,
    trustProxy: trustProxyOption(config.trustProxy),
    genReqId: () => randomUUID(),
    http: { maxHeaderSize: MAX_HEADER_BYTES },
    routerOptions: { maxParamLength: MAX_PATH_PARAM_LENGTH },
    frameworkErrors: frameworkErrorHandler,
    clientErrorHandler,
  }).withTypeProvider<TypeBoxTypeProvider>() as unknown as App;
  app.setValidatorCompiler(createValidatorCompiler());

  const services = createServices(options);

  installErrorHandling(app);
  // Bodies are JSON, or CSV on the routes that say so; plain text is not a format any route takes.
  app.removeContentTypeParser('text/plain');
  registerJsonBodyParser(app);
  registerCsvBodyParser(app);
  app.addHook('preValidation', checkRequestText);
  registerSharedSchemas(app);
  await app.register(cookie);
  await app.register(swagger, openApiOptions);
  await app.register(swaggerUi, { routePrefix: '/api/docs', uiConfig: { url: '/api/v1/openapi.json' } });

  const authenticators = { apiKey: services.apiKeys.authenticate, session: services.auth.authenticateSession };
  app.addHook('onRequest', async (request, reply) => {
    reply.header('X-Request-Id', request.id);
    // Only the versioned API is authenticated and rate limited; /api/health and /api/docs are open.
    if (!request.url.startsWith('/api/v1/')) return;
    const isPublic = request.routeOptions.config?.public === true || request.routeOptions.url === undefined;
    // On public routes credentials are optional: a stale cookie must not stop anyone from signing in again.
    const auth = await resolveAuth(request, authenticators).catch((error: unknown) => {
      if (isPublic) return null;
      throw error;
    });
    if (auth) request.auth = auth;
    else if (!isPublic) throw new AppError('unauthorized', 'Send an API key (Authorization: Bearer va_...) or sign in');
    if (auth && isReadOnlyViolation(auth, request.method, request.url)) {
      throw new AppError('forbidden', 'The viewer role is read-only');
    }
    await enforceRateLimit(request, reply, {
      store: services.counters,
      perMinute: config.rateLimitPerMinute,
      anonymousPerMinute: config.anonymousRateLimitPerMinute,
    });
  });

  await app.register(
    async (api) => {
      healthRoutes(api as App, services);
      api.get('/v1/openapi.json', { config: { public: true }, schema: { hide: true } }, async () => app.swagger());
      await api.register(async (v1) => {
        for (const register of v1Modules) register(v1 as App, services);
      }, { prefix: '/v1' });
    },
    { prefix: '/api' },
  );

  return { app, services };
}
