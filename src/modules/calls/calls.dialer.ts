/**
 * What a campaign's dialer asks of the calls module: the account's call load, the contacts already in a call, queuing
 * a campaign's call inside the dialer's transaction (with what it does at an answering machine), the outcome of an
 * ended call, and campaign events in the account's event feed.
 */
import type { CallsConfig } from '../../config.js';
import type { TxHandle } from '../../db/repo.js';
import type { Outbox } from '../../events/outbox.js';
import type { Clock } from '../../lib/clock.js';
import type { VoicemailAction } from '../agents/agents.tables.js';
import type { CallLifecycle } from './calls.lifecycle.js';
import type { CallsRepo } from './calls.repo.js';
import { isFinal } from './calls.tables.js';

export interface CallsDialerDeps {
  repo: CallsRepo;
  clock: Clock;
  config: CallsConfig;
  lifecycle: CallLifecycle;
}

export interface CampaignCall {
  agentId: string;
  contactId: string;
  campaignId: string;
  fromNumber: string;
  toNumber: string;
  /** What the call does at an answering machine: the campaign's setting, which wins over the agent's. */
  voicemailAction: VoicemailAction;
}

export function createCallsDialer({ repo, clock, config, lifecycle }: CallsDialerDeps) {
  return {
    /**
     * Queues a campaign's call inside the dialer's transaction, so the attempt and its call commit together (or
     * neither does). The dialer has already checked the agent, the number and the do-not-call list.
     */
    placeCampaignCall(tx: TxHandle & Outbox, accountId: string, input: CampaignCall) {
      return lifecycle.enqueue(
        accountId,
        {
          agent_id: input.agentId,
          contact_id: input.contactId,
          campaign_id: input.campaignId,
          direction: 'outbound',
          from_number: input.fromNumber,
          to_number: input.toNumber,
          voicemail_action: input.voicemailAction,
        },
        { actor: null, outer: tx },
      );
    },

    /** The account's calls queued or under way: what its concurrency limit leaves for a dialer. */
    async accountCallLoad(accountId: string) {
      return { active: await repo.countActive(accountId), limit: config.maxConcurrentPerAccount };
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
      if (!row || !isFinal(row.status)) return null;
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
  };
}
