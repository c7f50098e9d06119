/**
 * The calls API of an account, what its routes call: the list, a call's detail, transcript and timeline, the event
 * feed, placing a call to a contact, a user's disposition, and signed URLs of a call's recording and transcript.
 */
import type { OwnershipCheck } from '../../db/ownership.js';
import type { TxHandle } from '../../db/repo.js';
import { actorOf } from '../../events/domain-events.js';
import type { Auth } from '../../lib/caller.js';
import { AppError, invalidField, notFound } from '../../lib/errors.js';
import { envelope } from '../../db/pagination.js';
import type { RangeRequest } from '../../http/range.js';
import type { CallAssets } from './calls.assets.js';
import type { CallLifecycle, CallRecord } from './calls.lifecycle.js';
import type {
  AgentsForCalls,
  ContactsForCalls,
  DispositionsForCalls,
  DncForCalls,
  NumbersForCalls,
} from './calls.ports.js';
import type { CallsRepo } from './calls.repo.js';
import type {
  AssetUrlQuery,
  DispositionBody,
  ListCallEventsQuery,
  ListCallsQuery,
  ListEventsQuery,
  PlaceCallBody,
  SignedAssetQuery,
} from './calls.schemas.js';
import { callFilters, iso, toAnalysis, toCallItem, toCostItem, toEvent, toTurn } from './calls.views.js';

export interface CallsApiDeps {
  repo: CallsRepo;
  owned: OwnershipCheck;
  agents: AgentsForCalls;
  contacts: ContactsForCalls;
  dnc: DncForCalls;
  numbers: NumbersForCalls;
  dispositions: DispositionsForCalls;
  lifecycle: CallLifecycle;
  assets: CallAssets;
}

export function createCallsApi(deps: CallsApiDeps) {
  const { repo, owned, agents, contacts, dnc, numbers, dispositions, lifecycle, assets } = deps;

  async function requireRow(accountId: string, id: string): Promise<CallRecord> {
    const row = await repo.findRow(accountId, id);
    if (!row) throw notFound('Call');
    return row;
  }

  async function detail(accountId: string, id: string) {
    const call = await repo.findById(accountId, id);
    if (!call) throw notFound('Call');
    const [turns, costItems, analysis] = await Promise.all([
      repo.transcript(accountId, id),
      repo.costItems(accountId, id),
      repo.findAnalysis(accountId, id),
    ]);
    return {
      ...toCallItem(call),
      agentVersion: call.agent_version,
      campaignId: call.campaign_id,
      fromNumber: call.from_number,
      toNumber: call.to_number,
      answeredAt: iso(call.answered_at),
      endReason: call.end_reason,
      updatedAt: call.updated_at.toISOString(),
      callbackAt: iso(call.callback_at),
      analysis: analysis ? toAnalysis(analysis) : null,
      transcript: turns.map(toTurn),
      costItems: costItems.map(toCostItem),
    };
  }

  /** One call's timeline, in the order things happened. */
  async function eventsOfCall(accountId: string, id: string, query: ListCallEventsQuery) {
    if (!(await repo.exists(accountId, id))) throw notFound('Call');
    const filters = { callId: id, type: query.type };
    const page = { limit: query.limit, offset: query.offset };
    const [rows, total] = await Promise.all([
      repo.listEvents(accountId, filters, page, 'oldest_first'),
      repo.countEvents(accountId, filters),
    ]);
    return envelope('events', rows.map(toEvent), total, page);
  }

  /** Refused unless the agent is active, the number is not on the do-not-call list, and the account has a number. */
  async function checkCallable(auth: Auth, contactId: string, input: PlaceCallBody) {
    await owned.requireOwned(auth, { contacts: [contactId], agents: [input.agentId] });
    const [agent, contact] = await Promise.all([
      agents.forCall(auth.accountId, input.agentId),
      contacts.forCall(auth.accountId, { id: contactId }),
    ]);
    if (!agent) throw notFound('Agent');
    if (!contact) throw notFound('Contact');
    if (agent.status !== 'active') {
      throw new AppError(
        'conflict',
        `The agent is ${agent.status}: only an active agent places calls (PATCH its status to active)`,
        { agentStatus: agent.status },
      );
    }
    if (await dnc.isListed(auth.accountId, contact.phone)) {
      throw new AppError('dnc_listed', `${contact.phone} is on the do-not-call list: it is not called`, {
        phone: contact.phone,
      });
    }
    const caller = await numbers.callerNumber(auth.accountId, input.fromNumberId);
    if (!caller)
      throw new AppError('conflict', 'The account has no phone number to call from: add or buy one first', {
        reason: 'no_caller_number',
      });
    return { agent, contact, caller };
  }

  return {
    /** GET /v1/calls: newest first; dateFrom inclusive, dateTo exclusive, both on created_at. */
    async list(auth: Auth, query: ListCallsQuery) {
      const filters = callFilters(query);
      const page = { limit: query.limit, offset: query.offset };
      const [rows, total] = await Promise.all([
        repo.listPage(auth.accountId, filters, page),
        repo.count(auth.accountId, filters),
      ]);
      return envelope('calls', rows.map(toCallItem), total, page);
    },

    get: (auth: Auth, id: string) => detail(auth.accountId, id),

    /** A call's detail by its account: for platform tools, which find the account from the call. */
    detail,

    /** One call's timeline, in the order things happened. */
    callEvents: (auth: Auth, id: string, query: ListCallEventsQuery) => eventsOfCall(auth.accountId, id, query),

    /** The same, by the call's account: for platform tools. */
    eventsOfCall,

    /** The account's event feed, newest first; callId and type narrow it. */
    async events(auth: Auth, query: ListEventsQuery) {
      const filters = { callId: query.callId, type: query.type };
      const page = { limit: query.limit, offset: query.offset };
      const [rows, total] = await Promise.all([
        repo.listEvents(auth.accountId, filters, page, 'newest_first'),
        repo.countEvents(auth.accountId, filters),
      ]);
      return envelope('events', rows.map(toEvent), total, page);
    },

    /**
     * GET /v1/calls/{id}/transcript.json: for the account's members, or for anyone holding a signed URL of it (the
     * signature is checked whenever one is sent). Neither: 401, as for any request without credentials.
     */
    async transcript(auth: Auth | undefined, id: string, query: SignedAssetQuery = {}) {
      const signed = query.signature !== undefined || query.expires !== undefined;
      let accountId: string;
      if (signed) {
        accountId = await assets.accountOfSignedCall(id, query);
      } else if (auth) {
        if (!(await repo.exists(auth.accountId, id))) throw notFound('Call');
        accountId = auth.accountId;
      } else {
        throw new AppError(
          'unauthorized',
          `Send an API key or a session, or use a signed URL from GET /v1/calls/${id}/asset-url?asset=transcript`,
        );
      }
      return { callId: id, turns: (await repo.transcript(accountId, id)).map(toTurn) };
    },

    /** POST /v1/crm/contacts/{id}/call: queues a call to the contact; refused (nothing written) for a DNC number. */
    async place(auth: Auth, contactId: string, input: PlaceCallBody) {
      const { agent, contact, caller } = await checkCallable(auth, contactId, input);
      return lifecycle.enqueue(
        auth.accountId,
        {
          agent_id: agent.id,
          contact_id: contact.id,
          direction: 'outbound',
          from_number: caller.number,
          to_number: contact.phone,
        },
        { actor: actorOf(auth) },
      );
    },

    /** PATCH /v1/calls/{id}/disposition: a user's choice, among the account's active codes. */
    async setDisposition(auth: Auth, id: string, input: DispositionBody) {
      await requireRow(auth.accountId, id);
      if (!(await dispositions.isValidCode(auth.accountId, input.disposition))) {
        throw invalidField(
          'body/disposition',
          `"${input.disposition}" is not an active disposition code of this account`,
        );
      }
      await repo.transaction(async (tx) => {
        const call = await tx.findForUpdate(auth.accountId, id);
        if (!call) throw notFound('Call');
        await lifecycle.setUserDisposition(tx, auth.accountId, call, input.disposition, actorOf(auth));
      });
    },

    /** GET /v1/calls/{id}/asset-url */
    async assetUrl(auth: Auth, id: string, query: AssetUrlQuery, origin: string) {
      const call = await requireRow(auth.accountId, id);
      if (query.asset === 'recording' && !call.recording_storage_key)
        throw new AppError('not_found', 'This call has no recording');
      return assets.signedUrl(id, query.asset, origin);
    },

    /**
     * A signed URL of a call's recording for a reader outside any request (a webhook delivery), read inside that
     * reader's transaction when it gives one; null without a recording.
     */
    async recordingUrlFor(accountId: string, id: string, origin: string, within?: TxHandle): Promise<string | null> {
      const call = await (within ? repo.within(within) : repo).findRow(accountId, id);
      if (!call?.recording_storage_key) return null;
      return (await assets.signedUrl(id, 'recording', origin, within)).url;
    },

    /** GET /v1/calls/{id}/recording.wav with a signed URL. */
    recording: (id: string, query: SignedAssetQuery, range: RangeRequest | null) => assets.recording(id, query, range),
  };
}
