/**
 * HTTP Digest authentication as SIP uses it (RFC 2617, RFC 7616 for SHA-256, RFC 8760): a trunk answers an
 * INVITE with 401 (WWW-Authenticate) or 407 (Proxy-Authenticate); the INVITE is sent again with Authorization
 * or Proxy-Authorization. verifyDigestAuthorization is the far end's side, for tests and a local trunk.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { SipFormatError, splitOutsideQuotes, unquote, quote } from './sip-uri.js';

export type DigestAlgorithm = 'MD5' | 'MD5-sess' | 'SHA-256' | 'SHA-256-sess';
const ALGORITHMS: readonly DigestAlgorithm[] = ['MD5', 'MD5-sess', 'SHA-256', 'SHA-256-sess'];

export interface DigestChallenge {
  realm: string;
  nonce: string;
  opaque?: string;
  /** MD5 when the challenge names none. */
  algorithm: DigestAlgorithm;
  /** The qop values offered (`auth`, `auth-int`); empty for an RFC 2069-style challenge. */
  qop: string[];
  /** The nonce was merely old: send again with the new one, the password was not wrong. */
  stale: boolean;
}

/** `Digest realm="…", nonce="…", …` into its fields; throws on another scheme or a missing realm or nonce. */
export function parseDigestChallenge(value: string): DigestChallenge {
  const params = parseDigestParams(value);
  const realm = params.get('realm');
  const nonce = params.get('nonce');
  if (realm === undefined || nonce === undefined)
    throw new SipFormatError('a Digest challenge needs a realm and a nonce');
  const algorithmName = params.get('algorithm') ?? 'MD5';
  const algorithm = ALGORITHMS.find((name) => name.toLowerCase() === algorithmName.toLowerCase());
  if (!algorithm) throw new SipFormatError(`unsupported digest algorithm: ${algorithmName}`);
  const opaque = params.get('opaque');
  return {
    realm,
    nonce,
    ...(opaque !== undefined ? { opaque } : {}),
    algorithm,
    qop: (params.get('qop') ?? '')
      .split(',')
      .map((q) => q.trim().toLowerCase())
      .filter((q) => q !== ''),
    stale: (params.get('stale') ?? '').toLowerCase() === 'true',
  };
}

export interface DigestCredentials {
  username: string;
  password: string;
}

export interface DigestRequest {
  method: string;
  /** The Request-URI as sent, exactly: it is part of the hash. */
  uri: string;
}

export interface DigestResponseFields {
  username: string;
  realm: string;
  nonce: string;
  uri: string;
  algorithm: DigestAlgorithm;
  response: string;
  opaque?: string;
  qop?: 'auth';
  /** 8 hex digits, counting the requests sent with this nonce. */
  nc?: string;
  cnonce?: string;
}

/**
 * The digest response for a challenge. With qop=auth offered it uses it (nc and cnonce); auth-int alone is not
 * supported, as a trunk that insists on hashing the body is rare, and says so.
 */
export function computeDigestResponse(
  challenge: DigestChallenge,
  credentials: DigestCredentials,
  request: DigestRequest,
  options: { nonceCount?: number; cnonce?: string } = {},
): DigestResponseFields {
  if (challenge.qop.length > 0 && !challenge.qop.includes('auth')) {
    throw new SipFormatError(`unsupported qop: ${challenge.qop.join(', ')}`);
  }
  const useQop = challenge.qop.includes('auth');
  const nc = (options.nonceCount ?? 1).toString(16).padStart(8, '0');
  const cnonce = options.cnonce ?? randomBytes(12).toString('hex');
  const response = digestHash({
    algorithm: challenge.algorithm,
    username: credentials.username,
    password: credentials.password,
    realm: challenge.realm,
    nonce: challenge.nonce,
    method: request.method,
    uri: request.uri,
    ...(useQop || challenge.algorithm.endsWith('-sess') ? { cnonce } : {}),
    ...(useQop ? { qop: 'auth', nc } : {}),
  });
  return {
    username: credentials.username,
    realm: challenge.realm,
    nonce: challenge.nonce,
    uri: request.uri,
    algorithm: challenge.algorithm,
    response,
    ...(challenge.opaque !== undefined ? { opaque: challenge.opaque } : {}),
    ...(useQop || challenge.algorithm.endsWith('-sess') ? { cnonce } : {}),
    ...(useQop ? { qop: 'auth' as const, nc } : {}),
  };
}

/** The Authorization (or Proxy-Authorization) header value: qop, nc and algorithm unquoted (RFC 7616 3.4). */
export function formatDigestAuthorization(fields: DigestResponseFields): string {
  const parts = [
    `username=${quote(fields.username)}`,
    `realm=${quote(fields.realm)}`,
    `nonce=${quote(fields.nonce)}`,
    `uri=${quote(fields.uri)}`,
    `response=${quote(fields.response)}`,
    `algorithm=${fields.algorithm}`,
  ];
  if (fields.cnonce !== undefined) parts.push(`cnonce=${quote(fields.cnonce)}`);
  if (fields.opaque !== undefined) parts.push(`opaque=${quote(fields.opaque)}`);
  if (fields.qop !== undefined) parts.push(`qop=${fields.qop}`, `nc=${fields.nc}`);
  return `Digest ${parts.join(', ')}`;
}

/** One call for the common case: the header value answering `challengeHeader`. */
export function buildDigestAuthorization(
  challengeHeader: string,
  credentials: DigestCredentials,
  request: DigestRequest,
  options: { nonceCount?: number; cnonce?: string } = {},
): string {
  return formatDigestAuthorization(
    computeDigestResponse(parseDigestChallenge(challengeHeader), credentials, request, options),
  );
}

/** Reads an Authorization header back into its fields (the far end's view). */
export function parseDigestAuthorization(value: string): DigestResponseFields {
  const params = parseDigestParams(value);
  const need = (name: string) => {
    const found = params.get(name);
    if (found === undefined) throw new SipFormatError(`Digest credentials without ${name}`);
    return found;
  };
  const algorithmName = params.get('algorithm') ?? 'MD5';
  const algorithm = ALGORITHMS.find((name) => name.toLowerCase() === algorithmName.toLowerCase());
  if (!algorithm) throw new SipFormatError(`unsupported digest algorithm: ${algorithmName}`);
  const qop = params.get('qop');
  if (qop !== undefined && qop !== 'auth') throw new SipFormatError(`unsupported qop: ${qop}`);
  const opaque = params.get('opaque');
  return {
    username: need('username'),
    realm: need('realm'),
    nonce: need('nonce'),
    uri: need('uri'),
    response: need('response'),
    algorithm,
    ...(opaque !== undefined ? { opaque } : {}),
    ...(params.has('cnonce') ? { cnonce: need('cnonce') } : {}),
    ...(qop !== undefined ? { qop: 'auth' as const, nc: need('nc'), cnonce: need('cnonce') } : {}),
  };
}

/** True when the credentials answer this nonce and realm with this password, for this method. */
export function verifyDigestAuthorization(
  value: string,
  expected: { method: string; realm: string; nonce: string; password: string; username?: string },
): boolean {
  let fields: DigestResponseFields;
  try {
    fields = parseDigestAuthorization(value);
  } catch {
    return false;
  }
  if (fields.realm !== expected.realm || fields.nonce !== expected.nonce) return false;
  if (expected.username !== undefined && fields.username !== expected.username) return false;
  const want = digestHash({
    algorithm: fields.algorithm,
    username: fields.username,
    password: expected.password,
    realm: fields.realm,
    nonce: fields.nonce,
    method: expected.method,
    uri: fields.uri,
    ...(fields.cnonce !== undefined ? { cnonce: fields.cnonce } : {}),
    ...(fields.qop !== undefined && fields.nc !== undefined ? { qop: fields.qop, nc: fields.nc } : {}),
  });
  const given = Buffer.from(fields.response.toLowerCase());
  return given.length === want.length && timingSafeEqual(given, Buffer.from(want));
}

/** RFC 7616 3.4.1-3.4.3: response = H(HA1:nonce[:nc:cnonce:qop]:HA2). */
export function digestHash(input: {
  algorithm: DigestAlgorithm;
  username: string;
  password: string;
  realm: string;
  nonce: string;
  method: string;
  uri: string;
  cnonce?: string;
  qop?: string;
  nc?: string;
}): string {
  const hash = (text: string) =>
    createHash(input.algorithm.startsWith('SHA-256') ? 'sha256' : 'md5')
      .update(text, 'utf8')
      .digest('hex');
  let ha1 = hash(`${input.username}:${input.realm}:${input.password}`);
  if (input.algorithm.endsWith('-sess')) {
    if (input.cnonce === undefined) throw new SipFormatError(`${input.algorithm} needs a cnonce`);
    ha1 = hash(`${ha1}:${input.nonce}:${input.cnonce}`);
  }
  const ha2 = hash(`${input.method}:${input.uri}`);
  if (input.qop !== undefined) return hash(`${ha1}:${input.nonce}:${input.nc}:${input.cnonce}:${input.qop}:${ha2}`);
  return hash(`${ha1}:${input.nonce}:${ha2}`);
}

/** `Digest a="x", b=y` into lower-cased names and unquoted values. */
function parseDigestParams(value: string): Map<string, string> {
  const match = /^\s*Digest\s+([\s\S]*)$/i.exec(value);
  if (!match) throw new SipFormatError(`not a Digest header: ${JSON.stringify(value.slice(0, 40))}`);
  const params = new Map<string, string>();
  for (const part of splitOutsideQuotes(match[1]!, ',')) {
    const trimmed = part.trim();
    if (trimmed === '') continue;
    const equals = trimmed.indexOf('=');
    if (equals <= 0) throw new SipFormatError(`bad Digest parameter: ${JSON.stringify(trimmed.slice(0, 40))}`);
    params.set(trimmed.slice(0, equals).trim().toLowerCase(), unquote(trimmed.slice(equals + 1).trim()));
  }
  return params;
}
