/**
 * The voice provider's callbacks, signed with VOICE_PROVIDER_SECRET: a post-call report of a finished call, and an
 * inbound call to one of the accounts' numbers.
 */
import type { CallsConfig } from '../../config.js';
import { AppError, invalidField, notFound } from '../../lib/errors.js';
import type { Clock } from '../../lib/clock.js';
import { checkSignatureHeader } from '../../lib/signatures.js';
import { validateObjectKey } from '../../providers/storage/index.js';
import type { CallLifecycle } from './calls.lifecycle.js';
import type { AgentsForCalls, ContactsForCalls, DispositionsForCalls, NumbersForCalls } from './calls.ports.js';
import type { CallsRepo } from './calls.repo.js';
import { postCallReport } from './calls.rules.js';
import { recordingsPrefix } from './calls.runner.js';
import type { InboundCallBody, PostCallBody } from './calls.schemas.js';

export interface CallsProviderDeps {
  repo: CallsRepo;
  clock: Clock;
  config: CallsConfig;
  agents: AgentsForCalls;
  contacts: ContactsForCalls;
  numbers: NumbersForCalls;
  dispositions: DispositionsForCalls;
  lifecycle: CallLifecycle;
}

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

/**
 * A storage key a provider reports must be one the object store accepts, under the call's account's recordings: a
 * signed URL of the call serves it, so a key of another account's would hand out that account's recording.
 */
function checkRecordingKey(key: string | null | undefined, accountId: string) {
  if (!key) return;
  const refused = (message: string) => invalidField('body/recordingStorageKey', message);
  try {
    validateObjectKey(key);
  } catch (error) {
    throw refused(error instanceof Error ? error.message : 'is not a valid storage key');
  }
  const prefix = recordingsPrefix(accountId);
  if (!key.startsWith(prefix))
    throw refused(`must be a key under "${prefix}", where the recordings of the call's account are stored`);
}

export function createCallsProviderCallbacks(deps: CallsProviderDeps) {
  const { repo, clock, config, agents, contacts, numbers, dispositions, lifecycle } = deps;

  /** The number called, routed to its account and its active agent. */
  async function answeringAgent(to: string) {
    const route = await numbers.routeInbound(to);
    if (!route) throw new AppError('not_found', `No account has the number ${to}`);
    if (!route.agentId) {
      throw new AppError('conflict', `The number ${to} has no agent to answer it: assign one to the number`, {
        reason: 'no_agent',
      });
    }
    const agent = await agents.forCall(route.accountId, route.agentId);
    if (agent?.status !== 'active') {
      throw new AppError(
        'conflict',
        `The agent of ${to} is ${agent?.status ?? 'deleted'}: only an active agent answers calls`,
        { reason: 'agent_not_active' },
      );
    }
    return { accountId: route.accountId, agent };
  }

  return {
    /** Checks the signature of a voice-provider callback (see verifyProviderSignature). */
    verifyProviderSignature(header: string | undefined, rawBody: string) {
      verifyProviderSignature(config.voiceProviderSecret, header, rawBody, Math.floor(clock.now().getTime() / 1000));
    },

    /** POST /v1/internal/voice-provider/post-call: a provider's report of a finished call; a repeat changes nothing. */
    async postCall(input: PostCallBody) {
      const call = await repo.findAnyAccount(input.callId);
      if (!call) throw notFound('Call');
      checkRecordingKey(input.recordingStorageKey, call.account_id);
      const row = (await repo.findRow(call.account_id, call.id))!;
      const report = postCallReport(input, row, clock.now());
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
      const { accountId, agent } = await answeringAgent(input.to);
      const contact = await contacts.forCall(accountId, { phone: input.from });
      const queued = await lifecycle.enqueue(
        accountId,
        {
          agent_id: agent.id,
          contact_id: contact?.id ?? null,
          direction: 'inbound',
          from_number: input.from,
          to_number: input.to,
        },
        { actor: null },
      );
      return { ...queued, agentId: agent.id };
    },
  };
}
