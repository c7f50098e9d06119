import type { App } from '../../http/types.js';
import { allow } from '../../http/access.js';
import { DeletedBody, IdParams, responses } from '../../http/schemas.js';
import type { DispositionsService } from './dispositions.service.js';
import {
  CreateDispositionBody,
  DispositionCode,
  DispositionCodeList,
  ListDispositionsQuery,
  UpdateDispositionBody,
} from './dispositions.schemas.js';

const read = allow.account('account.read');
const manage = allow.account('dispositions.manage');
const tags = ['disposition codes'];

export function dispositionsRoutes(app: App, { dispositions }: { dispositions: DispositionsService }) {
  app.get(
    '/disposition-codes',
    {
      config: { access: read },
      schema: {
        operationId: 'listDispositionCodes',
        tags,
        summary: "The account's disposition codes: the defaults every account starts with, and its own",
        querystring: ListDispositionsQuery,
        response: responses(DispositionCodeList),
      },
    },
    async (req) => dispositions.list(req.auth, req.query),
  );
  app.post(
    '/disposition-codes',
    {
      config: { access: manage },
      schema: {
        operationId: 'createDispositionCode',
        tags,
        summary: 'Add a disposition code; the code must be new in the account',
        body: CreateDispositionBody,
        response: responses(DispositionCode),
      },
    },
    async (req) => dispositions.create(req.auth, req.body),
  );
  app.patch(
    '/disposition-codes/:id',
    {
      config: { access: manage },
      schema: {
        operationId: 'updateDispositionCode',
        tags,
        summary: 'Relabel, recategorize or turn a disposition code on or off (system codes stay on)',
        params: IdParams,
        body: UpdateDispositionBody,
        response: responses(DispositionCode),
      },
    },
    async (req) => dispositions.update(req.auth, req.params.id, req.body),
  );
  app.delete(
    '/disposition-codes/:id',
    {
      config: { access: manage },
      schema: {
        operationId: 'deleteDispositionCode',
        tags,
        summary: 'Delete a disposition code; system codes cannot be deleted',
        params: IdParams,
        response: responses(DeletedBody),
      },
    },
    async (req) => dispositions.delete(req.auth, req.params.id),
  );
}
