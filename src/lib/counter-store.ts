import type { Redis } from 'ioredis';

/**
 * Fixed-window counters: rate limits and login throttling count hits here.
 * In Redis they are shared by every instance; in memory they are per process.
 */
export interface CounterStore {
  /**
   * Adds one hit to `key`'s current window and returns the count so far and the ms until the window resets.
   * `budget`, the most the key may count in a window, lets a shared store take hits in advance in small batches
   * (leases) instead of a round trip each; without it every hit is counted where it is shared, exactly.
   */
  hit(key: string, windowMs: number, budget?: number): Promise<{ count: number; resetMs: number }>;
  /** Reads the count without adding a hit. */
  peek(key: string): Promise<number>;
  /** Takes one hit back (an attempt counted up front that turned out fine); never below zero, window unchanged. */
  unhit(key: string): Promise<void>;
  reset(key: string): Promise<void>;
  close(): Promise<void>;
}

export function createMemoryCounterStore(now: () => number = Date.now): CounterStore {
  const windows = new Map<string, { count: number; resetAt: number }>();
  // Sweep expired windows now and then so the map cannot grow without bound.
  const sweep = setInterval(() => {
    const t = now();
    for (const [key, w] of windows) if (w.resetAt <= t) windows.delete(key);
  }, 60_000);
  sweep.unref();
  return {
    async hit(key, windowMs) {
      const t = now();
      let w = windows.get(key);
      if (!w || w.resetAt <= t) {
        w = { count: 0, resetAt: t + windowMs };
        windows.set(key, w);
      }
      w.count += 1;
      return { count: w.count, resetMs: w.resetAt - t };
    },
    async peek(key) {
      const w = windows.get(key);
      return w && w.resetAt > now() ? w.count : 0;
    },
    async unhit(key) {
      const w = windows.get(key);
      if (w && w.resetAt > now() && w.count > 0) w.count -= 1;
    },
    async reset(key) {
      windows.delete(key);
    },
    async close() {
      clearInterval(sweep);
    },
  };
}

// INCR and set the expiry on the first hit, atomically, and answer with the count and remaining TTL.
const HIT_SCRIPT = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]); ttl = tonumber(ARGV[1]) end
return { count, ttl }`;

// INCRBY a lease of hits, setting the expiry on the window's first, and answer with the count and remaining TTL.
const LEASE_SCRIPT = `
local count = redis.call('INCRBY', KEYS[1], ARGV[2])
if count == tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]); ttl = tonumber(ARGV[1]) end
return { count, ttl }`;

/**
 * How many hits one round trip takes in advance: a 16th of what is left of the budget, at most 8, so once 16 hits or
 * fewer are left every hit is counted on its own (a budget of 300 takes 78 round trips instead of 300). Hits an instance has leased and not yet used count against the key:
 * at most 7 per instance, fewer as the budget runs out, so a key may be refused up to that many requests early.
 */
export const MAX_LEASE = 8;
export function leaseSize(budget: number, counted: number): number {
  return Math.max(1, Math.min(MAX_LEASE, Math.floor((budget - counted) / 16)));
}

// DECR only a live, positive window: a missing key must not come back as -1 without an expiry.
const UNHIT_SCRIPT = `
local count = redis.call('GET', KEYS[1])
if count and tonumber(count) > 0 then redis.call('DECR', KEYS[1]) end
return 0`;

/** Hits of one key taken in advance by this process: `next` to `last` are its counts, until `windowEnd`. */
interface Lease {
  next: number;
  last: number;
  windowEnd: number;
}

export function createRedisCounterStore(redis: Redis, prefix = 'parley:', now: () => number = Date.now): CounterStore {
  redis.defineCommand('parleyHit', { numberOfKeys: 1, lua: HIT_SCRIPT });
  redis.defineCommand('parleyLease', { numberOfKeys: 1, lua: LEASE_SCRIPT });
  redis.defineCommand('parleyUnhit', { numberOfKeys: 1, lua: UNHIT_SCRIPT });
  const commands = redis as unknown as {
    parleyHit(key: string, ms: number): Promise<[number, number]>;
    parleyLease(key: string, ms: number, size: number): Promise<[number, number]>;
    parleyUnhit(key: string): Promise<number>;
  };
  const leases = new Map<string, Lease>();
  // Forget ended leases now and then so the map cannot grow without bound.
  const sweep = setInterval(() => {
    const t = now();
    for (const [key, lease] of leases) if (lease.windowEnd <= t) leases.delete(key);
  }, 60_000);
  sweep.unref();

  // The round trip taking a key's next lease: concurrent hits wait for it instead of each taking a lease of its own.
  const leasing = new Map<string, Promise<unknown>>();

  async function leased(key: string, windowMs: number, budget: number) {
    for (;;) {
      const t = now();
      const lease = leases.get(key);
      if (lease && lease.next <= lease.last && t < lease.windowEnd) {
        return { count: lease.next++, resetMs: lease.windowEnd - t };
      }
      const inFlight = leasing.get(key);
      if (!inFlight) break;
      await inFlight;
    }
    const t = now();
    const lease = leases.get(key);
    const counted = lease && t < lease.windowEnd ? lease.last : 0;
    const size = leaseSize(budget, counted);
    const taking = commands.parleyLease(prefix + key, windowMs, size);
    leasing.set(
      key,
      taking.catch(() => {}),
    );
    try {
      const [count, ttl] = await taking;
      const first = count - size + 1;
      leases.set(key, { next: first + 1, last: count, windowEnd: now() + ttl });
      return { count: first, resetMs: ttl };
    } finally {
      leasing.delete(key);
    }
  }

  return {
    async hit(key, windowMs, budget) {
      if (budget !== undefined) return leased(key, windowMs, budget);
      const [count, ttl] = await commands.parleyHit(prefix + key, windowMs);
      return { count, resetMs: ttl };
    },
    async peek(key) {
      return Number((await redis.get(prefix + key)) ?? 0);
    },
    async unhit(key) {
      await commands.parleyUnhit(prefix + key);
    },
    async reset(key) {
      leases.delete(key);
      await redis.del(prefix + key);
    },
    async close() {
      clearInterval(sweep);
      redis.disconnect();
    },
  };
}
