import { Type } from 'typebox';
import type { App } from '../../http/types.js';
import { allow } from '../../http/access.js';
import { IdParams, responses } from '../../http/schemas.js';
import type { CallsAdminService } from './calls.admin-service.js';
import { CallEventList, ListCallEventsQuery } from './calls.schemas.js';
import {
  AccountPickerList,
  AccountPickerQuery,
  AdminCallDetail,
  AdminCallList,
  AdminListCallsQuery,
  AgentPickerList,
  AgentPickerQuery,
  CallControlResult,
  InjectBody,
  TestCallBody,
  TestCallResult,
} from './calls.admin-schemas.js';

const admin = allow.platformAdmin;
const tags = ['admin: calls'];

export function callsAdminRoutes(app: App, { callsAdmin }: { callsAdmin: CallsAdminService }) {
  listRoutes(app, callsAdmin);
  callRoutes(app, callsAdmin);
  controlRoutes(app, callsAdmin);
}

/** Every account's calls, and the pickers that filter them. */
function listRoutes(app: App, callsAdmin: CallsAdminService) {
  app.get(
    '/admin/calls',
    {
      config: { access: admin },
      schema: {
        operationId: 'listAdminCalls',
        tags,
        summary: 'List the calls of every account, newest first',
        description:
          'Filters combine. dateFrom and dateTo bound created_at: dateFrom is inclusive, dateTo exclusive. q matches digits in either number.',
        querystring: AdminListCallsQuery,
        response: responses(AdminCallList),
      },
    },
    async (req) => callsAdmin.list(req.query),
  );
  app.get(
    '/admin/calls/_/agents',
    {
      config: { access: admin },
      schema: {
        operationId: 'listAdminCallsAgents',
        tags,
        summary: 'Agents to filter calls by (every account), by name',
        querystring: AgentPickerQuery,
        response: responses(AgentPickerList),
      },
    },
    async (req) => callsAdmin.agentPicker(req.query),
  );
  app.get(
    '/admin/calls/_/accounts',
    {
      config: { access: admin },
      schema: {
        operationId: 'listAdminCallsAccounts',
        tags,
        summary: 'Accounts to filter calls by, by name',
        querystring: AccountPickerQuery,
        response: responses(AccountPickerList),
      },
    },
    async (req) => callsAdmin.accountPicker(req.query),
  );
}

/** One call of any account: its detail, its timeline, its packet capture. */
function callRoutes(app: App, callsAdmin: CallsAdminService) {
  app.get(
    '/admin/calls/:id',
    {
      config: { access: admin },
      schema: {
        operationId: 'getAdminCall',
        tags,
        summary: "Any account's call in full: transcript, cost line items, and its account",
        params: IdParams,
        response: responses(AdminCallDetail),
      },
    },
    async (req) => callsAdmin.get(req.params.id),
  );
  app.get(
    '/admin/calls/:id/events',
    {
      config: { access: admin },
      schema: {
        operationId: 'listAdminCallEvents',
        tags,
        summary: "Events of any account's call, oldest first",
        params: IdParams,
        querystring: ListCallEventsQuery,
        response: responses(CallEventList),
      },
    },
    async (req) => callsAdmin.events(req.params.id, req.query),
  );
  app.get(
    '/admin/calls/:id/capture.pcap.gz',
    {
      config: { access: admin },
      schema: {
        operationId: 'listAdminCallCapturePcapGz',
        tags,
        summary: 'Packet capture of a call (gzip-compressed pcap)',
        description:
          "This deployment's voice provider, the simulated network, records no packets: every call answers 404 no_capture.",
        params: IdParams,
        response: {
          ...responses(Type.String()),
          200: {
            description: 'The capture.',
            content: { 'application/gzip': { schema: Type.String({ format: 'binary' }) } },
          },
        },
      },
    },
    async (req) => callsAdmin.capture(req.params.id),
  );
}

/** A live call controlled from any instance, and test calls. */
function controlRoutes(app: App, callsAdmin: CallsAdminService) {
  app.post(
    '/admin/calls/:id/inject',
    {
      config: { access: admin },
      schema: {
        operationId: 'createAdminCallInject',
        tags,
        summary: 'Have the agent of a live call say a text next',
        description:
          'The agent says the text word for word on its next turn and it appears in the transcript. Works from any instance of the deployment. Only a connected call takes text (409 otherwise).',
        params: IdParams,
        body: InjectBody,
        response: responses(CallControlResult),
      },
    },
    async (req) => callsAdmin.inject(req.params.id, req.body),
  );
  app.post(
    '/admin/calls/:id/hangup',
    {
      config: { access: admin },
      schema: {
        operationId: 'createAdminCallHangup',
        tags,
        summary: 'End a live call',
        description:
          'A live call ends moments later with endReason operator_hangup, keeping what was said and its costs to then; a queued call is cancelled before it dials. Works from any instance of the deployment. A call that has already ended answers 409.',
        params: IdParams,
        response: responses(CallControlResult),
      },
    },
    async (req) => callsAdmin.hangup(req.params.id),
  );
  app.post(
    '/admin/test-call',
    {
      config: { access: admin },
      schema: {
        operationId: 'createAdminTestCall',
        tags,
        summary: "Place a test call with any account's agent",
        description:
          "The call belongs to the agent's account (its limits, costs and events) and goes out from the number assigned to the agent, else from the account's preferred number; an account without numbers answers 409. The agent must be active; a number on the account's do-not-call list answers 409 dnc_listed. The account's audit log records each test call with the administrator as actor.",
        body: TestCallBody,
        response: responses(TestCallResult),
      },
    },
    async (req) => callsAdmin.testCall(req.auth, req.body),
  );
}
