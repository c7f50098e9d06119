import type { App } from '../../http/types.js';
import { allow } from '../../http/access.js';
import { IdParams, responses } from '../../http/schemas.js';
import type { CampaignsService } from './campaigns.service.js';
import {
  Campaign,
  CampaignList,
  CampaignStats,
  CreateCampaignBody,
  ListCampaignsQuery,
  UpdateCampaignBody,
} from './campaigns.schemas.js';

const read = allow.account('account.read');
const write = allow.account('campaigns.write');
const tags = ['campaigns'];

export function campaignsRoutes(app: App, { campaigns }: { campaigns: CampaignsService }) {
  app.post(
    '/campaigns',
    {
      config: { access: write },
      schema: {
        operationId: 'createCampaign',
        tags,
        summary: 'Create a campaign (a draft: nothing is dialled until it starts)',
        body: CreateCampaignBody,
        response: responses(Campaign),
      },
    },
    async (req) => campaigns.create(req.auth, req.body),
  );
  app.get(
    '/campaigns',
    {
      config: { access: read },
      schema: {
        operationId: 'listCampaigns',
        tags,
        summary: "List the account's campaigns, newest first",
        querystring: ListCampaignsQuery,
        response: responses(CampaignList),
      },
    },
    async (req) => campaigns.list(req.auth, req.query),
  );
  app.get(
    '/campaigns/:id',
    {
      config: { access: read },
      schema: {
        operationId: 'getCampaign',
        tags,
        summary: 'Read a campaign, with why it is paused when it is',
        params: IdParams,
        response: responses(Campaign),
      },
    },
    async (req) => campaigns.get(req.auth, req.params.id),
  );
  app.patch(
    '/campaigns/:id',
    {
      config: { access: write },
      schema: {
        operationId: 'updateCampaign',
        tags,
        summary: 'Update a campaign; a running one takes only pace, schedule and concurrency',
        params: IdParams,
        body: UpdateCampaignBody,
        response: responses(Campaign),
      },
    },
    async (req) => campaigns.update(req.auth, req.params.id, req.body),
  );
  app.post(
    '/campaigns/:id/start',
    {
      config: { access: write },
      schema: {
        operationId: 'startCampaign',
        tags,
        summary: 'Start a draft campaign, or resume a paused one',
        params: IdParams,
        response: responses(Campaign),
      },
    },
    async (req) => campaigns.start(req.auth, req.params.id),
  );
  app.post(
    '/campaigns/:id/pause',
    {
      config: { access: write },
      schema: {
        operationId: 'pauseCampaign',
        tags,
        summary: 'Pause a running campaign at once: no new dials, calls under way finish',
        params: IdParams,
        response: responses(Campaign),
      },
    },
    async (req) => campaigns.pause(req.auth, req.params.id),
  );
  app.post(
    '/campaigns/:id/cancel',
    {
      config: { access: write },
      schema: {
        operationId: 'createCampaignCancel',
        tags,
        summary:
          'Cancel a draft, running or paused campaign for good: contacts not yet called are not called, calls under way finish',
        params: IdParams,
        response: responses(Campaign),
      },
    },
    async (req) => campaigns.cancel(req.auth, req.params.id),
  );
  app.get(
    '/campaigns/:id/stats',
    {
      config: { access: read },
      schema: {
        operationId: 'getCampaignStats',
        tags,
        summary: 'Campaign statistics: outcomes, abandon rates, gate denials, cost, progress',
        params: IdParams,
        response: responses(CampaignStats),
      },
    },
    async (req) => campaigns.stats(req.auth, req.params.id),
  );
}
