import { createHash } from 'node:crypto';
import { randomBase62, toBase62 } from '../../lib/crypto.js';

/**
 * An API key is "va_" + 30 random base62 characters (~178 bits) + a 6-character checksum.
 * The checksum lets us reject typos and scanned garbage without a database lookup,
 * and lets secret scanners recognise a real key.
 */
const PREFIX = 'va_';
const RANDOM_LENGTH = 30;
const CHECKSUM_LENGTH = 6;
const KEY_PATTERN = new RegExp(`^${PREFIX}[0-9A-Za-z]{${RANDOM_LENGTH + CHECKSUM_LENGTH}}$`);

function checksum(random: string): string {
  return toBase62(createHash('sha256').update(random).digest().subarray(0, 8), CHECKSUM_LENGTH);
}

export function generateApiKey(): string {
  const random = randomBase62(RANDOM_LENGTH);
  return PREFIX + random + checksum(random);
}

export function isWellFormedApiKey(key: string): boolean {
  if (!KEY_PATTERN.test(key)) return false;
  const random = key.slice(PREFIX.length, PREFIX.length + RANDOM_LENGTH);
  return key.slice(PREFIX.length + RANDOM_LENGTH) === checksum(random);
}

/** What the UI shows to tell keys apart: "va_" and the first 6 random characters. */
export const displayPrefix = (key: string) => key.slice(0, PREFIX.length + 6);
