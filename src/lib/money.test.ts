import { test } from 'node:test';
import assert from 'node:assert/strict';
import { charge, divideRoundingHalfUp, formatAmount, formatPrice, formatRatio, fromScaled, toScaled } from './money.js';

test('decimal strings convert to scaled integers and back without loss', () => {
  assert.equal(toScaled('0.0140', 8), 1_400_000n);
  assert.equal(toScaled('12', 8), 1_200_000_000n);
  assert.equal(toScaled('0.00000001', 8), 1n);
  assert.equal(toScaled('1.50000000000', 8), 150_000_000n, 'trailing zeros past the scale are fine');
  assert.throws(() => toScaled('0.000000001', 8), /more than 8 decimal places/);
  for (const bad of ['-1', '1e-3', '.5', '1.', 'abc', '']) assert.throws(() => toScaled(bad, 8), RangeError, bad);
  assert.equal(fromScaled(1_400_000n, 8, 2), '0.014');
  assert.equal(fromScaled(500_000_000n, 8, 2), '5.00');
  assert.equal(fromScaled(0n, 6), '0.000000');
  assert.equal(fromScaled(-1n, 6), '-0.000001');
});

test('rounding is half up, once, at the end', () => {
  assert.equal(divideRoundingHalfUp(5n, 10n), 1n);
  assert.equal(divideRoundingHalfUp(4n, 10n), 0n);
  assert.equal(divideRoundingHalfUp(15n, 10n), 2n);
  // 0.000201 per minute for 30 seconds is 0.0001005 exactly: half a micro-dollar rounds up.
  assert.equal(formatAmount(charge('0.000201', 30n, 60n)), '0.000101');
  // Floats get this one wrong: 1.005 * 1000 is 1004.9999999999999 in binary floating point.
  assert.equal(formatAmount(charge('1.005', 1n, 1000n)), '0.001005');
  assert.equal(formatAmount(charge('0.014', 61n, 60n)), '0.014233');
});

test('large quantities stay exact', () => {
  // 10 billion tokens at $0.00015 per 1k: exactly $1,500.
  assert.equal(formatAmount(charge('0.00015', 10_000_000_000n, 1000n)), '1500.000000');
  // 123,456,789 tokens at $0.00015 per 1k = 18.51851835: rounds to 18.518518.
  assert.equal(formatAmount(charge('0.00015', 123_456_789n, 1000n)), '18.518518');
});

test('prices and quantities format for people', () => {
  assert.equal(formatPrice('0.01400000'), '0.014');
  assert.equal(formatPrice('1.15000000'), '1.15');
  assert.equal(formatPrice('0.00000000'), '0.00');
  assert.equal(formatRatio(61n, 60n), '1.016667');
  assert.equal(formatRatio(2350n, 1000n), '2.35');
  assert.equal(formatRatio(0n, 60n), '0');
});
