import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from './errors.js';
import type { CounterStore } from '../lib/counter-store.js';

const WINDOW_MS = 60_000;
// Addresses remembered as blocked, at most: a flood from many addresses must not grow memory without bound.
const MAX_BLOCKED_ADDRESSES = 10_000;

export interface RateLimitOptions {
  store: CounterStore;
  /** 300 requests per minute per API key by default; sessions get the same budget per user. */
  perMinute: number;
  /** Unauthenticated requests, and failed authentications, are counted per client IP under their own limit. */
  anonymousPerMinute: number;
  /** /api/health is counted per client IP in a bucket of its own: each check costs a database round trip. */
  healthPerMinute: number;
}

/** The options plus what this process remembers between requests; build once per app with createRateLimits. */
export interface RateLimits extends RateLimitOptions {
  /** Client IP -> epoch ms until which its failed authentications keep it refused (this process only). */
  readonly blockedUntil: Map<string, number>;
}

export function createRateLimits(options: RateLimitOptions): RateLimits {
  return { ...options, blockedUntil: new Map() };
}

// Requests already counted as a failed authentication, so the anonymous count does not take them twice.
const countedAsFailure = new WeakSet<FastifyRequest>();

const anonymousKey = (request: FastifyRequest) => `rl:ip:${request.ip}`;

/** The bucket a request is counted in, and that bucket's limit. */
function bucketOf(request: FastifyRequest, options: RateLimitOptions): { key: string; limit: number } {
  const auth = request.auth as FastifyRequest['auth'] | undefined;
  if (auth?.apiKeyId) return { key: `rl:key:${auth.apiKeyId}`, limit: auth.rateLimitPerMinute ?? options.perMinute };
  if (auth?.userId) return { key: `rl:user:${auth.userId}`, limit: auth.rateLimitPerMinute ?? options.perMinute };
  // A per-call token: each call has a bucket of its own (a voice provider carries many calls from one address).
  if (auth?.callGrant) return { key: `rl:call:${auth.callGrant.callId}`, limit: options.perMinute };
  return { key: anonymousKey(request), limit: options.anonymousPerMinute };
}

/** Sets the RateLimit headers (IETF draft "RateLimit header fields") and throws 429 past the limit. */
function answer(reply: FastifyReply, limit: number, count: number, resetMs: number) {
  const resetSec = Math.max(1, Math.ceil(resetMs / 1000));
  reply.header('RateLimit-Policy', `${limit};w=${WINDOW_MS / 1000}`);
  reply.header('RateLimit', `limit=${limit}, remaining=${Math.max(0, limit - count)}, reset=${resetSec}`);
  if (count > limit) {
    throw new AppError(
      'rate_limited',
      `Rate limit of ${limit} requests per minute exceeded; wait ${resetSec}s`,
      { retryAfterSec: resetSec },
      { 'Retry-After': String(resetSec) },
    );
  }
}

/**
 * Counts the request and sets the RateLimit headers.
 * Past the limit it throws 429 with details.retryAfterSec and a Retry-After header.
 */
export async function enforceRateLimit(request: FastifyRequest, reply: FastifyReply, options: RateLimitOptions) {
  if (countedAsFailure.has(request)) return;
  const { key, limit } = bucketOf(request, options);
  const { count, resetMs } = await options.store.hit(key, WINDOW_MS, limit);
  answer(reply, limit, count, resetMs);
}

/**
 * Before authenticating: an address whose failed authentications went past its budget is refused for the rest
 * of the window without looking its credentials up, valid or not (they cannot be told apart without the lookup).
 */
export function refuseBlockedClient(request: FastifyRequest, reply: FastifyReply, limits: RateLimits) {
  const until = limits.blockedUntil.get(request.ip);
  if (until === undefined) return;
  const now = Date.now();
  if (until <= now) {
    limits.blockedUntil.delete(request.ip);
    return;
  }
  const limit = limits.anonymousPerMinute;
  answer(reply, limit, limit + 1, until - now);
}

/**
 * After a failed authentication (a bad key or cookie, or none on a route that needs one): counts it in the
 * client's anonymous per-IP bucket, so forging credentials costs the same budget as anonymous requests. Past the
 * budget it throws 429 (instead of the 401) and blocks the address in this process until the window resets.
 * Another instance sharing the counters learns of the block on its own next failure from that address.
 */
export async function countFailedAuthentication(request: FastifyRequest, reply: FastifyReply, limits: RateLimits) {
  countedAsFailure.add(request);
  const limit = limits.anonymousPerMinute;
  const { count, resetMs } = await limits.store.hit(anonymousKey(request), WINDOW_MS);
  if (count > limit) block(limits.blockedUntil, request.ip, Date.now() + resetMs);
  answer(reply, limit, count, resetMs);
}

function block(blockedUntil: Map<string, number>, ip: string, until: number) {
  if (blockedUntil.size >= MAX_BLOCKED_ADDRESSES && !blockedUntil.has(ip)) {
    const now = Date.now();
    for (const [address, end] of blockedUntil) if (end <= now) blockedUntil.delete(address);
    // Still full of live blocks: forget the oldest; its next failure blocks it again.
    if (blockedUntil.size >= MAX_BLOCKED_ADDRESSES) blockedUntil.delete(blockedUntil.keys().next().value!);
  }
  blockedUntil.set(ip, until);
}

/**
 * /api/health, per client IP under its own limit. If the counters themselves are unreachable (Redis down) the
 * check still runs: reporting that is its job.
 */
export async function enforceHealthRateLimit(request: FastifyRequest, reply: FastifyReply, options: RateLimitOptions) {
  let hit: { count: number; resetMs: number };
  try {
    hit = await options.store.hit(`rl:health:${request.ip}`, WINDOW_MS);
  } catch {
    return;
  }
  answer(reply, options.healthPerMinute, hit.count, hit.resetMs);
}
