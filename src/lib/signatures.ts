/**
 * HMAC-SHA256 signatures: on URLs that grant access for a while (a call's recording), and on callbacks from outside
 * services (`X-Service-Signature: t=<unix seconds>,v1=<hex>`, the scheme outbound webhooks use too).
 */
import { createHmac } from 'node:crypto';
import { safeEqual } from './crypto.js';

export const hmacSha256Hex = (secret: string, text: string): string =>
  createHmac('sha256', secret).update(text).digest('hex');

/** A callback's signature header: the HMAC of `<t>.<raw body>`, so the timestamp cannot be swapped. */
export function signatureHeader(secret: string, body: string, unixSeconds: number): string {
  return `t=${unixSeconds},v1=${hmacSha256Hex(secret, `${unixSeconds}.${body}`)}`;
}

export type SignatureCheck = 'valid' | 'missing' | 'malformed' | 'outside_tolerance' | 'mismatch';

/** Checks a signature header against the raw body, within `toleranceSeconds` of `nowSeconds` either way. */
export function checkSignatureHeader(
  secret: string,
  header: string | undefined,
  body: string,
  nowSeconds: number,
  toleranceSeconds = 300,
): SignatureCheck {
  if (!header) return 'missing';
  const parts = new Map<string, string[]>();
  for (const piece of header.split(',')) {
    const at = piece.indexOf('=');
    if (at <= 0) return 'malformed';
    const key = piece.slice(0, at).trim();
    parts.set(key, [...(parts.get(key) ?? []), piece.slice(at + 1).trim()]);
  }
  const t = parts.get('t')?.[0];
  const signatures = parts.get('v1') ?? [];
  if (!t || !/^\d{1,12}$/.test(t) || signatures.length === 0) return 'malformed';
  if (Math.abs(nowSeconds - Number(t)) > toleranceSeconds) return 'outside_tolerance';
  const expected = hmacSha256Hex(secret, `${t}.${body}`);
  // Several v1 values are allowed, so a secret can be rotated without a gap.
  return signatures.some((signature) => safeEqual(signature.toLowerCase(), expected)) ? 'valid' : 'mismatch';
}
