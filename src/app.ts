import { randomUUID } from 'node:crypto';
import Fastify from 'fastify';
import cookie from '@fastify/cookie';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Logger } from 'pino';
import {
  AppError,
  clientErrorHandler,
  frameworkErrorHandler,
  installErrorHandling,
  MAX_HEADER_BYTES,
  MAX_PATH_PARAM_LENGTH,
} from './http/errors.js';
import { resolveAuth } from './http/auth.js';
import { allow, checkAccess, routeAccess, type Access } from './http/access.js';
import {
  countFailedAuthentication,
  createRateLimits,
  enforceHealthRateLimit,
  enforceRateLimit,
  refuseBlockedClient,
} from './http/rate-limit.js';
import { createLazySchemas } from './http/lazy-schemas.js';
import { checkRequestText, createValidatorCompiler, registerJsonBodyParser } from './http/validation.js';
import { registerCsvBodyParser } from './http/csv-body.js';
import { dashboardRoutes } from './http/static.js';
import { refuseCrossSiteCookieWrites } from './http/csrf.js';
import { RequestLogController, requestLogSerializers } from './http/request-log.js';
import { docsUiOptions, openApiOptions, registerSharedSchemas } from './http/openapi.js';
import type { App } from './http/types.js';
import type { Config } from './config.js';
import { createServices, type CoreDeps, type Services } from './services.js';
import { authRoutes } from './modules/auth/auth.routes.js';
import { apiKeysRoutes } from './modules/api-keys/api-keys.routes.js';
import { healthRoutes, systemRoutes } from './modules/system/system.routes.js';
import { agentsRoutes } from './modules/agents/agents.routes.js';
import { callsRoutes } from './modules/calls/calls.routes.js';
import { callsAdminRoutes } from './modules/calls/calls.admin-routes.js';
import { contactsRoutes } from './modules/contacts/contacts.routes.js';
import { dncRoutes } from './modules/dnc/dnc.routes.js';
import { auditRoutes } from './modules/audit/audit.routes.js';
import { numbersRoutes } from './modules/numbers/numbers.routes.js';
import { dispositionsRoutes } from './modules/dispositions/dispositions.routes.js';
import { catalogRoutes } from './modules/catalog/catalog.routes.js';
import { voicesRoutes } from './modules/voices/voices.routes.js';
import { safetyRoutes } from './modules/safety/safety.routes.js';
import { agentTemplatesRoutes } from './modules/agent-templates/agent-templates.routes.js';
import { knowledgeRoutes } from './modules/knowledge/knowledge.routes.js';
import { llmProxyRoutes } from './modules/llm-proxy/llm-proxy.routes.js';
import { webhooksRoutes } from './modules/webhooks/webhooks.routes.js';
import { campaignsRoutes } from './modules/campaigns/campaigns.routes.js';
import { webhookOpenApi } from './modules/webhooks/webhooks.openapi.js';

/**
 * Every /api/v1 module, in one list: adding a module is one line here and one in services.ts. Each routes
 * function declares the one service it uses, and gets it from here.
 */
const v1Modules: Array<(app: App, services: Services) => void> = [
  systemRoutes,
  authRoutes,
  apiKeysRoutes,
  agentsRoutes,
  auditRoutes,
  callsRoutes,
  callsAdminRoutes,
  contactsRoutes,
  dncRoutes,
  numbersRoutes,
  dispositionsRoutes,
  catalogRoutes,
  voicesRoutes,
  safetyRoutes,
  agentTemplatesRoutes,
  knowledgeRoutes,
  llmProxyRoutes,
  webhooksRoutes,
  campaignsRoutes,
];

/**
 * Fastify 5 takes a bare hop count as "trust nothing"; a function keeps the count's usual meaning: the socket peer
 * and the n-1 hops before it are proxies, and the address they were given is the client.
 */
function trustProxyOption(trust: Config['trustProxy']) {
  return typeof trust === 'number' ? (_address: string, hop: number) => hop < trust : trust;
}

export interface BuildAppOptions extends CoreDeps {
  logger?: boolean | object;
  /** The process's logger (main.ts), shared by requests and services; takes the place of `logger`. */
  loggerInstance?: Logger;
}

export async function buildApp(options: BuildAppOptions) {
  const { config } = options;
  const lazySchemas = createLazySchemas();
  const app = Fastify({
    ...(options.loggerInstance
      ? { loggerInstance: options.loggerInstance.child({}, { serializers: requestLogSerializers }) }
      : {
          logger: options.logger ?? {
            level: config.logLevel,
            redact: ['req.headers.authorization', 'req.headers.cookie', 'res.headers["set-cookie"]'],
            serializers: requestLogSerializers,
          },
        }),
    logController: new RequestLogController(config.logRequests ? 'info' : 'debug'),
    bodyLimit: config.jsonBodyLimitBytes,
    trustProxy: trustProxyOption(config.trustProxy),
    genReqId: () => randomUUID(),
    http: { maxHeaderSize: MAX_HEADER_BYTES },
    routerOptions: { maxParamLength: MAX_PATH_PARAM_LENGTH },
    frameworkErrors: frameworkErrorHandler,
    clientErrorHandler,
    schemaController: { compilersFactory: { buildSerializer: lazySchemas.serializerFactory } },
  }).withTypeProvider<TypeBoxTypeProvider>() as unknown as App;
  app.setValidatorCompiler(createValidatorCompiler(lazySchemas));

  const services = createServices(options, { log: options.loggerInstance });
  // Live calls this process runs end as server_shutdown, with their costs, before the server stops.
  app.addHook('preClose', async () => {
    await services.calls.shutdown();
  });

  installErrorHandling(app);
  // Bodies are JSON, or CSV on the routes that say so; plain text is not a format any route takes.
  app.removeContentTypeParser('text/plain');
  registerJsonBodyParser(app);
  registerCsvBodyParser(app);
  app.addHook('preValidation', checkRequestText);
  registerSharedSchemas(app);
  await app.register(cookie);
  // What the service POSTs to webhook endpoints, per event type.
  await app.register(swagger, openApiOptions({ webhooks: webhookOpenApi }));
  await app.register(swaggerUi, docsUiOptions);

  // Every versioned route says who may call it; a route that forgets is a startup error, not an open door.
  const routes: RegisteredRoute[] = [];
  app.addHook('onRoute', (route) => {
    if (!route.url.startsWith('/api/v1/')) return;
    if (!route.config?.access)
      throw new Error(`Route ${String(route.method)} ${route.url} declares no access (config.access)`);
    for (const method of [route.method].flat())
      if (method !== 'HEAD') routes.push({ method, url: route.url, access: route.config.access });
  });

  const authenticators = { apiKey: services.apiKeys.authenticate, session: services.auth.authenticateSession };
  const limits = createRateLimits({
    store: services.counters,
    perMinute: config.rateLimitPerMinute,
    anonymousPerMinute: config.anonymousRateLimitPerMinute,
    healthPerMinute: config.healthRateLimitPerMinute,
  });
  app.addHook('onRequest', async (request, reply) => {
    reply.header('X-Request-Id', request.id);
    // Decided on the route the router matched (never on the raw URL, which can be spelled many ways).
    // A request that matched nothing is answered 404, and is still counted like an anonymous one.
    const matched = request.routeOptions.url;
    if (matched === '/api/health') return enforceHealthRateLimit(request, reply, limits);
    const access = routeAccess(request) ?? (matched === undefined ? allow.public : undefined);
    if (!access) return; // the interactive docs
    const counted = matched === undefined || matched.startsWith('/api/v1/');
    if (counted) refuseBlockedClient(request, reply, limits);
    if (access.kind !== 'provider') {
      // On public routes credentials are optional: a stale cookie must not stop anyone from signing in again.
      const callToken =
        access.kind === 'account' && access.callToken ? { callToken: services.llmProxy.authenticateCallToken } : {};
      const auth = await resolveAuth(request, { ...authenticators, ...callToken }).catch(async (error: unknown) => {
        if (error instanceof AppError && error.code === 'unauthorized')
          await countFailedAuthentication(request, reply, limits);
        if (access.kind === 'public') return null;
        throw error;
      });
      if (auth) {
        request.auth = auth;
        checkAccess(access, auth);
      } else if (access.kind !== 'public') {
        await countFailedAuthentication(request, reply, limits);
        throw new AppError('unauthorized', 'Send an API key (Authorization: Bearer va_...) or sign in');
      }
    }
    if (counted) await enforceRateLimit(request, reply, limits);
  });

  // A write signed in with the session cookie must come from the dashboard's own page.
  app.addHook('onRequest', refuseCrossSiteCookieWrites(config));

  // The dashboard at `/` and its pages; /api/ is the API's.
  dashboardRoutes(app, { publicBaseUrl: config.publicBaseUrl });
  const docsLinks = { docs: '/api/docs', openapi: '/api/v1/openapi.json', health: '/api/health' };

  await app.register(
    async (api) => {
      api.get('/', { config: { access: allow.public }, schema: { hide: true } }, async () => ({
        name: 'Parley',
        ...docsLinks,
      }));
      healthRoutes(api as App, services);
      api.get('/v1/openapi.json', { config: { access: allow.public }, schema: { hide: true } }, async () =>
        app.swagger(),
      );
      await api.register(
        async (v1) => {
          for (const register of v1Modules) register(v1 as App, services);
        },
        { prefix: '/v1' },
      );
    },
    { prefix: '/api' },
  );

  // compileSchemas: every route schema not compiled yet, compiled now (a test proves they all compile).
  return { app, services, routes, compileSchemas: lazySchemas.compileAll };
}

/** A versioned route and who may call it: what the access walk in the tests goes through. */
export interface RegisteredRoute {
  method: string;
  url: string;
  access: Access;
}
