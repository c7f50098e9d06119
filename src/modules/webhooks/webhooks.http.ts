/**
 * How deliveries leave the service: which targets are allowed (no private, loopback, link-local or metadata
 * addresses unless the operator allows them), checked when an endpoint is saved and again on every connection, on
 * the address actually connected to (so a name that later resolves elsewhere, DNS rebinding, is refused too), and
 * one POST with a timeout that never follows a redirect.
 */
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import { performance } from 'node:perf_hooks';
import ipaddr from 'ipaddr.js';
import { Agent } from 'undici';

/** IPv6 global unicast, the only IPv6 space allocated for public use. */
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3') as [ipaddr.IPv6, number];

/**
 * Whether an address (v4 or v6) may be the target of a delivery when private targets are not allowed: classified by
 * range, not by its text. Only unicast is public: loopback, private, CGNAT, link-local (and cloud metadata),
 * documentation, benchmarking, multicast, reserved, NAT64, 6to4, Teredo and IPv4-mapped or -compatible IPv6 forms are
 * not. In IPv6 the address must also lie in global unicast (2000::/3): the rest of the space is reserved.
 */
export function isPublicAddress(address: string): boolean {
  if (isIP(address) === 0) return false;
  const parsed = ipaddr.parse(address);
  if (parsed.range() !== 'unicast') return false;
  return parsed.kind() === 'ipv4' || (parsed as ipaddr.IPv6).match(GLOBAL_UNICAST_V6);
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
/** How many URLs a sender keeps parsed and checked (the same endpoints are posted to again and again). */
const TARGET_CACHE_SIZE = 512;

export interface PostResult {
  ok: boolean;
  statusCode: number | null;
  latencyMs: number;
  error: string | null;
  responseExcerpt: string | null;
  /** No answer came within the attempt's limit (no status: the receiver never answered, or never accepted). */
  timedOut: boolean;
}

export interface WebhookSender {
  post(url: string, headers: Record<string, string>, body: string): Promise<PostResult>;
  /** The attempts under way, oldest first: the status each has received, or null before one. */
  underWay(): Array<number | null>;
  close(): Promise<void>;
}

/** Where a URL is posted (origin and path as undici takes them), or why it may not be. */
type Target = { origin: string; path: string; refusal: null } | { origin: ''; path: ''; refusal: string };

/** Stands for every timeout of an attempt: the sender's own limit, or one of undici's (connect, headers, body). */
const TIMED_OUT = Object.assign(new Error('attempt timed out'), { name: 'TimeoutError' });

/**
 * One attempt, as the handler undici's dispatch calls back: the status, the first 1 KB of the answer (the rest only
 * counted, up to RESPONSE_DRAIN_BYTES), and one answer, given once, whichever ends it first: the response's end, an
 * error, the answer cut off, or the attempt's deadline (the sender's sweep).
 *
 * It implements undici's first handler interface (onConnect, onHeaders, onData, onComplete, onError), which undici 7
 * still calls directly; the newer one (onRequestStart, onResponseStart...) goes through an adapter that also parses
 * every response's headers into an object: some 10 to 25 µs more CPU per request (of about 110), measured against a
 * local receiver.
 */
class Attempt {
  /** Set until the attempt has its answer. */
  resolve: ((result: PostResult) => void) | null = null;
  /** Drops the request (and its connection); set once the request has a connection. */
  abort: ((error: Error) => void) | null = null;
  statusCode = 0;
  location: string | string[] | undefined = undefined;
  first: Buffer | null = null;
  more: Buffer[] | null = null;
  read = 0;

  constructor(
    readonly sending: Sending,
    readonly started: number,
  ) {}

  onConnect(abort: (error?: Error) => void) {
    // Ended already (the deadline passed while it waited for a connection): it goes no further.
    if (this.resolve === null) abort(TIMED_OUT);
    else this.abort = abort;
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[]): boolean {
    if (statusCode < 200) return true; // informational (103 Early Hints...): the answer is still to come
    this.statusCode = statusCode;
    if (statusCode >= 300 && statusCode < 400) {
      // Only a redirect's headers are read: its Location (several are joined, as undici's parsed headers were).
      for (let i = 0; i < rawHeaders.length; i += 2) {
        const name = rawHeaders[i]!;
        if (name.length === 8 && name.toString('latin1').toLowerCase() === 'location') {
          const value = rawHeaders[i + 1]!.toString('latin1');
          this.location = this.location === undefined ? value : [this.location, value].flat();
        }
      }
    }
    return true;
  }

  onData(chunk: Buffer): boolean {
    if (this.read < RESPONSE_EXCERPT_BYTES) {
      if (this.first === null) this.first = chunk;
      else (this.more ??= [this.first]).push(chunk);
    }
    this.read += chunk.length;
    if (this.read > RESPONSE_DRAIN_BYTES && this.resolve !== null) {
      // Too long to read for the connection's sake: answered by its status, reading paused (false), and the
      // connection dropped once undici's parser has returned (it expects no abort from inside this callback).
      this.answer();
      const abort = this.abort!;
      queueMicrotask(() => abort(TIMED_OUT));
      return false;
    }
    return true;
  }

  onComplete() {
    this.answer();
  }

  onError(error: Error) {
    // A body cut off after the status arrived: the status still decides.
    if (this.statusCode !== 0) this.answer();
    else this.fail(describeError(error, this.sending.timeoutMs), isTimeout(error));
  }

  /** The deadline passed: whatever arrived by then decides, and the request is dropped. */
  expire() {
    if (this.statusCode !== 0) this.answer();
    else this.fail(`timed out after ${this.sending.timeoutMs / 1000} s`, true);
    this.abort?.(TIMED_OUT);
  }

  answer() {
    const resolve = this.resolve;
    if (resolve === null) return;
    const status = this.statusCode;
    const bytes = this.more === null ? this.first : Buffer.concat(this.more);
    let excerpt = bytes === null ? '' : bytes.toString('utf8', 0, Math.min(bytes.length, RESPONSE_EXCERPT_BYTES));
    if (excerpt.endsWith('\uFFFD')) excerpt = excerpt.replace(/\uFFFD+$/, '');
    if (excerpt.includes('\0')) excerpt = excerpt.replace(/\0/g, '');
    const ok = status >= 200 && status < 300;
    const error = ok
      ? null
      : status >= 300 && status < 400
        ? `redirect to ${String(this.location ?? 'nowhere').slice(0, 200)} not followed`
        : `HTTP ${status}`;
    this.settle();
    resolve({
      ok,
      statusCode: status,
      latencyMs: Math.round(this.sending.now() - this.started),
      error,
      responseExcerpt: excerpt,
      timedOut: false,
    });
  }

  fail(error: string, timedOut = false) {
    const resolve = this.resolve;
    if (resolve === null) return;
    this.settle();
    resolve(failure(this.started, this.sending.now(), error, timedOut));
  }

  settle() {
    this.resolve = null;
    this.first = null;
    this.more = null;
    this.sending.inFlight.delete(this);
  }
}

/** What the attempts of one sender share. */
interface Sending {
  timeoutMs: number;
  now: () => number;
  /** Attempts under way, in the order they started: the order of their deadlines. */
  inFlight: Set<Attempt>;
}

const failure = (started: number, now: number, error: string, timedOut = false): PostResult => ({
  ok: false,
  statusCode: null,
  latencyMs: Math.round(now - started),
  error,
  responseExcerpt: null,
  timedOut,
});

export interface SenderOptions extends TargetPolicy {
  /** The limit of one attempt, from its start to its answer's end, on the sender's time. */
  timeoutMs?: number;
  /** The sender's time in milliseconds: a monotonic clock, unless a test gives one it moves itself. */
  now?: () => number;
}

export function createWebhookSender(options: SenderOptions): WebhookSender {
  const timeoutMs = options.timeoutMs ?? DELIVERY_TIMEOUT_MS;
  const now = options.now ?? (() => performance.now());
  const baseLookup = options.lookup ?? (dnsLookup as unknown as Lookup);
  // undici's own limits run on real time: they only back up the sweep below, so they are never shorter than the usual
  // limit of an attempt (a test's sender on a time of its own is never cut off by them).
  const backstopMs = Math.max(timeoutMs, DELIVERY_TIMEOUT_MS);
  const agent = new Agent({
    connect: { ...(options.allowPrivate ? {} : { lookup: guardedLookup(baseLookup) }), timeout: backstopMs },
    headersTimeout: backstopMs,
    bodyTimeout: backstopMs,
    keepAliveTimeout: 4_000,
    connections: 64,
  });
  const sending: Sending = { timeoutMs, now, inFlight: new Set() };

  // One coarse sweep instead of a timer per attempt: it ends the attempts past their deadline, running only while
  // attempts are under way. An attempt ends at most a sweep's period after its deadline.
  const sweepMs = Math.min(250, Math.max(10, Math.floor(timeoutMs / 20)));
  let sweeper: NodeJS.Timeout | null = null;
  const sweep = () => {
    if (sending.inFlight.size === 0) {
      clearInterval(sweeper!);
      sweeper = null;
      return;
    }
    const expired = now() - timeoutMs;
    for (const attempt of sending.inFlight) {
      if (attempt.started > expired) break;
      attempt.expire();
    }
  };

  // The URL was checked when it was saved; checked again here, as the rules may have changed since (this sender's
  // rules are fixed, so a URL's verdict is kept). A literal address is checked now (the connection makes no lookup
  // for it); a name is checked on the addresses it resolves to, on every connection.
  const targets = new Map<string, Target>();
  const targetOf = (rawUrl: string): Target => {
    let target = targets.get(rawUrl);
    if (target === undefined) {
      target = checkTarget(rawUrl, options);
      if (targets.size >= TARGET_CACHE_SIZE) targets.delete(targets.keys().next().value!);
      targets.set(rawUrl, target);
    }
    return target;
  };

  return {
    post(rawUrl, headers, body) {
      const started = now();
      const target = targetOf(rawUrl);
      if (target.refusal !== null) return Promise.resolve(failure(started, now(), target.refusal));
      const attempt = new Attempt(sending, started);
      const result = new Promise<PostResult>((resolve) => (attempt.resolve = resolve));
      sending.inFlight.add(attempt);
      sweeper ??= setInterval(sweep, sweepMs).unref();
      try {
        agent.dispatch({ origin: target.origin, path: target.path, method: 'POST', headers, body }, attempt);
      } catch (error) {
        attempt.fail(describeError(error, timeoutMs));
      }
      return result;
    },
    underWay: () => [...sending.inFlight].map((attempt) => (attempt.statusCode === 0 ? null : attempt.statusCode)),
    close: () => agent.close(),
  };
}

function checkTarget(rawUrl: string, policy: TargetPolicy): Target {
  const refused = (why: string): Target => ({ origin: '', path: '', refusal: `target refused: ${why}` });
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    return refused('the URL is not valid');
  }
  if (!(url.protocol === 'https:' || (url.protocol === 'http:' && policy.allowHttp)))
    return refused('the URL scheme is not allowed');
  const literal = hostOf(url);
  if (!policy.allowPrivate && isIP(literal) && !isPublicAddress(literal))
    return refused(`${literal} is a private or reserved address`);
  return { origin: url.origin, path: url.search ? `${url.pathname}${url.search}` : url.pathname, refusal: null };
}

type ErrorLike = { name?: string; code?: string; message?: string; cause?: { code?: string; message?: string } };

/** Whether an error is one of the attempt's time limits (the sender's own, or undici's connect or headers limit). */
function isTimeout(error: unknown): boolean {
  const err = error as ErrorLike;
  const code = err.code ?? err.cause?.code;
  return (
    err.name === 'TimeoutError' ||
    code === 'UND_ERR_HEADERS_TIMEOUT' ||
    code === 'UND_ERR_BODY_TIMEOUT' ||
    code === 'UND_ERR_CONNECT_TIMEOUT'
  );
}

function describeError(error: unknown, timeoutMs: number): string {
  const err = error as ErrorLike;
  const code = err.code ?? err.cause?.code;
  if (code === 'ETARGETREFUSED' || err.cause instanceof TargetRefused || error instanceof TargetRefused) {
    return `target refused: ${(err.cause as Error | undefined)?.message ?? err.message}`;
  }
  if (isTimeout(error)) return `timed out after ${timeoutMs / 1000} s`;
  if (code === 'ECONNREFUSED') return 'connection refused';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'host name does not resolve';
  return (code ? `${code}: ` : '') + (err.message ?? 'request failed').slice(0, 300);
}
