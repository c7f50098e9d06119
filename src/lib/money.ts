/**
 * Exact money arithmetic on decimal strings: amounts become integers at a fixed scale (bigint), are multiplied
 * and divided as integers, and are rounded once, half up, to micro-dollars. No float ever holds money.
 */

/** Prices are stored with 8 decimal places (numeric(18, 8)). */
export const PRICE_SCALE = 8;
/** Amounts are charged to the micro-dollar (6 places), the scale of a call's cost items and total. */
export const AMOUNT_SCALE = 6;

const DECIMAL = /^(\d+)(?:\.(\d+))?$/;

/** A non-negative decimal string ("0.0140", "12") as an integer of `scale` decimal places; more places throw. */
export function toScaled(value: string, scale: number): bigint {
  const match = DECIMAL.exec(value.trim());
  if (!match) throw new RangeError(`Not a non-negative decimal: "${value}"`);
  const fraction = (match[2] ?? '').replace(/0+$/, '');
  if (fraction.length > scale) throw new RangeError(`"${value}" has more than ${scale} decimal places`);
  return BigInt(match[1]!) * 10n ** BigInt(scale) + BigInt(fraction.padEnd(scale, '0') || '0');
}

/** An integer of `scale` decimal places as a decimal string with at least `minPlaces` and at most `scale` places. */
export function fromScaled(units: bigint, scale: number, minPlaces = scale): string {
  const negative = units < 0n;
  const digits = (negative ? -units : units).toString().padStart(scale + 1, '0');
  const whole = digits.slice(0, digits.length - scale);
  let fraction = digits.slice(digits.length - scale);
  while (fraction.length > minPlaces && fraction.endsWith('0')) fraction = fraction.slice(0, -1);
  return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
}

/** numerator / denominator, rounded half up (both non-negative). */
export function divideRoundingHalfUp(numerator: bigint, denominator: bigint): bigint {
  if (numerator < 0n || denominator <= 0n)
    throw new RangeError('divideRoundingHalfUp takes a non-negative numerator and a positive denominator');
  return (numerator * 2n + denominator) / (denominator * 2n);
}

/**
 * The amount, in micro-dollars, of `units / per` units at `price` (a decimal string, per one unit): for example
 * 61 seconds at a per-minute price is `charge(price, 61n, 60n)`. Exact until the single final rounding.
 */
export function charge(price: string, units: bigint, per: bigint): bigint {
  const priceUnits = toScaled(price, PRICE_SCALE);
  return divideRoundingHalfUp(priceUnits * units, per * 10n ** BigInt(PRICE_SCALE - AMOUNT_SCALE));
}

/** Micro-dollars as an amount string with exactly 6 places ("0.014233"). */
export const formatAmount = (micros: bigint): string => fromScaled(micros, AMOUNT_SCALE);

/** A price as read from numeric(18, 8), without the padding zeros: "0.01400000" → "0.014", "5.00000000" → "5.00". */
export const formatPrice = (price: string): string => fromScaled(toScaled(price, PRICE_SCALE), PRICE_SCALE, 2);

/** A quantity `units / per` as a decimal string, rounded half up to `places`: 61 seconds in minutes → "1.016667". */
export function formatRatio(units: bigint, per: bigint, places = AMOUNT_SCALE): string {
  const scaled = divideRoundingHalfUp(units * 10n ** BigInt(places), per);
  return fromScaled(scaled, places, 0);
}
