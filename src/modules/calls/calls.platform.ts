/**
 * What the platform administrator's tools (calls.admin-service.ts) do to calls of any account: queue a test call,
 * hang up a call, or have the agent of a connected call say words, from any instance.
 */
import { actorOf } from '../../events/domain-events.js';
import type { Auth } from '../../lib/caller.js';
import { AppError, invalidField, notFound } from '../../lib/errors.js';
import type { Clock } from '../../lib/clock.js';
import type { CallControl } from './calls.engine.js';
import type { CallLifecycle } from './calls.lifecycle.js';
import type { CallsRepo } from './calls.repo.js';
import { isFinal } from './calls.tables.js';

export interface CallsPlatformDeps {
  repo: CallsRepo;
  clock: Clock;
  lifecycle: CallLifecycle;
  control: CallControl;
}

export function createCallsPlatform({ repo, clock, lifecycle, control }: CallsPlatformDeps) {
  return {
    /**
     * A platform administrator's test call: queued in the agent's account (its events, costs and limits), with no
     * contact, from `fromNumber` to `toNumber`; the checks (agent active, do-not-call, caller number) are the caller's.
     */
    queueTestCall(admin: Auth, accountId: string, call: { agentId: string; fromNumber: string; toNumber: string }) {
      return lifecycle.enqueue(
        accountId,
        {
          agent_id: call.agentId,
          contact_id: null,
          direction: 'outbound',
          from_number: call.fromNumber,
          to_number: call.toNumber,
        },
        { actor: null, testPlacedBy: actorOf(admin) },
      );
    },

    /**
     * Hangs up a call from any instance: a queued call is cancelled here; a live one is ended by the process running it
     * (the request travels by broadcast). It takes any account's call.
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
      if (isFinal(call.status)) throw new AppError('conflict', 'The call has already ended', { status: call.status });
      await control.hangup(callId);
      return { callId, status: call.status, requested: true };
    },

    /** Has the agent of a connected call say `text` next, from any instance. */
    async inject(callId: string, text: string) {
      const call = await repo.findAnyAccount(callId);
      if (!call) throw notFound('Call');
      if (call.status !== 'connected')
        throw new AppError('conflict', 'Text can only be injected into a connected call', { status: call.status });
      const cleaned = text.trim();
      if (!cleaned) throw invalidField('body/text', 'must not be blank');
      await control.inject(callId, cleaned);
      return { callId, status: call.status, requested: true };
    },
  };
}
