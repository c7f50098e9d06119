/**
 * A call's cost line items, priced by the catalog from what the call used: telephony and the platform fee for the
 * connected seconds, LLM input and output tokens, speech synthesis by the character, and speech-to-text for the far
 * end's speech. Each amount is exact (decimal strings from the catalog); the call's total is their sum, kept by a trigger.
 */
import type { TxHandle } from '../../db/repo.js';
import { AppError } from '../../lib/errors.js';
import { countryOfNumber } from '../../lib/phone.js';
import type { PriceRequest, PricingForCalls } from './calls.ports.js';
import { COST_ITEM_KINDS, type CallDirection, type CallUsage, type CostItemKind } from './calls.tables.js';
import type { NewCostItem } from './calls.writes.js';

export interface CallCostInput {
  direction: CallDirection;
  /** The far end's number: its country decides the telephony rate. */
  farEndNumber: string | null;
  /** Connected seconds; 0 for a call nobody answered. */
  durationSeconds: number;
  usage: CallUsage;
  /** The agent's chosen model in the catalog, if any; the catalog's default otherwise. */
  llmModelId: string | null;
}

const isCostKind = (kind: string): kind is CostItemKind => (COST_ITEM_KINDS as readonly string[]).includes(kind);

/** What to price: only what the call used (a call nobody answered costs nothing). */
export function costRequests(input: CallCostInput): PriceRequest[] {
  const requests: PriceRequest[] = [];
  const { usage } = input;
  if (input.durationSeconds > 0) {
    const country = input.farEndNumber ? countryOfNumber(input.farEndNumber) : undefined;
    requests.push({
      kind: 'telephony',
      direction: input.direction,
      ...(country ? { country } : {}),
      quantity: { seconds: input.durationSeconds },
    });
  }
  const inputTokens = usage.llmInputTokens ?? 0;
  const outputTokens = usage.llmOutputTokens ?? 0;
  if (inputTokens > 0 || outputTokens > 0) {
    requests.push({
      kind: 'llm',
      ...(input.llmModelId ? { modelId: input.llmModelId } : {}),
      quantity: { inputTokens, outputTokens },
    });
  }
  if ((usage.ttsCharacters ?? 0) > 0) requests.push({ kind: 'tts', quantity: { characters: usage.ttsCharacters! } });
  const sttSeconds = Math.ceil((usage.sttMs ?? 0) / 1000);
  if (sttSeconds > 0) requests.push({ kind: 'stt', quantity: { seconds: sttSeconds } });
  if (input.durationSeconds > 0) requests.push({ kind: 'platform', quantity: { seconds: input.durationSeconds } });
  return requests;
}

/** Prices each request inside the caller's transaction. An agent model the catalog no longer has is priced as the default. */
export async function priceCall(pricing: PricingForCalls, tx: TxHandle, input: CallCostInput): Promise<NewCostItem[]> {
  const items: NewCostItem[] = [];
  for (const request of costRequests(input)) {
    let priced;
    try {
      priced = await pricing.price(request, tx);
    } catch (error) {
      if (!(error instanceof AppError && error.code === 'not_found' && request.kind === 'llm' && request.modelId))
        throw error;
      priced = await pricing.price({ ...request, modelId: undefined }, tx);
    }
    for (const line of priced.lines) {
      if (!isCostKind(line.kind)) continue;
      items.push({
        kind: line.kind,
        description: line.description,
        quantity: line.quantity,
        unit: line.unit,
        unit_price_usd: line.unitPriceUsd,
        amount_usd: line.amountUsd,
      });
    }
  }
  return items;
}

/**
 * The cost items of a call's analysis: the tokens the agent's model used for it, priced like the call's own (the
 * agent's catalog model, or the default), each line named as the analysis's.
 */
export async function priceAnalysis(
  pricing: PricingForCalls,
  tx: TxHandle,
  input: { usage: { inputTokens: number; outputTokens: number }; llmModelId: string | null },
): Promise<NewCostItem[]> {
  const items = await priceCall(pricing, tx, {
    direction: 'outbound',
    farEndNumber: null,
    durationSeconds: 0,
    usage: { llmInputTokens: input.usage.inputTokens, llmOutputTokens: input.usage.outputTokens },
    llmModelId: input.llmModelId,
  });
  return items.map((item) => ({ ...item, description: `Call analysis, ${item.description}` }));
}
