import type { Redis } from 'ioredis';

/**
 * Fixed-window counters: rate limits and login throttling count hits here.
 * In Redis they are shared by every instance; in memory they are per process.
 */
export interface CounterStore {
  /** Adds one hit to `key`'s current window and returns the count so far and the ms until the window resets. */
  hit(key: string, windowMs: number): Promise<{ count: number; resetMs: number }>;
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

// DECR only a live, positive window: a missing key must not come back as -1 without an expiry.
const UNHIT_SCRIPT = `
local count = redis.call('GET', KEYS[1])
if count and tonumber(count) > 0 then redis.call('DECR', KEYS[1]) end
return 0`;

export function createRedisCounterStore(redis: Redis, prefix = 'parley:'): CounterStore {
  redis.defineCommand('parleyHit', { numberOfKeys: 1, lua: HIT_SCRIPT });
  redis.defineCommand('parleyUnhit', { numberOfKeys: 1, lua: UNHIT_SCRIPT });
  const commands = redis as unknown as {
    parleyHit(key: string, ms: number): Promise<[number, number]>;
    parleyUnhit(key: string): Promise<number>;
  };
  return {
    async hit(key, windowMs) {
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
      await redis.del(prefix + key);
    },
    async close() {
      redis.disconnect();
    },
  };
}
