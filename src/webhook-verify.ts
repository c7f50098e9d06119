/**
 * Verifies a webhook delivery from Parley, with nothing but node:crypto, so a receiver can copy this file or import it
 * (`import { verifyWebhook } from 'parley/webhook-verify'`).
 *
 * X-Service-Signature is `t=<unix seconds>,v1=<hex>[,v1=<hex>]`: each v1 is the lowercase hex HMAC-SHA256 of the raw
 * request body under the endpoint's signing secret (two v1 values while a rotated secret is still valid). The delivery
 * is accepted when one v1 matches (compared in constant time) and the timestamp is within the tolerance of the
 * receiver's clock (5 minutes by default).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

export type WebhookVerification =
  | { valid: true; deliveryId: string | null; event: string | null; timestamp: number }
  | {
      valid: false;
      reason: 'missing_signature' | 'malformed_signature' | 'timestamp_out_of_tolerance' | 'signature_mismatch';
    };

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  const value =
    record[name] ??
    record[name.toLowerCase()] ??
    Object.entries(record).find(([key]) => key.toLowerCase() === name.toLowerCase())?.[1];
  return Array.isArray(value) ? value[0] : value;
}

export function verifyWebhook(
  rawBody: string | Uint8Array,
  headers: WebhookHeaders,
  secret: string,
  options: { toleranceSec?: number; nowSec?: number } = {},
): WebhookVerification {
  const signature = header(headers, 'x-service-signature');
  if (!signature) return { valid: false, reason: 'missing_signature' };
  let timestamp: number | null = null;
  const candidates: string[] = [];
  for (const part of signature.split(',')) {
    const at = part.indexOf('=');
    const key = part.slice(0, at).trim();
    const value = part.slice(at + 1).trim();
    if (key === 't' && /^\d{1,12}$/.test(value)) timestamp = Number(value);
    else if (key === 'v1' && /^[0-9a-f]{64}$/.test(value)) candidates.push(value);
  }
  if (timestamp === null || candidates.length === 0) return { valid: false, reason: 'malformed_signature' };
  const now = options.nowSec ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - timestamp) > (options.toleranceSec ?? 300))
    return { valid: false, reason: 'timestamp_out_of_tolerance' };
  const expected = createHmac('sha256', secret).update(rawBody).digest();
  const matches = candidates.some((candidate) => timingSafeEqual(Buffer.from(candidate, 'hex'), expected));
  if (!matches) return { valid: false, reason: 'signature_mismatch' };
  return {
    valid: true,
    deliveryId: header(headers, 'x-service-delivery') ?? null,
    event: header(headers, 'x-service-event') ?? null,
    timestamp,
  };
}
