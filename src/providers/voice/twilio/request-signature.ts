/**
 * X-Twilio-Signature: how a Twilio-compatible carrier signs the requests it sends us (status callbacks, the voice
 * URL), and how we check them. The signature is base64(HMAC-SHA1(auth token, full URL + each POST parameter's name
 * and value, sorted by name)). A JSON body is not in the signature itself: its SHA-256 (hex) is in the URL's
 * `bodySHA256` query parameter, which the signature covers.
 */
import { createHash, createHmac } from 'node:crypto';
import { safeEqual } from '../../../lib/crypto.js';

export const TWILIO_SIGNATURE_HEADER = 'x-twilio-signature';

/** Form parameters as received; a name sent more than once has all its values. */
export type SignedParams = Readonly<Record<string, string | readonly string[]>>;

/** The string that is signed: the URL, then every parameter name followed by its value, sorted by name. */
export function signaturePayload(url: string, params: SignedParams = {}): string {
  let payload = url;
  for (const name of Object.keys(params).sort()) {
    const value = params[name]!;
    // A repeated name contributes one name+value pair per value, values sorted too.
    const values = typeof value === 'string' ? [value] : [...value].sort();
    for (const each of values) payload += name + each;
  }
  return payload;
}

export function computeSignature(authToken: string, url: string, params: SignedParams = {}): string {
  return createHmac('sha1', authToken).update(signaturePayload(url, params), 'utf8').digest('base64');
}

/** The hex SHA-256 of a JSON body, as the `bodySHA256` query parameter carries it. */
export function bodySha256(body: string | Uint8Array): string {
  return createHash('sha256').update(body).digest('hex');
}

/**
 * The same URL with and without the scheme's default port: carriers sign the URL as they dialled it, and a proxy in
 * front of us may add or drop `:443` / `:80`. Unparsable URLs are tried as given only.
 */
function urlForms(url: string): string[] {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return [url];
  }
  const defaultPort = parsed.protocol === 'https:' ? '443' : parsed.protocol === 'http:' ? '80' : null;
  if (defaultPort === null || (parsed.port !== '' && parsed.port !== defaultPort)) return [url];
  const withoutPort = new URL(url);
  withoutPort.port = '';
  // URL drops a default port on assignment, so the form with it is built by hand.
  const withPort = `${withoutPort.protocol}//${withoutPort.host}:${defaultPort}${withoutPort.pathname}${withoutPort.search}`;
  return [...new Set([url, withoutPort.toString(), withPort])];
}

/** True when `signature` signs this form POST (or GET, with no params) to `url`; compared in constant time. */
export function verifyFormSignature(
  authToken: string,
  url: string,
  params: SignedParams,
  signature: string | null | undefined,
): boolean {
  if (!signature || !authToken) return false;
  let valid = false;
  // Every form is checked (no early exit), so the time taken does not say which one matched.
  for (const form of urlForms(url)) if (safeEqual(computeSignature(authToken, form, params), signature)) valid = true;
  return valid;
}

/**
 * True when `signature` signs `url` (whose query has `bodySHA256`) and that hash is the body's. Only the URL is
 * signed; the body is covered through its hash.
 */
export function verifyJsonBodySignature(
  authToken: string,
  url: string,
  body: string | Uint8Array,
  signature: string | null | undefined,
): boolean {
  let claimed: string | null;
  try {
    claimed = new URL(url).searchParams.get('bodySHA256');
  } catch {
    return false;
  }
  if (!claimed) return false;
  const bodyMatches = safeEqual(bodySha256(body), claimed.toLowerCase());
  const urlSigned = verifyFormSignature(authToken, url, {}, signature);
  return bodyMatches && urlSigned;
}

/** The URL a JSON body is posted to: `url` with `bodySHA256` added to its query, ready to sign. */
export function urlWithBodySha256(url: string, body: string | Uint8Array): string {
  const parsed = new URL(url);
  parsed.searchParams.set('bodySHA256', bodySha256(body));
  return parsed.toString();
}
