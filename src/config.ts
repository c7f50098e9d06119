import { isIP } from 'node:net';

/**
 * Configuration is read once from the environment, validated, and passed down.
 * Nothing else in src/ reads process.env.
 */
export type Role = 'all' | 'api' | 'worker' | 'migrate';

export interface Config {
  host: string;
  port: number;
  /** PGlite data directory, used when databaseUrl is unset. ":memory:" keeps everything in RAM. */
  dataDir: string;
  databaseUrl: string | null;
  databasePoolSize: number;
  redisUrl: string | null;
  logLevel: string;
  /** Public origin of the service, e.g. https://parley.example.com; decides the cookie's Secure flag. */
  publicBaseUrl: string | null;
  /**
   * Which X-Forwarded-For hops to believe: false (none), a number of proxies in front of the service, or their
   * addresses and CIDR ranges. Never every hop, or a client could choose its own IP.
   */
  trustProxy: TrustProxy;
  /** Requests per minute per API key (SPEC §8); sessions use the same number per user. */
  rateLimitPerMinute: number;
  /** Requests per minute per client IP for unauthenticated requests. */
  anonymousRateLimitPerMinute: number;
  /** Failed logins per email (and per IP, times 5) in a 15-minute window before login is throttled. */
  loginMaxFailures: number;
  jsonBodyLimitBytes: number;
  csvBodyLimitBytes: number;
  sessionTtlHours: number;
  shutdownGraceMs: number;
}

export type TrustProxy = false | number | string[];

export class ConfigError extends Error {}

function int(env: NodeJS.ProcessEnv, name: string, fallback: number, min = 0): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) throw new ConfigError(`${name} must be an integer >= ${min}, got "${raw}"`);
  return value;
}

/** proxy-addr's names for address ranges, accepted alongside addresses and CIDRs. */
const PROXY_RANGE_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

function isAddressOrCidr(entry: string): boolean {
  if (PROXY_RANGE_NAMES.includes(entry)) return true;
  const [address = '', prefix, ...extra] = entry.split('/');
  const version = isIP(address);
  if (version === 0 || extra.length > 0) return false;
  if (prefix === undefined) return true;
  if (/^\d{1,3}$/.test(prefix)) return Number(prefix) <= (version === 4 ? 32 : 128);
  return version === 4 && isIP(prefix) === 4; // a netmask such as 255.255.255.0
}

function trustProxy(env: NodeJS.ProcessEnv, name: string): TrustProxy {
  const raw = (env[name] ?? '').trim();
  if (raw === '' || ['false', 'no', '0'].includes(raw.toLowerCase())) return false;
  // A hop count believes that many hops whoever the peer is: only safe when clients cannot bypass the proxies.
  if (/^\d+$/.test(raw)) return Number(raw);
  if (['true', 'yes'].includes(raw.toLowerCase())) {
    throw new ConfigError(
      `${name}=${raw} would trust every X-Forwarded-For hop, so any client could choose its own IP. Set the number of ` +
        `proxies in front of the service (e.g. ${name}=1) or their addresses (e.g. ${name}=10.0.0.0/8,127.0.0.1)`,
    );
  }
  const entries = raw.split(',').map((entry) => entry.trim());
  const bad = entries.find((entry) => !isAddressOrCidr(entry));
  if (bad !== undefined) {
    throw new ConfigError(
      `${name} must be false, a number of proxies, or a comma-separated list of proxy addresses or CIDRs ` +
        `(or loopback, linklocal, uniquelocal); "${bad}" is none of these`,
    );
  }
  return entries;
}

function url(env: NodeJS.ProcessEnv, name: string): string | null {
  const raw = env[name];
  if (raw === undefined || raw === '') return null;
  try {
    new URL(raw);
  } catch {
    throw new ConfigError(`${name} is not a valid URL`);
  }
  return raw;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  return {
    host: env.HOST || '127.0.0.1',
    port: int(env, 'PORT', 3000),
    dataDir: env.DATA_DIR || './data',
    databaseUrl: url(env, 'DATABASE_URL'),
    databasePoolSize: int(env, 'DATABASE_POOL_SIZE', 10, 1),
    redisUrl: url(env, 'REDIS_URL'),
    logLevel: env.LOG_LEVEL || 'info',
    publicBaseUrl: url(env, 'PUBLIC_BASE_URL'),
    trustProxy: trustProxy(env, 'TRUST_PROXY'),
    rateLimitPerMinute: int(env, 'RATE_LIMIT_PER_MINUTE', 300, 1),
    anonymousRateLimitPerMinute: int(env, 'ANON_RATE_LIMIT_PER_MINUTE', 120, 1),
    loginMaxFailures: int(env, 'LOGIN_MAX_FAILURES', 10, 1),
    jsonBodyLimitBytes: int(env, 'JSON_BODY_LIMIT_BYTES', 1024 * 1024, 1024),
    csvBodyLimitBytes: int(env, 'CSV_BODY_LIMIT_BYTES', 50 * 1024 * 1024, 1024),
    sessionTtlHours: int(env, 'SESSION_TTL_HOURS', 24 * 14, 1),
    shutdownGraceMs: int(env, 'SHUTDOWN_GRACE_MS', 25_000, 0),
  };
}
