/**
 * How deliveries leave the service: which targets are allowed (no private, loopback, link-local or metadata
 * addresses unless the operator allows them), checked when an endpoint is saved and again on every connection, on
 * the address actually connected to (so a name that later resolves elsewhere, DNS rebinding, is refused too), and
 * one POST with a timeout that never follows a redirect.
 */
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import { performance } from 'node:perf_hooks';
import { Agent, request } from 'undici';

/** Address ranges that are never public: loopback, RFC 1918, CGNAT, link-local (and cloud metadata), documentation, multicast... */
// Two lists: a BlockList matches IPv4 addresses against IPv6 rules for mapped forms, so one list would mix them.
const NON_PUBLIC_V4 = new BlockList();
const NON_PUBLIC_V6 = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  NON_PUBLIC_V4.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['::ffff:0:0', 96], // IPv4-mapped
  ['::', 96], // IPv4-compatible (deprecated)
  ['64:ff9b::', 96], // NAT64
  ['64:ff9b:1::', 48],
  ['100::', 64], // discard
  ['2001::', 23], // IETF protocol assignments (Teredo and others)
  ['2001:db8::', 32], // documentation
  ['2002::', 16], // 6to4
  ['fc00::', 7], // unique local, with fd00:ec2::254 (cloud metadata)
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local
  ['ff00::', 8], // multicast
] as const) {
  NON_PUBLIC_V6.addSubnet(network, prefix, 'ipv6');
}

/** Whether an address (v4 or v6) may be the target of a delivery when private targets are not allowed. */
export function isPublicAddress(address: string): boolean {
  const version = isIP(address);
  if (version === 0) return false;
  if (version === 6 && !/^[23]/i.test(address.replace(/^0+/, '') || '0')) {
    // Only global unicast (2000::/3) is public in IPv6.
    return false;
  }
  return version === 4 ? !NON_PUBLIC_V4.check(address, 'ipv4') : !NON_PUBLIC_V6.check(address, 'ipv6');
}

export class TargetRefused extends Error {}

export type Lookup = (
  hostname: string,
  options: LookupOptions,
  callback: (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
) => void;

/** The host of a URL as an address or a name (brackets of an IPv6 literal removed). */
const hostOf = (url: URL) => url.hostname.replace(/^\[(.*)\]$/, '$1');

export interface TargetPolicy {
  allowHttp: boolean;
  allowPrivate: boolean;
  /** Resolves names (the system resolver unless a test gives another). */
  lookup?: Lookup;
}

/** Why a URL cannot be an endpoint, or null when it can: the scheme, and every address its name resolves to now. */
export async function refusalOf(rawUrl: string, policy: TargetPolicy): Promise<string | null> {
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    return 'is not a valid URL';
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && policy.allowHttp)) {
    return policy.allowHttp ? 'must be an http or https URL' : 'must be an https URL';
  }
  if (url.username || url.password) return 'must not carry a user name or password';
  if (policy.allowPrivate) return null;
  const host = hostOf(url);
  if (isIP(host)) return isPublicAddress(host) ? null : `points at a private or reserved address (${host})`;
  const addresses = await new Promise<LookupAddress[]>((resolve) =>
    (policy.lookup ?? (dnsLookup as unknown as Lookup))(host, { all: true }, (error, found) =>
      resolve(error ? [] : Array.isArray(found) ? found : [{ address: found, family: isIP(found) }]),
    ),
  );
  if (addresses.length === 0) return `has a host name that does not resolve (${host})`;
  const refused = addresses.find((a) => !isPublicAddress(a.address));
  return refused ? `resolves to a private or reserved address (${host} -> ${refused.address})` : null;
}

/** A lookup that answers only public addresses: what the connection uses, so it reaches no other kind. */
export function guardedLookup(base: Lookup): Lookup {
  return (hostname, options, callback) => {
    base(hostname, { ...options, all: true }, (error, found) => {
      if (error) return callback(error, options.all ? [] : '', 0);
      const addresses = (Array.isArray(found) ? found : [{ address: found, family: isIP(found) }]).filter((a) =>
        isPublicAddress(a.address),
      );
      if (addresses.length === 0) {
        const refused = Object.assign(new TargetRefused(`${hostname} resolves to a private or reserved address`), {
          code: 'ETARGETREFUSED',
        });
        return callback(refused, options.all ? [] : '', 0);
      }
      if (options.all) return callback(null, addresses);
      callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  };
}

export const DELIVERY_TIMEOUT_MS = 10_000;
const RESPONSE_EXCERPT_BYTES = 1024;
/** Read past the excerpt up to this much so the connection can be reused; a longer answer is cut off. */
const RESPONSE_DRAIN_BYTES = 64 * 1024;

export interface PostResult {
  ok: boolean;
  statusCode: number | null;
  latencyMs: number;
  error: string | null;
  responseExcerpt: string | null;
}

export interface WebhookSender {
  post(url: string, headers: Record<string, string>, body: string): Promise<PostResult>;
  close(): Promise<void>;
}

export function createWebhookSender(policy: TargetPolicy & { timeoutMs?: number }): WebhookSender {
  const timeoutMs = policy.timeoutMs ?? DELIVERY_TIMEOUT_MS;
  const baseLookup = policy.lookup ?? (dnsLookup as unknown as Lookup);
  const agent = new Agent({
    connect: { ...(policy.allowPrivate ? {} : { lookup: guardedLookup(baseLookup) }), timeout: timeoutMs },
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    keepAliveTimeout: 4_000,
    connections: 64,
  });

  return {
    async post(rawUrl, headers, body) {
      const started = performance.now();
      const latency = () => Math.round(performance.now() - started);
      const failed = (error: string): PostResult => ({
        ok: false,
        statusCode: null,
        latencyMs: latency(),
        error,
        responseExcerpt: null,
      });
      // The URL was checked when it was saved; checked again here, as the rules may have changed. A literal address
      // is checked now (the connection makes no lookup for it); a name is checked on the addresses it resolves to.
      const url = new URL(rawUrl);
      const schemeRefusal =
        url.protocol === 'https:' || (url.protocol === 'http:' && policy.allowHttp)
          ? null
          : 'the URL scheme is not allowed';
      if (schemeRefusal) return failed(`target refused: ${schemeRefusal}`);
      const literal = hostOf(url);
      if (!policy.allowPrivate && isIP(literal) && !isPublicAddress(literal))
        return failed(`target refused: ${literal} is a private or reserved address`);
      // One timer for the whole attempt (connect, answer, body); cheaper than AbortSignal.timeout at this rate.
      const deadline = new AbortController();
      const timer = setTimeout(() => deadline.abort(new DOMException('attempt timed out', 'TimeoutError')), timeoutMs);
      try {
        const response = await request(url, {
          method: 'POST',
          headers,
          body,
          dispatcher: agent,
          signal: deadline.signal,
        });
        const chunks: Buffer[] = [];
        let read = 0;
        try {
          for await (const chunk of response.body) {
            const bytes = chunk as Buffer;
            if (read < RESPONSE_EXCERPT_BYTES) chunks.push(bytes);
            read += bytes.length;
            if (read > RESPONSE_DRAIN_BYTES) break;
          }
        } catch {
          // A body cut off after the status arrived: the status still decides.
        }
        if (read > RESPONSE_DRAIN_BYTES) response.body.destroy();
        const excerpt = Buffer.concat(chunks)
          .subarray(0, RESPONSE_EXCERPT_BYTES)
          .toString('utf8')
          .replace(/\uFFFD+$/, '')
          .replace(/\0/g, '');
        const status = response.statusCode;
        const ok = status >= 200 && status < 300;
        const error = ok
          ? null
          : status >= 300 && status < 400
            ? `redirect to ${String(response.headers.location ?? 'nowhere').slice(0, 200)} not followed`
            : `HTTP ${status}`;
        return { ok, statusCode: status, latencyMs: latency(), error, responseExcerpt: excerpt };
      } catch (error) {
        return failed(describeError(error, timeoutMs));
      } finally {
        clearTimeout(timer);
      }
    },
    close: () => agent.close(),
  };
}

function describeError(error: unknown, timeoutMs: number): string {
  const err = error as { name?: string; code?: string; message?: string; cause?: { code?: string; message?: string } };
  const code = err.code ?? err.cause?.code;
  if (code === 'ETARGETREFUSED' || err.cause instanceof TargetRefused || error instanceof TargetRefused) {
    return `target refused: ${(err.cause as Error | undefined)?.message ?? err.message}`;
  }
  if (
    err.name === 'TimeoutError' ||
    code === 'UND_ERR_HEADERS_TIMEOUT' ||
    code === 'UND_ERR_BODY_TIMEOUT' ||
    code === 'UND_ERR_CONNECT_TIMEOUT'
  ) {
    return `timed out after ${timeoutMs / 1000} s`;
  }
  if (code === 'ECONNREFUSED') return 'connection refused';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'host name does not resolve';
  return (code ? `${code}: ` : '') + (err.message ?? 'request failed').slice(0, 300);
}
