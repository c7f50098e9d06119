import type { App } from '../../http/types.js';
import { allow } from '../../http/access.js';
import { DeletedBody, IdParams, responses } from '../../http/schemas.js';
import type { CatalogService } from './catalog.service.js';
import { MODEL_KINDS, type ModelKind } from './catalog.tables.js';
import { ListModelsQuery, MODEL_SCHEMAS, TelephonyRates, TelephonyRatesBody } from './catalog.schemas.js';

const admin = allow.platformAdmin;
const tags = ['admin: catalog'];
const WHAT = { llm: 'LLM', stt: 'speech-to-text', tts: 'text-to-speech' } as const;

/** How each kind of model is named in operation ids (listLlmModels, createTtsModel, …). */
const modelName = { llm: 'Llm', stt: 'Stt', tts: 'Tts' } as const;

export function catalogRoutes(app: App, { catalog }: { catalog: CatalogService }) {
  for (const kind of MODEL_KINDS) modelRoutes(app, catalog, kind);
  rateRoutes(app, catalog);
}

/** The models of one kind: listed, added, changed, deleted. */
function modelRoutes(app: App, catalog: CatalogService, kind: ModelKind) {
  const schemas = MODEL_SCHEMAS[kind];
  const what = WHAT[kind];
  app.get(
    `/admin/models/${kind}`,
    {
      config: { access: admin },
      schema: {
        operationId: `list${modelName[kind]}Models`,
        tags,
        summary: `List the ${what} models of the catalog, newest first`,
        querystring: ListModelsQuery,
        response: responses(schemas.list),
      },
    },
    async (req) => catalog.listModels(kind, req.query),
  );
  app.post(
    `/admin/models/${kind}`,
    {
      config: { access: admin },
      schema: {
        operationId: `create${modelName[kind]}Model`,
        tags,
        summary: `Add a ${what} model with its prices`,
        body: schemas.create,
        response: responses(schemas.model),
      },
    },
    async (req) => catalog.createModel(kind, req.body),
  );
  app.patch(
    `/admin/models/${kind}/:id`,
    {
      config: { access: admin },
      schema: {
        operationId: `update${modelName[kind]}Model`,
        tags,
        summary: `Change a ${what} model: prices, upstream, key, on/off, default`,
        params: IdParams,
        body: schemas.update,
        response: responses(schemas.model),
      },
    },
    async (req) => catalog.updateModel(kind, req.params.id, req.body),
  );
  app.delete(
    `/admin/models/${kind}/:id`,
    {
      config: { access: admin },
      schema: {
        operationId: `delete${modelName[kind]}Model`,
        tags,
        summary: `Delete a ${what} model (not a built-in engine, nor the default)`,
        params: IdParams,
        response: responses(DeletedBody),
      },
    },
    async (req) => catalog.deleteModel(kind, req.params.id),
  );
}

/** The telephony rate table and the platform fee. */
function rateRoutes(app: App, catalog: CatalogService) {
  app.get(
    '/admin/rates/telephony',
    {
      config: { access: admin },
      schema: {
        operationId: 'getTelephonyRates',
        tags,
        summary: 'The telephony rate table by country (the * row covers the others) and the platform fee',
        response: responses(TelephonyRates),
      },
    },
    async () => catalog.rates(),
  );
  app.put(
    '/admin/rates/telephony',
    {
      config: { access: admin },
      schema: {
        operationId: 'setTelephonyRates',
        tags,
        summary: 'Replace the telephony rate table and the platform fee',
        description:
          'Send every row: countries left out are removed. A * row, the rate for every other country, is required.',
        body: TelephonyRatesBody,
        response: responses(TelephonyRates),
      },
    },
    async (req) => catalog.replaceRates(req.body),
  );
}
