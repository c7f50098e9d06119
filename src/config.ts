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
  trustProxy: boolean;
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
  /** Monthly fee of a bought phone number, in USD (a decimal string), by ISO country; '*' for every other country. */
  numberMonthlyFeesUsd: Record<string, string>;
}

export class ConfigError extends Error {}

function int(env: NodeJS.ProcessEnv, name: string, fallback: number, min = 0): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) throw new ConfigError(`${name} must be an integer >= ${min}, got "${raw}"`);
  return value;
}

function bool(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (['1', 'true', 'yes'].includes(raw.toLowerCase())) return true;
  if (['0', 'false', 'no'].includes(raw.toLowerCase())) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
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

/** `US=1.15,GB=1.50,*=2.00`: a price per country, and optionally one for every other country. */
function pricesByCountry(env: NodeJS.ProcessEnv, name: string, fallback: string): Record<string, string> {
  const raw = env[name] || fallback;
  const prices: Record<string, string> = {};
  for (const entry of raw.split(',')) {
    const match = /^\s*([A-Z]{2}|\*)\s*=\s*(\d{1,6}(?:\.\d{1,2})?)\s*$/.exec(entry);
    if (!match) throw new ConfigError(`${name}: "${entry.trim()}" is not COUNTRY=PRICE (e.g. US=1.15, or *=2.00 for every other country)`);
    // Written as the database answers money of two decimals: 2 -> 2.00.
    const [whole, cents = ''] = match[2]!.split('.');
    prices[match[1]!] = `${Number(whole)}.${cents.padEnd(2, '0')}`;
  }
  return prices;
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
    trustProxy: bool(env, 'TRUST_PROXY', false),
    rateLimitPerMinute: int(env, 'RATE_LIMIT_PER_MINUTE', 300, 1),
    anonymousRateLimitPerMinute: int(env, 'ANON_RATE_LIMIT_PER_MINUTE', 120, 1),
    loginMaxFailures: int(env, 'LOGIN_MAX_FAILURES', 10, 1),
    jsonBodyLimitBytes: int(env, 'JSON_BODY_LIMIT_BYTES', 1024 * 1024, 1024),
    csvBodyLimitBytes: int(env, 'CSV_BODY_LIMIT_BYTES', 50 * 1024 * 1024, 1024),
    sessionTtlHours: int(env, 'SESSION_TTL_HOURS', 24 * 14, 1),
    shutdownGraceMs: int(env, 'SHUTDOWN_GRACE_MS', 25_000, 0),
    numberMonthlyFeesUsd: pricesByCountry(env, 'NUMBER_MONTHLY_FEES_USD', 'US=1.15,CA=1.15,GB=1.50,*=2.00'),
  };
}
