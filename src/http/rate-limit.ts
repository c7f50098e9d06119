import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from './errors.js';
import type { CounterStore } from '../lib/counter-store.js';

const WINDOW_MS = 60_000;

export interface RateLimitOptions {
  store: CounterStore;
  /** SPEC §8: 300 requests per minute per API key; sessions get the same budget per user. */
  perMinute: number;
  /** Unauthenticated requests are counted per client IP under their own limit. */
  anonymousPerMinute: number;
}

/** The bucket a request is counted in, and that bucket's limit. */
function bucketOf(request: FastifyRequest, options: RateLimitOptions): { key: string; limit: number } {
  const auth = request.auth as FastifyRequest['auth'] | undefined;
  if (auth?.apiKeyId) return { key: `rl:key:${auth.apiKeyId}`, limit: auth.rateLimitPerMinute ?? options.perMinute };
  if (auth?.userId) return { key: `rl:user:${auth.userId}`, limit: auth.rateLimitPerMinute ?? options.perMinute };
  return { key: `rl:ip:${request.ip}`, limit: options.anonymousPerMinute };
}

/**
 * Counts the request and sets the RateLimit headers (IETF draft "RateLimit header fields").
 * Past the limit it throws 429 with details.retryAfterSec and a Retry-After header.
 */
export async function enforceRateLimit(request: FastifyRequest, reply: FastifyReply, options: RateLimitOptions) {
  const { key, limit } = bucketOf(request, options);
  const { count, resetMs } = await options.store.hit(key, WINDOW_MS);
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
