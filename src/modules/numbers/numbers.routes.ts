import type { App } from '../../http/types.js';
import { allow } from '../../http/access.js';
import { DeletedBody, IdParams, PageOnlyQuery, responses } from '../../http/schemas.js';
import type { NumbersService } from './numbers.service.js';
import {
  AddPhoneNumberBody,
  AvailableNumberList,
  InboundRoute,
  InboundRouteQuery,
  InventorySearchQuery,
  NumberReputation,
  NumberReputationList,
  PhoneNumber,
  PhoneNumberList,
  PurchaseBody,
  UpdatePhoneNumberBody,
} from './numbers.schemas.js';

const read = allow.account('account.read');
const route = allow.account('numbers.route');
const manage = allow.account('numbers.manage');
const tags = ['phone numbers'];

export function numbersRoutes(app: App, { numbers }: { numbers: NumbersService }) {
  app.get(
    '/phone-numbers',
    {
      config: { access: read },
      schema: {
        operationId: 'listPhoneNumbers',
        tags,
        summary: "The account's phone numbers, newest first",
        querystring: PageOnlyQuery,
        response: responses(PhoneNumberList),
      },
    },
    async (req) => numbers.list(req.auth, req.query),
  );
  app.post(
    '/phone-numbers',
    {
      config: { access: manage },
      schema: {
        operationId: 'addPhoneNumber',
        tags,
        summary: 'Add a number the account already owns',
        description: 'A number belongs to one account on the whole service: a number another account holds is a 409.',
        body: AddPhoneNumberBody,
        response: responses(PhoneNumber),
      },
    },
    async (req) => numbers.add(req.auth, req.body),
  );
  app.get(
    '/phone-numbers/unassigned',
    {
      config: { access: read },
      schema: {
        operationId: 'listUnassignedPhoneNumbers',
        tags,
        summary: 'Numbers with no agent, newest first',
        querystring: PageOnlyQuery,
        response: responses(PhoneNumberList),
      },
    },
    async (req) => numbers.unassigned(req.auth, req.query),
  );
  app.get(
    '/phone-numbers/inventory/search',
    {
      config: { access: read },
      schema: {
        operationId: 'searchPhoneNumberInventory',
        tags,
        summary: 'Free numbers of the built-in carrier in an area code',
        description:
          'The same area code always lists the same numbers in the same order; numbers some account holds are left out.',
        querystring: InventorySearchQuery,
        response: responses(AvailableNumberList),
      },
    },
    async (req) => numbers.searchInventory(req.auth, req.query),
  );
  app.post(
    '/phone-numbers/inventory/purchase',
    {
      config: { access: manage },
      schema: {
        operationId: 'purchasePhoneNumber',
        tags,
        summary: 'Buy a number: one from a search, or the first free one in an area code; its first month is charged',
        body: PurchaseBody,
        response: responses(PhoneNumber),
      },
    },
    async (req) => numbers.purchase(req.auth, req.body),
  );
  app.get(
    '/phone-numbers/reputation',
    {
      config: { access: read },
      schema: {
        operationId: 'listPhoneNumberReputation',
        tags,
        summary: 'Reputation of every number, from its outbound calls of the last 24 hours',
        description: 'A check never made, or older than an hour, is made when read.',
        querystring: PageOnlyQuery,
        response: responses(NumberReputationList),
      },
    },
    async (req) => numbers.reputations(req.auth, req.query),
  );
  app.patch(
    '/phone-numbers/:id',
    {
      config: { access: route },
      schema: {
        operationId: 'updatePhoneNumber',
        tags,
        summary: "Route the number's inbound calls to an agent (agentId), or to none (null)",
        description:
          "The agent's inboundDid follows. An agent has one inbound number: giving it this one frees the number it had.",
        params: IdParams,
        body: UpdatePhoneNumberBody,
        response: responses(PhoneNumber),
      },
    },
    async (req) => numbers.update(req.auth, req.params.id, req.body),
  );
  app.delete(
    '/phone-numbers/:id',
    {
      config: { access: manage },
      schema: {
        operationId: 'deletePhoneNumber',
        tags,
        summary: "Release a number; its agent's inboundDid is cleared",
        params: IdParams,
        response: responses(DeletedBody),
      },
    },
    async (req) => numbers.remove(req.auth, req.params.id),
  );
  app.post(
    '/phone-numbers/:id/recheck-reputation',
    {
      config: { access: route },
      schema: {
        operationId: 'recheckPhoneNumberReputation',
        tags,
        summary: "Check the number's reputation now",
        params: IdParams,
        response: responses(NumberReputation),
      },
    },
    async (req) => numbers.recheckReputation(req.auth, req.params.id),
  );
  app.get(
    '/inbound/route',
    {
      config: { access: read },
      schema: {
        operationId: 'getInboundRoute',
        tags,
        summary: 'The agent that takes calls to one of the account’s numbers',
        description: 'A number that is not the account’s, or has no agent, is a 404.',
        querystring: InboundRouteQuery,
        response: responses(InboundRoute),
      },
    },
    async (req) => numbers.inboundRoute(req.auth, req.query.to),
  );
}
