/**
 * The post-call analysis job (calls.analyze), sent in the transaction that ends an answered call. It reads the call,
 * its transcript and its agent's declared fields, asks the agent's LLM when one is configured (the built-in playbook
 * engine is not a model) and keeps the built-in extractor's analysis when there is none or its answer cannot be
 * used. Then, in one transaction: the analysis, the callback due time on the call, the model's tokens as cost items,
 * and, for a completed call, the call.completed domain event with the analysis in it (webhooks deliver it from
 * there). A call has one analysis: a job run again finds it and does nothing.
 */
import type { Logger } from 'pino';
import type { TxHandle } from '../../db/repo.js';
import type { Clock } from '../../lib/clock.js';
import { timeZonesOfNumber } from '../../lib/phone-timezones.js';
import { canonicalTimeZone } from '../../lib/timezone.js';
import { collectChat, type TokenUsage } from '../../providers/llm/index.js';
import { analyzeTranscript, type AnalysisInput, type AnalysisResult } from './calls.analysis.extractor.js';
import { analysisRequest, readModelAnalysis } from './calls.analysis.model.js';
import { priceAnalysis } from './calls.costs.js';
import type { AgentModelForCalls, AgentsForCalls, DispositionsForCalls, PricingForCalls } from './calls.ports.js';
import type { CallsRepo } from './calls.repo.js';
import { isFinal, type AnalysisMethod, type AnalysisOutcome } from './calls.tables.js';
import { toAnalysis, toCallEndedData } from './calls.views.js';

export interface CallAnalysisDeps {
  repo: CallsRepo;
  clock: Clock;
  agents: AgentsForCalls;
  dispositions: DispositionsForCalls;
  pricing: PricingForCalls;
  agentModel: AgentModelForCalls;
  log: Logger;
  /** A signed URL of the call's recording, for the call.completed event (webhook bodies carry it). */
  recordingUrl(callId: string, within: TxHandle): Promise<string>;
}

/** The callee's zone: the contact's, else their number's (the first of several), else the account's, else UTC. */
export function calleeTimeZone(call: {
  contactTimeZone: string | null;
  farEndNumber: string | null;
  accountTimeZone: string | null;
}): string {
  const candidates = [
    call.contactTimeZone,
    ...(call.farEndNumber ? timeZonesOfNumber(call.farEndNumber).slice(0, 1) : []),
    call.accountTimeZone,
  ];
  for (const candidate of candidates) {
    const zone = candidate ? canonicalTimeZone(candidate) : null;
    if (zone) return zone;
  }
  return 'UTC';
}

/** The minimal analysis, should the extractor ever fail: the call.completed event must still go out. */
const EMPTY_ANALYSIS: AnalysisResult = {
  summary: 'The call could not be analysed.',
  outcome: 'undecided',
  missionSucceeded: false,
  missionReason: 'The call could not be analysed.',
  nextSteps: [],
  callback: null,
  fields: {},
};

export function createCallAnalysis(deps: CallAnalysisDeps) {
  const { repo, clock, agents, dispositions, pricing, agentModel, log } = deps;

  /** What the analysis reads, or null when there is nothing to analyse (no such call, not ended, analysed). */
  async function inputOf(accountId: string, callId: string) {
    const [call, existing] = await Promise.all([
      repo.analysisSubject(accountId, callId),
      repo.findAnalysis(accountId, callId),
    ]);
    // Only a call that ended after someone (or a machine) answered has something to analyse.
    if (!call || !isFinal(call.status) || existing || (!call.answered_at && call.status !== 'completed')) return null;
    const [transcript, agent, disposition] = await Promise.all([
      repo.transcript(accountId, callId),
      call.agent_id ? agents.forCall(accountId, call.agent_id) : undefined,
      call.disposition ? dispositions.resolve(accountId, call.disposition) : null,
    ]);
    const input: AnalysisInput = {
      transcript: transcript.map((turn) => ({ speaker: turn.speaker, text: turn.text })),
      direction: call.direction,
      endReason: call.end_reason,
      disposition: call.disposition,
      dispositionCategory: disposition?.category ?? null,
      durationSeconds: call.duration_seconds,
      endedAt: call.ended_at ?? clock.now(),
      agentName: agent?.name ?? call.agent_name,
      mission: agent?.parts.mission ?? '',
      fields: agent?.analysisFields ?? [],
      contactFirstName: call.contact_first_name,
      timeZone: calleeTimeZone({
        contactTimeZone: call.contact_timezone,
        farEndNumber: call.direction === 'outbound' ? call.to_number : call.from_number,
        accountTimeZone: call.account_timezone,
      }),
    };
    return { call, input, liveLlmId: agent?.liveLlmId ?? null, hasAgent: agent !== undefined };
  }

  /**
   * The model's analysis (`model` names it) and the tokens it used; with `model` null its answer could not be used
   * and the built-in analysis stands (the tokens are still charged). Null when the agent has no model or it failed.
   */
  async function byModel(
    callId: string,
    liveLlmId: string | null,
    input: AnalysisInput,
    fallback: AnalysisResult,
  ): Promise<{ result: AnalysisResult; usage: TokenUsage; model: string | null } | null> {
    const client = await agentModel(liveLlmId);
    if (!client) return null;
    let usage: TokenUsage | null = null;
    try {
      const turn = await collectChat(client.chat(analysisRequest(input)));
      usage = turn.usage;
      return { result: readModelAnalysis(turn.message.content ?? '', input, fallback), usage, model: client.name };
    } catch (error) {
      log.warn({ err: error, callId, model: client.name }, 'the model could not analyse the call; the extractor did');
      return usage ? { result: fallback, usage, model: null } : null;
    }
  }

  return {
    /**
     * The calls.analyze job: writes the analysis of an ended call (see the module comment). Answers what it did;
     * idempotent.
     */
    async analyzeCall(
      accountId: string,
      callId: string,
    ): Promise<{ analyzed: boolean; method?: AnalysisMethod; outcome?: AnalysisOutcome }> {
      const read = await inputOf(accountId, callId);
      if (!read) return { analyzed: false };
      const { input, liveLlmId, hasAgent } = read;
      let fallback: AnalysisResult;
      try {
        fallback = analyzeTranscript(input);
      } catch (error) {
        log.error({ err: error, callId }, 'the built-in extractor failed on a call');
        fallback = EMPTY_ANALYSIS;
      }
      const modelled = hasAgent ? await byModel(callId, liveLlmId, input, fallback) : null;
      const result = modelled?.result ?? fallback;
      const model = modelled?.model ?? null;

      return repo.transaction(async (tx) => {
        const call = await tx.findForUpdate(accountId, callId);
        if (!call) return { analyzed: false };
        const now = clock.now();
        const row = await tx.insertAnalysis(accountId, callId, {
          summary: result.summary,
          outcome: result.outcome,
          mission_succeeded: result.missionSucceeded,
          mission_reason: result.missionReason,
          next_steps: JSON.stringify(result.nextSteps),
          callback_asked: result.callback?.asked ?? null,
          callback_at: result.callback?.at ?? null,
          callback_time_zone: result.callback ? input.timeZone : null,
          fields: JSON.stringify(result.fields),
          method: model ? 'model' : 'transcript',
          model,
          analyzed_at: now,
        });
        if (!row) return { analyzed: false };
        if (modelled && (modelled.usage.inputTokens > 0 || modelled.usage.outputTokens > 0)) {
          const items = await priceAnalysis(pricing, tx, { usage: modelled.usage, llmModelId: liveLlmId });
          await tx.insertCostItems(accountId, callId, items, now);
        }
        const ended = await tx.updateCall(accountId, callId, {
          callback_at: result.callback?.at ?? null,
          updated_at: now,
        });
        // A completed call's end is announced once its analysis exists (an answered call that failed was announced
        // as call.failed when it ended).
        if (ended.status === 'completed') {
          const recordingUrl = ended.recording_storage_key ? await deps.recordingUrl(callId, tx) : null;
          await tx.emit({
            type: 'call.completed',
            accountId,
            subject: { type: 'call', id: callId },
            data: toCallEndedData(ended, recordingUrl, toAnalysis(row)),
            actor: null,
          });
        }
        return { analyzed: true, method: row.method, outcome: result.outcome };
      });
    },
  };
}

export type CallAnalysisService = ReturnType<typeof createCallAnalysis>;
