/**
 * What the call engine pays for what it used, from the model catalog and the rate table. Every amount is computed
 * exactly from decimal strings and rounded once, half up, to the micro-dollar; the lines are shaped like a call's
 * cost items, and a priced request's amount is the sum of its lines.
 */
import { notFound } from '../../lib/errors.js';
import { isPhoneCountry } from '../../lib/phone.js';
import { charge, formatAmount, formatPrice, formatRatio } from '../../lib/money.js';
import type { CatalogRepo } from './catalog.repo.js';
import type { ModelKind } from './catalog.tables.js';

/** Telephony is priced per direction (a call's direction, as the calls module records it). */
export type TelephonyDirection = 'inbound' | 'outbound';

/** Models are named by id or slug; without one, the kind's default model is priced. */
export type PriceRequest =
  | { kind: 'llm'; modelId?: string; quantity: { inputTokens: number; outputTokens: number } }
  | { kind: 'stt'; modelId?: string; quantity: { seconds: number } }
  | { kind: 'tts'; modelId?: string; quantity: { characters: number } }
  /** `country` is the far end's (ISO alpha-2); a country without a rate of its own gets the * rate. */
  | { kind: 'telephony'; country?: string; direction: TelephonyDirection; quantity: { seconds: number } }
  | { kind: 'platform'; quantity: { seconds: number } };

export type PriceKind = PriceRequest['kind'];

export interface PricedLine {
  kind: PriceKind;
  description: string;
  /** In `unit`s, as a decimal string: minutes are rounded to 6 places, the amount is not (it uses the exact seconds). */
  quantity: string;
  unit: 'minute' | '1k_tokens' | '1k_characters';
  unitPriceUsd: string;
  /** Micro-dollar precision, 6 places. */
  amountUsd: string;
}

export interface Priced {
  kind: PriceKind;
  amountUsd: string;
  lines: PricedLine[];
}

type PricingQueries = Pick<CatalogRepo, 'findForPricing' | 'findRate' | 'platformFeePerMinute'>;

function count(value: number, name: string): bigint {
  if (!Number.isSafeInteger(value) || value < 0)
    throw new RangeError(`${name} must be a whole number >= 0, got ${value}`);
  return BigInt(value);
}

const line = (
  kind: PriceKind,
  description: string,
  unit: PricedLine['unit'],
  units: bigint,
  per: bigint,
  price: string,
) => ({
  micros: charge(price, units, per),
  line: { kind, description, unit, quantity: formatRatio(units, per), unitPriceUsd: formatPrice(price) },
});

const countryOf = (country: string | undefined) => {
  const code = country?.trim().toUpperCase();
  return code && isPhoneCountry(code) ? code : '*';
};

/** The destination named in a line's description (the rate may be the * one). */
const inCountry = (country: string) => (country === '*' ? '' : ` (${country})`);

export async function priceWith(queries: PricingQueries, request: PriceRequest): Promise<Priced> {
  const model = async (kind: ModelKind, reference: string | undefined) => {
    const row = await queries.findForPricing(kind, reference);
    if (!row)
      throw notFound(
        reference === undefined ? `Default ${kind.toUpperCase()} model` : `${kind.toUpperCase()} model ${reference}`,
      );
    return row;
  };
  let priced: Array<ReturnType<typeof line>>;
  switch (request.kind) {
    case 'llm': {
      const row = await model('llm', request.modelId);
      priced = [
        line(
          'llm',
          `${row.name}: input tokens`,
          '1k_tokens',
          count(request.quantity.inputTokens, 'inputTokens'),
          1000n,
          row.input_per_1k_tokens_usd!,
        ),
        line(
          'llm',
          `${row.name}: output tokens`,
          '1k_tokens',
          count(request.quantity.outputTokens, 'outputTokens'),
          1000n,
          row.output_per_1k_tokens_usd!,
        ),
      ];
      break;
    }
    case 'stt': {
      const row = await model('stt', request.modelId);
      priced = [
        line(
          'stt',
          `${row.name}: speech to text`,
          'minute',
          count(request.quantity.seconds, 'seconds'),
          60n,
          row.per_minute_usd!,
        ),
      ];
      break;
    }
    case 'tts': {
      const row = await model('tts', request.modelId);
      const characters = count(request.quantity.characters, 'characters');
      priced = [
        line('tts', `${row.name}: speech synthesis`, '1k_characters', characters, 1000n, row.per_1k_characters_usd!),
      ];
      break;
    }
    case 'telephony': {
      const country = countryOf(request.country);
      const rate = await queries.findRate(country);
      if (!rate) throw notFound('Telephony rate');
      const price = request.direction === 'inbound' ? rate.inbound_per_minute_usd : rate.outbound_per_minute_usd;
      const description = `${request.direction === 'inbound' ? 'Inbound' : 'Outbound'} minutes${inCountry(country)}`;
      priced = [line('telephony', description, 'minute', count(request.quantity.seconds, 'seconds'), 60n, price)];
      break;
    }
    case 'platform': {
      const fee = await queries.platformFeePerMinute();
      priced = [line('platform', 'Platform fee', 'minute', count(request.quantity.seconds, 'seconds'), 60n, fee)];
      break;
    }
  }
  const total = priced.reduce((sum, p) => sum + p.micros, 0n);
  return {
    kind: request.kind,
    amountUsd: formatAmount(total),
    lines: priced.map((p) => ({ ...p.line, amountUsd: formatAmount(p.micros) })),
  };
}
