/**
 * What the calls module does besides reading: placing calls, the engine's jobs (running a call, the sweep after a
 * crash), dispositions, signed asset URLs, control of a live call from any instance (hang up, inject), and the
 * voice provider's callbacks (post-call reports, inbound calls).
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import type { OwnershipCheck } from '../../db/ownership.js';
import type { DatabaseKind } from '../../db/staging.js';
import type { Auth } from '../../http/auth.js';
import { AppError, invalidField, notFound } from '../../http/errors.js';
import type { RangeRequest } from '../../http/range.js';
import type { Broadcast } from '../../lib/broadcast.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { checkSignatureHeader } from '../../lib/signatures.js';
import { actorOf } from '../../events/domain-events.js';
import { validateObjectKey, type ObjectStorage } from '../../providers/storage/index.js';
import type { TtsProvider } from '../../providers/tts/index.js';
import type { VoiceProvider } from '../../providers/voice/index.js';
import type { TxHandle } from '../../db/repo.js';
import type { Outbox } from '../../events/outbox.js';
import type { CallsRepo, CallsTx } from './calls.repo.js';
import type {
  AgentLlmForCalls,
  AgentsForCalls,
  CampaignVoicemailForCalls,
  ContactsForCalls,
  DispositionsForCalls,
  DncForCalls,
  NumbersForCalls,
  PricingForCalls,
} from './calls.ports.js';
import type {
  AssetUrlQuery,
  DispositionBody,
  InboundCallBody,
  PlaceCallBody,
  PostCallBody,
  SignedAssetQuery,
} from './calls.schemas.js';
import { LIVE_CALL_STATUSES } from './calls.tables.js';
import { createCallLifecycle, type CallRecord, type CallReport } from './calls.lifecycle.js';
import { createCallRunner } from './calls.runner.js';
import { createCallAssets } from './calls.assets.js';
import { createCallLlm } from './calls.llm.js';

export interface CallOperationsDeps {
  repo: CallsRepo;
  clock: Clock;
  config: Config;
  databaseKind: DatabaseKind;
  owned: OwnershipCheck;
  agents: AgentsForCalls;
  contacts: ContactsForCalls;
  dnc: DncForCalls;
  numbers: NumbersForCalls;
  dispositions: DispositionsForCalls;
  pricing: PricingForCalls;
  voice: VoiceProvider;
  agentLlm: AgentLlmForCalls;
  /** The campaign's voicemail action for a campaign's call (none: the agent's). */
  campaignVoicemail?: CampaignVoicemailForCalls;
  tts: TtsProvider;
  objects: ObjectStorage;
  broadcast: Broadcast;
  log: Logger;
}

const CONTROL_TOPIC = 'calls.control';
const isLive = (status: string) => (LIVE_CALL_STATUSES as readonly string[]).includes(status);

/** Refuses a callback that does not carry a valid signature of its raw body (401, like a missing credential). */
export function verifyProviderSignature(
  secret: string | null,
  header: string | undefined,
  rawBody: string,
  nowSeconds: number,
) {
  if (!secret)
    throw new AppError(
      'unauthorized',
      'Voice provider callbacks are turned off: set VOICE_PROVIDER_SECRET to accept them',
    );
  const check = checkSignatureHeader(secret, header, rawBody, nowSeconds);
  const problems: Record<Exclude<typeof check, 'valid'>, string> = {
    missing: 'Send X-Service-Signature: t=<unix seconds>,v1=<HMAC-SHA256 of "<t>.<raw body>" in hex>',
    malformed: 'X-Service-Signature must read t=<unix seconds>,v1=<hex>',
    outside_tolerance: 'The signature timestamp is more than 5 minutes away from the server clock',
    mismatch: 'The signature does not match the body',
  };
  if (check !== 'valid') throw new AppError('unauthorized', problems[check]);
}

export function createCallOperations(deps: CallOperationsDeps) {
  const { repo, clock, config, owned, agents, contacts, dnc, numbers, dispositions, broadcast, log } = deps;
  const lifecycle = createCallLifecycle({ ...deps, config: config.calls });
  // This process, on the calls it runs: a restarted embedded server knows they are not its own.
  const runnerId = randomUUID();
  const runner = createCallRunner({ ...deps, lifecycle, config: config.calls, runnerId });
  const assets = createCallAssets({ ...deps, config: config.calls });
  const callLlm = createCallLlm({ ...deps, config: config.calls });

  broadcast.subscribe(CONTROL_TOPIC, (message) => {
    const callId = typeof message.callId === 'string' ? message.callId : null;
    if (!callId) return;
    if (message.action === 'hangup') runner.hangup(callId);
    else if (message.action === 'inject' && typeof message.text === 'string') runner.inject(callId, message.text);
  });

  async function requireRow(accountId: string, id: string): Promise<CallRecord> {
    const row = await repo.findRow(accountId, id);
    if (!row) throw notFound('Call');
    return row;
  }

  /**
   * Writes a new call in the queue, with its events and the job that starts it; inside `options.outer` (another
   * module's transaction, with its outbox) when given.
   */
  async function enqueue(
    accountId: string,
    call: Omit<Parameters<CallsRepo['insertCall']>[1], 'id' | 'status'>,
    auth: Auth | null,
    options: { testPlacedBy?: Auth; outer?: TxHandle & Outbox } = {},
  ) {
    const { outer } = options;
    const now = clock.now();
    const id = newId();
    const inTransaction = <T>(work: (tx: Omit<CallsTx, 'trx'>) => Promise<T>) =>
      outer ? work({ ...repo.within(outer), send: outer.send, emit: outer.emit }) : repo.transaction(work);
    return inTransaction(async (tx) => {
      await tx.insertCall(accountId, { ...call, id, status: 'queued', created_at: now, updated_at: now });
      const data = {
        callId: id,
        agentId: call.agent_id,
        contactId: call.contact_id,
        direction: call.direction,
        status: 'queued',
      };
      await tx.insertEvents(accountId, [{ callId: id, type: 'call.queued', data, occurredAt: now }]);
      await tx.emit({
        type: 'call.queued',
        accountId,
        subject: { type: 'call', id },
        data,
        actor: auth ? actorOf(auth) : null,
      });
      if (options.testPlacedBy) {
        // The audit log of the call's account records that a platform administrator placed it.
        await tx.emit({
          type: 'call.test_placed',
          accountId,
          subject: { type: 'call', id },
          data: { callId: id, agentId: call.agent_id, toNumber: call.to_number, fromNumber: call.from_number },
          actor: actorOf(options.testPlacedBy),
        });
      }
      await tx.send('calls.run', { accountId, callId: id });
      return { callId: id, status: 'queued' as const };
    });
  }

  /** The report of a call left live by a process that died: failed at its last heartbeat, with its costs to then. */
  function lostReport(call: CallRecord): CallReport {
    const lastAlive = call.heartbeat_at ?? call.updated_at;
    return {
      status: 'failed',
      endReason: 'worker_lost',
      endedAt: call.started_at && lastAlive < call.started_at ? call.started_at : lastAlive,
      durationMs: call.answered_at ? Math.max(0, lastAlive.getTime() - call.answered_at.getTime()) : null,
    };
  }

  return {
    ...callLlm,

    /** POST /v1/crm/contacts/{id}/call: queues a call to the contact; refused (nothing written) for a DNC number. */
    async place(auth: Auth, contactId: string, input: PlaceCallBody) {
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
          {
            agentStatus: agent.status,
          },
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
      return enqueue(
        auth.accountId,
        {
          agent_id: agent.id,
          contact_id: contact.id,
          direction: 'outbound',
          from_number: caller.number,
          to_number: contact.phone,
        },
        auth,
      );
    },

    /**
     * A platform administrator's test call: queued in the agent's account (its events, costs and limits), with no
     * contact, from `fromNumber` to `toNumber`; the checks (agent active, do-not-call, caller number) are the caller's.
     */
    queueTestCall(admin: Auth, accountId: string, call: { agentId: string; fromNumber: string; toNumber: string }) {
      return enqueue(
        accountId,
        {
          agent_id: call.agentId,
          contact_id: null,
          direction: 'outbound',
          from_number: call.fromNumber,
          to_number: call.toNumber,
        },
        null,
        { testPlacedBy: admin },
      );
    },

    /**
     * For the dialer: queues a campaign's call inside the dialer's transaction, so the attempt and its call commit
     * together (or neither does). The dialer has already checked the agent, the number and the do-not-call list.
     */
    placeCampaignCall(
      tx: TxHandle & Outbox,
      accountId: string,
      input: { agentId: string; contactId: string; campaignId: string; fromNumber: string; toNumber: string },
    ) {
      return enqueue(
        accountId,
        {
          agent_id: input.agentId,
          contact_id: input.contactId,
          campaign_id: input.campaignId,
          direction: 'outbound',
          from_number: input.fromNumber,
          to_number: input.toNumber,
        },
        null,
        { outer: tx },
      );
    },

    /** The account's calls queued or under way: what its concurrency limit leaves for a dialer. */
    async accountCallLoad(accountId: string) {
      return { active: await repo.countActive(accountId), limit: config.calls.maxConcurrentPerAccount };
    },

    /** Of these contacts, the ones with a call queued or under way now. */
    async contactsInCall(accountId: string, contactIds: readonly string[]): Promise<Set<string>> {
      if (contactIds.length === 0) return new Set();
      const rows = await repo.contactsInCall(accountId, contactIds);
      return new Set(rows.map((row) => row.contact_id!));
    },

    /** What the dialer needs to know of an ended campaign call; null while it has not ended. */
    async campaignCallOutcome(accountId: string, callId: string) {
      const row = await repo.findRow(accountId, callId);
      if (!row || !['completed', 'failed', 'busy', 'no_answer'].includes(row.status)) return null;
      return {
        contactId: row.contact_id,
        status: row.status,
        answeredAt: row.answered_at,
        endedAt: row.ended_at,
        endReason: row.end_reason,
        durationSeconds: row.duration_seconds,
        disposition: row.disposition,
        totalCostUsd: row.total_cost_usd,
        agentLatencyMs: row.agent_latency_ms,
      };
    },

    /** A campaign event in the account's event feed (/v1/events), inside the campaign's transaction. */
    recordCampaignEvent(
      tx: TxHandle,
      accountId: string,
      type: 'campaign.started' | 'campaign.compliance_paused',
      data: Record<string, unknown>,
    ) {
      return repo.within(tx).insertEvents(accountId, [{ callId: null, type, data, occurredAt: clock.now() }]);
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

    /** The account a signed transcript URL grants (403 unless the signature holds). */
    accountOfSignedTranscript: (id: string, query: SignedAssetQuery) => assets.accountOfSignedCall(id, query),

    /**
     * Hangs up a call from any instance: a queued call is cancelled here; a live one is ended by the process running it
     * (the request travels by broadcast). For platform tools: it takes any account's call.
     */
    async hangup(callId: string) {
      const call = await repo.findAnyAccount(callId);
      if (!call) throw notFound('Call');
      if (call.status === 'queued') {
        const ended = await lifecycle.finish(call.account_id, callId, (row) =>
          row.status === 'queued' ? { status: 'failed', endReason: 'canceled', endedAt: clock.now() } : null,
        );
        if (ended && !ended.duplicate) return { callId, status: ended.status, requested: true };
      }
      if (!isLive(call.status) && call.status !== 'queued')
        throw new AppError('conflict', 'The call has already ended', { status: call.status });
      await broadcast.publish(CONTROL_TOPIC, { action: 'hangup', callId });
      return { callId, status: call.status, requested: true };
    },

    /** Has the agent of a connected call say `text` next, from any instance. For platform tools. */
    async inject(callId: string, text: string) {
      const call = await repo.findAnyAccount(callId);
      if (!call) throw notFound('Call');
      if (call.status !== 'connected')
        throw new AppError('conflict', 'Text can only be injected into a connected call', { status: call.status });
      const cleaned = text.trim();
      if (!cleaned) throw invalidField('body/text', 'must not be blank');
      await broadcast.publish(CONTROL_TOPIC, { action: 'inject', callId, text: cleaned });
      return { callId, status: call.status, requested: true };
    },

    /**
     * For a stopping process: hangs up the live calls it runs, with endReason server_shutdown and their costs to
     * this moment, waits until their ends are written, and starts no more calls.
     */
    shutdown: () => runner.hangupAll('server_shutdown'),

    /** The calls.run job: runs the call if its account has a free slot (else it waits for one). */
    run: (accountId: string, callId: string) => runner.run(accountId, callId),

    /**
     * Closes the live calls of processes that died, as failed with endReason worker_lost and their costs to their last
     * heartbeat, then starts waiting calls that have free slots. On the embedded database one process owns the data,
     * so every live call it is not running itself is lost; on PostgreSQL a call is lost when its heartbeat is older
     * than CALLS_HEARTBEAT_STALE_SECONDS.
     */
    async sweepLostCalls() {
      const staleMs = config.calls.heartbeatStaleSeconds * 1000;
      const staleBefore = new Date((await repo.databaseNow()).getTime() - staleMs);
      const candidates = await repo.lostCallCandidates(
        deps.databaseKind === 'pglite' ? 'every live call' : { staleBefore },
      );
      let closed = 0;
      for (const candidate of candidates) {
        const ended = await lifecycle.finish(candidate.account_id, candidate.id, (row) => {
          // Asked on the locked row, not from a list taken earlier: a call claimed since is this process's own.
          if (!isLive(row.status) || runner.carries(row.id)) return null;
          if (deps.databaseKind !== 'pglite' && row.heartbeat_at && row.heartbeat_at >= staleBefore) return null;
          return lostReport(row);
        });
        if (ended && !ended.duplicate) {
          closed++;
          log.warn({ callId: candidate.id }, 'closed a call whose process stopped (worker_lost)');
        }
      }
      for (const { account_id } of await repo.accountsWithQueuedCalls()) await lifecycle.dispatchQueued(account_id);
      return { closed };
    },

    /** Checks the signature of a voice-provider callback (see verifyProviderSignature). */
    verifyProviderSignature(header: string | undefined, rawBody: string) {
      verifyProviderSignature(
        config.calls.voiceProviderSecret,
        header,
        rawBody,
        Math.floor(clock.now().getTime() / 1000),
      );
    },

    /** POST /v1/internal/voice-provider/post-call: a provider's report of a finished call; a repeat changes nothing. */
    async postCall(input: PostCallBody) {
      const call = await repo.findAnyAccount(input.callId);
      if (!call) throw notFound('Call');
      if (input.recordingStorageKey) {
        try {
          validateObjectKey(input.recordingStorageKey);
        } catch (error) {
          throw invalidField(
            'body/recordingStorageKey',
            error instanceof Error ? error.message : 'is not a valid storage key',
          );
        }
      }
      const now = clock.now();
      const answeredAt = input.answeredAt ? new Date(input.answeredAt) : null;
      const endedAt = input.endedAt ? new Date(input.endedAt) : now;
      const row = (await repo.findRow(call.account_id, call.id))!;
      if (answeredAt && row.started_at && answeredAt < row.started_at) {
        throw invalidField('body/answeredAt', `must not be before the call started (${row.started_at.toISOString()})`);
      }
      if (endedAt < (answeredAt ?? row.started_at ?? endedAt))
        throw invalidField('body/endedAt', 'must not be before the call started or was answered');
      const report: CallReport = {
        status: input.status,
        endReason: input.endReason ?? (input.status === 'completed' ? 'caller_hangup' : input.status),
        endedAt,
        answeredAt,
        durationMs: input.durationSeconds !== undefined ? input.durationSeconds * 1000 : null,
        disposition: input.disposition ?? null,
        providerCallId: input.providerCallId ?? null,
        recordingStorageKey: input.recordingStorageKey ?? null,
        transcript: input.transcript?.map((turn) => ({
          speaker: turn.speaker,
          text: turn.text,
          startMs: turn.startMs ?? null,
          endMs: turn.endMs ?? null,
        })),
        ...(input.usage
          ? {
              usage: {
                llmInputTokens: input.usage.llmInputTokens ?? 0,
                llmOutputTokens: input.usage.llmOutputTokens ?? 0,
                ttsCharacters: input.usage.ttsCharacters ?? 0,
                sttMs: (input.usage.sttSeconds ?? 0) * 1000,
              },
            }
          : {}),
      };
      if (report.disposition && !(await dispositions.isValidCode(call.account_id, report.disposition))) {
        throw invalidField(
          'body/disposition',
          `"${report.disposition}" is not an active disposition code of the call's account`,
        );
      }
      const result = await lifecycle.finish(call.account_id, call.id, report);
      if (!result) throw notFound('Call');
      return result;
    },

    /** POST /v1/internal/voice-provider/inbound: a call to one of the accounts' numbers, answered by its agent. */
    async inbound(input: InboundCallBody) {
      const route = await numbers.routeInbound(input.to);
      if (!route) throw new AppError('not_found', `No account has the number ${input.to}`);
      if (!route.agentId) {
        throw new AppError('conflict', `The number ${input.to} has no agent to answer it: assign one to the number`, {
          reason: 'no_agent',
        });
      }
      const agent = await agents.forCall(route.accountId, route.agentId);
      if (!agent || agent.status !== 'active') {
        throw new AppError(
          'conflict',
          `The agent of ${input.to} is ${agent?.status ?? 'deleted'}: only an active agent answers calls`,
          {
            reason: 'agent_not_active',
          },
        );
      }
      const contact = await contacts.forCall(route.accountId, { phone: input.from });
      const queued = await enqueue(
        route.accountId,
        {
          agent_id: agent.id,
          contact_id: contact?.id ?? null,
          direction: 'inbound',
          from_number: input.from,
          to_number: input.to,
        },
        null,
      );
      return { ...queued, agentId: agent.id };
    },
  };
}

export type CallOperations = ReturnType<typeof createCallOperations>;
