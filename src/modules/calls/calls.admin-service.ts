/**
 * The platform administrator's call tools: every account's calls (list, detail, timeline), control of a live call
 * from any instance (inject words, hang up), and test calls placed with any account's agent.
 */
import type { Auth } from '../../lib/caller.js';
import { AppError, invalidField, notFound } from '../../lib/errors.js';
import { envelope } from '../../db/pagination.js';
import type { AgentsForCalls, DncForCalls, NumbersForCalls } from './calls.ports.js';
import type { CallsService } from './calls.service.js';
import { toCallItem } from './calls.views.js';
import type { ListCallEventsQuery } from './calls.schemas.js';
import type { AdminCallRow, CallsAdminRepo } from './calls.admin-repo.js';
import type {
  AccountPickerQuery,
  AdminListCallsQuery,
  AgentPickerQuery,
  InjectBody,
  TestCallBody,
} from './calls.admin-schemas.js';

export interface CallsAdminDeps {
  repo: CallsAdminRepo;
  calls: Pick<CallsService, 'detail' | 'eventsOfCall' | 'hangup' | 'inject' | 'queueTestCall'>;
  agents: Pick<AgentsForCalls, 'forCall'>;
  dnc: Pick<DncForCalls, 'isListed'>;
  numbers: Pick<NumbersForCalls, 'callerNumber'>;
}

/** A call item of the account's list, with its account and both numbers. */
const toAdminCallItem = (row: AdminCallRow) => ({
  ...toCallItem(row),
  accountId: row.account_id,
  accountName: row.account_name,
  fromNumber: row.from_number,
  toNumber: row.to_number,
});

export function createCallsAdminService({ repo, calls, agents, dnc, numbers }: CallsAdminDeps) {
  async function requireAccountOf(callId: string) {
    const account = await repo.accountOfCall(callId);
    if (!account) throw notFound('Call');
    return account;
  }

  return {
    /** GET /v1/admin/calls: every account's calls, newest first; dateFrom inclusive, dateTo exclusive. */
    async list(query: AdminListCallsQuery) {
      const createdFrom = query.dateFrom === undefined ? undefined : new Date(query.dateFrom);
      const createdBefore = query.dateTo === undefined ? undefined : new Date(query.dateTo);
      if (createdFrom && createdBefore && createdFrom > createdBefore)
        throw invalidField('querystring/dateFrom', 'must not be later than dateTo');
      const filters = {
        accountId: query.accountId,
        agentId: query.agentId,
        status: query.status,
        direction: query.direction,
        createdFrom,
        createdBefore,
        number: query.q,
      };
      const page = { limit: query.limit, offset: query.offset };
      const [rows, total] = await Promise.all([repo.listPage(filters, page), repo.count(filters)]);
      return envelope('calls', rows.map(toAdminCallItem), total, page);
    },

    async agentPicker(query: AgentPickerQuery) {
      const filters = { accountId: query.accountId, q: query.q };
      const page = { limit: query.limit, offset: query.offset };
      const [rows, total] = await Promise.all([repo.agentPickerPage(filters, page), repo.agentPickerCount(filters)]);
      const agents = rows.map((row) => ({
        id: row.id,
        name: row.name,
        accountId: row.account_id,
        accountName: row.account_name,
        deleted: row.deleted_at !== null,
      }));
      return envelope('agents', agents, total, page);
    },

    async accountPicker(query: AccountPickerQuery) {
      const filters = { q: query.q };
      const page = { limit: query.limit, offset: query.offset };
      const [rows, total] = await Promise.all([
        repo.accountPickerPage(filters, page),
        repo.accountPickerCount(filters),
      ]);
      return envelope('accounts', rows, total, page);
    },

    async get(callId: string) {
      const account = await requireAccountOf(callId);
      const detail = await calls.detail(account.account_id, callId);
      return { ...detail, accountId: account.account_id, accountName: account.account_name };
    },

    async events(callId: string, query: ListCallEventsQuery) {
      const account = await requireAccountOf(callId);
      return calls.eventsOfCall(account.account_id, callId, query);
    },

    /** The one voice provider there is, the simulated network, records no packets: no call has a capture. */
    async capture(callId: string): Promise<never> {
      await requireAccountOf(callId);
      throw new AppError(
        'no_capture',
        "This call has no packet capture: this deployment's voice provider, the simulated network, records no packets",
        { callId },
      );
    },

    inject: (callId: string, input: InjectBody) => calls.inject(callId, input.text),

    hangup: (callId: string) => calls.hangup(callId),

    /**
     * POST /v1/admin/test-call: a call from any account's active agent to `toNumber`, in that account. It goes out
     * from the number assigned to the agent, else from the account's preferred number.
     */
    async testCall(admin: Auth, input: TestCallBody) {
      const found = await repo.agentById(input.agentId);
      if (!found) throw notFound('Agent');
      const accountId = found.account_id;
      const agent = await agents.forCall(accountId, found.id);
      if (!agent) throw notFound('Agent');
      if (agent.status !== 'active') {
        throw new AppError(
          'conflict',
          `The agent is ${agent.status}: only an active agent places calls (set its status to active first)`,
          {
            agentStatus: agent.status,
          },
        );
      }
      if (await dnc.isListed(accountId, input.toNumber)) {
        throw new AppError(
          'dnc_listed',
          `${input.toNumber} is on the do-not-call list of the agent's account: it is not called`,
          {
            phone: input.toNumber,
          },
        );
      }
      const fromNumber = found.inbound_did ?? (await numbers.callerNumber(accountId))?.number;
      if (!fromNumber) {
        throw new AppError(
          'conflict',
          "The agent's account has no phone number to call from: add or buy one for it first",
          {
            reason: 'no_caller_number',
            accountId,
          },
        );
      }
      const queued = await calls.queueTestCall(admin, accountId, {
        agentId: agent.id,
        fromNumber,
        toNumber: input.toNumber,
      });
      return { ...queued, accountId, fromNumber };
    },
  };
}

export type CallsAdminService = ReturnType<typeof createCallsAdminService>;
