import type { FastifyDynamicSwaggerOptions } from '@fastify/swagger';
import type { App } from './types.js';
import { ERROR_CODES } from './errors.js';
import { ErrorBody } from './schemas.js';
import type { Access } from './access.js';
import { webhookOpenApi } from '../modules/webhooks/webhooks.openapi.js';

const errorTable = Object.entries(ERROR_CODES)
  .map(([code, { status, meaning }]) => `| ${code} | ${status} | ${meaning} |`)
  .join('\n');

interface QuerySchema {
  properties?: Record<string, { default?: unknown }>;
  required?: string[];
}

// A query parameter with a default (limit, offset) is optional to the client, though required in the typed request.
function withoutRequiredDefaults(schema: QuerySchema): QuerySchema {
  if (!schema.required || !schema.properties) return schema;
  const required = schema.required.filter((name) => schema.properties![name]?.default === undefined);
  return { ...schema, required };
}

/** The OpenAPI 3.1 document is generated from the route schemas, so it cannot drift from the code. */
export const openApiOptions: FastifyDynamicSwaggerOptions = {
  openapi: {
    openapi: '3.1.0',
    info: {
      title: 'Parley Voice Agent Service',
      version: '1.0.0',
      description: `REST/JSON control plane for AI phone agents. Every success is HTTP 200; every error is \`{ error, message, details }\`.\n\n| error | HTTP | meaning |\n|---|---|---|\n${errorTable}`,
    },
    servers: [{ url: '/api' }],
    components: {
      securitySchemes: {
        apiKey: { type: 'http', scheme: 'bearer', description: 'An API key: Authorization: Bearer va_...' },
        session: { type: 'apiKey', in: 'cookie', name: 'vsid', description: 'Browser session set by POST /v1/auth/login' },
      },
    },
    security: [{ apiKey: [] }, { session: [] }],
    // What the service POSTs to webhook endpoints, per event type.
    webhooks: webhookOpenApi,
  },
  refResolver: {
    // Name shared schemas by their $id in components.schemas instead of def-N.
    buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`),
  },
  transform: ({ schema, url, route }) => {
    // Paths are documented relative to the base URL, which ends in /api (SPEC §9).
    const documentedUrl = url.replace(/^\/api/, '') || '/';
    const transformed = { ...(schema as Record<string, unknown>) };
    if (transformed.querystring) transformed.querystring = withoutRequiredDefaults(transformed.querystring as QuerySchema);
    const access = (route.config as { access?: Access } | undefined)?.access;
    if (access?.kind === 'public' || access?.kind === 'provider') transformed.security = [];
    // Platform administration takes a signed-in user with the platform-admin flag; API keys never have it.
    if (access?.kind === 'platformAdmin') transformed.security = [{ session: [] }];
    return { schema: transformed as typeof schema, url: documentedUrl };
  },
};

export function registerSharedSchemas(app: App) {
  app.addSchema(ErrorBody);
}
