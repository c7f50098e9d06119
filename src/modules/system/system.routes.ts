import { Type } from 'typebox';
import type { App } from '../../http/types.js';
import { AppError } from '../../lib/errors.js';
import { allow } from '../../http/access.js';
import { DateTime, Nullable, responses } from '../../http/schemas.js';
import type { SystemService } from './system.service.js';

const tags = ['system'];
const ComponentStatus = Type.Union([Type.Literal('ok'), Type.Literal('down'), Type.Literal('disabled')]);

const HealthBody = Type.Object(
  {
    status: Type.Union([Type.Literal('ok'), Type.Literal('down')]),
    version: Type.String(),
    storage: Type.Union([Type.Literal('pglite'), Type.Literal('postgres')]),
    database: ComponentStatus,
    redis: ComponentStatus,
    /** Recordings and other files: the directory can be written, or the bucket answers. */
    objectStorage: Type.Union([Type.Literal('ok'), Type.Literal('down')], {
      description:
        'Where recordings go: `down` when the storage directory cannot be written or the bucket does not answer',
    }),
  },
  { title: 'Health' },
);

const PublicConfigBody = Type.Object(
  {
    version: Type.String(),
    apiBasePath: Type.String(),
    publicBaseUrl: Nullable(Type.String()),
    auth: Type.Object({
      schemes: Type.Array(Type.String()),
      apiKeyPrefix: Type.String(),
      sessionCookie: Type.String(),
      registrationOpen: Type.Boolean(),
    }),
    limits: Type.Object({
      requestsPerMinutePerKey: Type.Integer(),
      anonymousRequestsPerMinutePerIp: Type.Integer(),
      jsonBodyLimitBytes: Type.Integer(),
      csvBodyLimitBytes: Type.Integer(),
      maxPageSize: Type.Integer(),
    }),
  },
  { title: 'PublicConfig' },
);

const PublicStatusBody = Type.Object(
  {
    status: Type.Union([Type.Literal('operational'), Type.Literal('degraded'), Type.Literal('major_outage')]),
    components: Type.Array(Type.Object({ name: Type.String(), status: ComponentStatus })),
    checkedAt: DateTime,
  },
  { title: 'PublicStatus' },
);

/** /api/health sits outside /v1 (probes need no version), so it is registered on the /api scope. */
export function healthRoutes(app: App, { system }: { system: SystemService }) {
  app.get(
    '/health',
    {
      config: { access: allow.public },
      schema: {
        operationId: 'getHealth',
        tags,
        summary: 'Liveness and dependency check; 503 when the database, Redis or object storage is down',
        response: responses(HealthBody),
      },
    },
    async () => {
      const { healthy, body } = await system.health();
      if (!healthy) throw new AppError('service_unavailable', 'A dependency is down', body);
      return body;
    },
  );
}

export function systemRoutes(app: App, { system }: { system: SystemService }) {
  app.get(
    '/public-config',
    {
      config: { access: allow.public },
      schema: {
        operationId: 'getPublicConfig',
        tags,
        summary: 'What a client needs before signing in',
        response: responses(PublicConfigBody),
      },
    },
    async () => system.publicConfig(),
  );
  app.get(
    '/public/status',
    {
      config: { access: allow.public },
      schema: {
        operationId: 'getPublicStatus',
        tags,
        summary: 'Public status page data',
        response: responses(PublicStatusBody),
      },
    },
    async () => system.publicStatus(),
  );
}
