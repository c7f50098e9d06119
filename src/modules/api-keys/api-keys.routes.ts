import type { App } from '../../http/types.js';
import { allow } from '../../http/access.js';
import { DeletedBody, IdParams, PageOnlyQuery, responses } from '../../http/schemas.js';
import type { ApiKeysService } from './api-keys.service.js';
import { ApiKeyList, CreateApiKeyBody, CreatedApiKey } from './api-keys.schemas.js';

const read = allow.account('account.read');
const write = allow.account('apiKeys.manage');
const tags = ['api-keys'];

export function apiKeysRoutes(app: App, { apiKeys }: { apiKeys: ApiKeysService }) {
  app.post(
    '/api-keys',
    {
      config: { access: write },
      schema: {
        operationId: 'createApiKey',
        tags,
        summary: 'Create an API key (the key is shown once)',
        body: CreateApiKeyBody,
        response: responses(CreatedApiKey),
      },
    },
    async (req) => apiKeys.create(req.auth, req.body),
  );
  app.get(
    '/api-keys',
    {
      config: { access: read },
      schema: {
        operationId: 'listApiKeys',
        tags,
        summary: 'List API keys, newest first (never the keys themselves)',
        querystring: PageOnlyQuery,
        response: responses(ApiKeyList),
      },
    },
    async (req) => apiKeys.list(req.auth, req.query),
  );
  app.delete(
    '/api-keys/:id',
    {
      config: { access: write },
      schema: {
        operationId: 'deleteApiKey',
        tags,
        summary: 'Delete an API key; it stops working at once',
        params: IdParams,
        response: responses(DeletedBody),
      },
    },
    async (req) => apiKeys.delete(req.auth, req.params.id),
  );
}
