import type { App } from '../../http/types.js';
import { allow } from '../../http/access.js';
import { DeletedBody, IdParams, PageOnlyQuery, responses } from '../../http/schemas.js';
import type { WebhooksService } from './webhooks.service.js';
import {
  CreateWebhookBody,
  Delivery,
  DeliveryList,
  DeliveryParams,
  ListDeliveriesQuery,
  QueuedDelivery,
  RedeliverSinceBody,
  RedeliveredBody,
  RotatedSecret,
  UpdateWebhookBody,
  Webhook,
  WebhookList,
  WebhookWithSecret,
} from './webhooks.schemas.js';

const read = allow.account('account.read');
const manage = allow.account('webhooks.manage');
const tags = ['webhooks'];

export function webhooksRoutes(app: App, { webhooks }: { webhooks: WebhooksService }) {
  endpointRoutes(app, webhooks);
  endpointActionRoutes(app, webhooks);
  deliveryRoutes(app, webhooks);
}

/** The endpoints: registered, listed, read, changed, deleted. */
function endpointRoutes(app: App, webhooks: WebhooksService) {
  app.post(
    '/webhooks',
    {
      config: { access: manage },
      schema: {
        operationId: 'createWebhook',
        tags,
        summary: 'Register an endpoint; the answer holds its signing secret, shown this once',
        description:
          'Every event type is sent unless `events` names some. The URL must be https (http where the operator allows it) and may not point at a private, loopback or link-local address.',
        body: CreateWebhookBody,
        response: responses(WebhookWithSecret),
      },
    },
    async (req) => webhooks.create(req.auth, req.body),
  );
  app.get(
    '/webhooks',
    {
      config: { access: read },
      schema: {
        operationId: 'listWebhooks',
        tags,
        summary: "The account's endpoints: enabled or not, failure streak, why disabled",
        querystring: PageOnlyQuery,
        response: responses(WebhookList),
      },
    },
    async (req) => webhooks.list(req.auth, req.query),
  );
  app.get(
    '/webhooks/:id',
    {
      config: { access: read },
      schema: {
        operationId: 'getWebhook',
        tags,
        summary: 'One endpoint (never its secret)',
        params: IdParams,
        response: responses(Webhook),
      },
    },
    async (req) => webhooks.get(req.auth, req.params.id),
  );
  app.patch(
    '/webhooks/:id',
    {
      config: { access: manage },
      schema: {
        operationId: 'updateWebhook',
        tags,
        summary: 'Change an endpoint; enabling it again clears its failure streak',
        params: IdParams,
        body: UpdateWebhookBody,
        response: responses(Webhook),
      },
    },
    async (req) => webhooks.update(req.auth, req.params.id, req.body),
  );
  app.delete(
    '/webhooks/:id',
    {
      config: { access: manage },
      schema: {
        operationId: 'deleteWebhook',
        tags,
        summary: 'Delete an endpoint; its pending deliveries are not sent',
        params: IdParams,
        response: responses(DeletedBody),
      },
    },
    async (req) => webhooks.delete(req.auth, req.params.id),
  );
}

/** What is done to an endpoint besides changing it: a test event, a new secret. */
function endpointActionRoutes(app: App, webhooks: WebhooksService) {
  app.post(
    '/webhooks/:id/test',
    {
      config: { access: manage },
      schema: {
        operationId: 'createWebhookTest',
        tags,
        summary: 'Send a test event (webhook.test) to the endpoint',
        params: IdParams,
        response: responses(QueuedDelivery),
      },
    },
    async (req) => webhooks.sendTest(req.auth, req.params.id),
  );
  app.post(
    '/webhooks/:id/rotate-secret',
    {
      config: { access: manage },
      schema: {
        operationId: 'createWebhookRotateSecret',
        tags,
        summary:
          'Replace the signing secret; the old one keeps signing beside it for the overlap window (24 hours by default)',
        params: IdParams,
        response: responses(RotatedSecret),
      },
    },
    async (req) => webhooks.rotateSecret(req.auth, req.params.id),
  );
}

/** An endpoint's delivery log, and deliveries sent again. */
function deliveryRoutes(app: App, webhooks: WebhooksService) {
  app.get(
    '/webhooks/:id/deliveries',
    {
      config: { access: read },
      schema: {
        operationId: 'listWebhookDeliveries',
        tags,
        summary: 'Deliveries to the endpoint, newest first, with every attempt',
        params: IdParams,
        querystring: ListDeliveriesQuery,
        response: responses(DeliveryList),
      },
    },
    async (req) => webhooks.listDeliveries(req.auth, req.params.id, req.query),
  );
  app.get(
    '/webhooks/:id/deliveries/:deliveryId',
    {
      config: { access: read },
      schema: {
        operationId: 'getWebhookDelivery',
        tags,
        summary: 'One delivery with every attempt',
        params: DeliveryParams,
        response: responses(Delivery),
      },
    },
    async (req) => webhooks.getDelivery(req.auth, req.params.id, req.params.deliveryId),
  );
  app.post(
    '/webhooks/:id/deliveries/:deliveryId/redeliver',
    {
      config: { access: manage },
      schema: {
        operationId: 'createWebhookDeliveryRedeliver',
        tags,
        summary: 'Send a delivery again, with the same delivery id',
        params: DeliveryParams,
        response: responses(QueuedDelivery),
      },
    },
    async (req) => webhooks.redeliver(req.auth, req.params.id, req.params.deliveryId),
  );
  app.post(
    '/webhooks/:id/deliveries/redeliver',
    {
      config: { access: manage },
      schema: {
        operationId: 'createWebhookDeliveriesRedeliver',
        tags,
        summary: 'Send again every failed or abandoned delivery created since a time',
        params: IdParams,
        body: RedeliverSinceBody,
        response: responses(RedeliveredBody),
      },
    },
    async (req) => webhooks.redeliverSince(req.auth, req.params.id, req.body),
  );
}
