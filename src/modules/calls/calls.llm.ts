/**
 * What the LLM proxy needs from a call: short-lived per-call tokens (the engine gives one to a voice provider that
 * runs the conversation itself, so it can reach the proxy for this call's agent and nothing else), the check that a
 * call named by a request belongs to the agent, and each proxied turn recorded on the call: the knowledge chunks it
 * retrieved on the call's timeline, and its tokens as priced cost items.
 */
import { createHmac, randomBytes } from 'node:crypto';
import type { CallsConfig } from '../../config.js';
import type { Clock } from '../../lib/clock.js';
import { safeEqual } from '../../lib/crypto.js';
import { CALL_TOKEN_PREFIX } from '../../http/auth.js';
import type { CallsRepo } from './calls.repo.js';
import type { PricingForCalls } from './calls.ports.js';
import { priceCall } from './calls.costs.js';
import { isFinal } from './calls.tables.js';

/** A token outlives the longest call by this much at most; the call's end revokes it sooner. */
const TOKEN_GRACE_SECONDS = 300;

export interface CallGrant {
  accountId: string;
  agentId: string;
  callId: string;
}

export function createCallLlm(deps: { repo: CallsRepo; clock: Clock; config: CallsConfig; pricing: PricingForCalls }) {
  const { repo, clock, config, pricing } = deps;
  let secret: Promise<string> | undefined;
  const signingSecret = () =>
    (secret ??= repo.serverSecret('llm-call-token', randomBytes(32).toString('base64url')).catch((error: unknown) => {
      secret = undefined;
      throw error;
    }));
  const signatureOf = async (payload: string) =>
    createHmac('sha256', await signingSecret())
      .update(payload)
      .digest('base64url');
  /** The token for a payload, exactly as issued: the prefix, the payload, a dot and the payload's signature. */
  const issuedToken = async (payload: string) => `${CALL_TOKEN_PREFIX}${payload}.${await signatureOf(payload)}`;

  return {
    /** A token for the proxy of the call's agent, valid while the call is under way. Undefined for an unknown call. */
    async llmCallToken(accountId: string, callId: string) {
      const call = await repo.findRow(accountId, callId);
      if (!call?.agent_id) return undefined;
      const expires = Math.floor(clock.now().getTime() / 1000) + config.maxDurationSeconds + TOKEN_GRACE_SECONDS;
      const payload = Buffer.from(JSON.stringify({ a: accountId, g: call.agent_id, c: callId, e: expires })).toString(
        'base64url',
      );
      return {
        token: await issuedToken(payload),
        expiresAt: new Date(expires * 1000).toISOString(),
      };
    },

    /**
     * What a per-call token grants, or null when it is forged, altered, expired, or its call has ended. Only the token
     * exactly as issued passes: the whole of it is compared with the one its payload signs (nothing appended).
     */
    async llmCallGrant(token: string): Promise<CallGrant | null> {
      if (!token.startsWith(CALL_TOKEN_PREFIX) || token.length > 1000) return null;
      const payload = token.slice(CALL_TOKEN_PREFIX.length).split('.', 1)[0]!;
      if (!payload || !safeEqual(token, await issuedToken(payload))) return null;
      let claims: { a?: unknown; g?: unknown; c?: unknown; e?: unknown };
      try {
        claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as typeof claims;
      } catch {
        return null;
      }
      const { a, g, c, e } = claims;
      if (typeof a !== 'string' || typeof g !== 'string' || typeof c !== 'string' || typeof e !== 'number') return null;
      if (e * 1000 <= clock.now().getTime()) return null;
      const call = await repo.findRow(a, c);
      if (!call || call.agent_id !== g || isFinal(call.status)) return null;
      return { accountId: a, agentId: g, callId: c };
    },

    /** Whether the account has this call, made by this agent. */
    async isCallOfAgent(accountId: string, callId: string, agentId: string) {
      const call = await repo.findRow(accountId, callId);
      return call?.agent_id === agentId;
    },

    /**
     * Records one proxied turn on the call: the knowledge it retrieved (an event on the timeline, when any), and,
     * when `usage` is given, its tokens as cost items priced by the catalog (the agent's model, or the default). The
     * engine's own conversations pass no usage: their tokens are priced with the rest of the call when it ends.
     */
    async recordLlmTurn(
      accountId: string,
      callId: string,
      turn: { chunkIds: string[]; usage?: { inputTokens: number; outputTokens: number }; modelId: string | null },
    ) {
      await repo.transaction(async (tx) => {
        const now = clock.now();
        if (turn.chunkIds.length > 0) {
          await tx.insertEvents(accountId, [
            { callId, type: 'call.knowledge_retrieved', data: { callId, chunkIds: turn.chunkIds }, occurredAt: now },
          ]);
        }
        if (turn.usage && (turn.usage.inputTokens > 0 || turn.usage.outputTokens > 0)) {
          const items = await priceCall(pricing, tx, {
            direction: 'outbound',
            farEndNumber: null,
            durationSeconds: 0,
            usage: { llmInputTokens: turn.usage.inputTokens, llmOutputTokens: turn.usage.outputTokens },
            llmModelId: turn.modelId,
          });
          await tx.insertCostItems(accountId, callId, items, now);
        }
      });
    },
  };
}

export type CallLlm = ReturnType<typeof createCallLlm>;
