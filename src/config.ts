import { isIP } from 'node:net';

/**
 * Configuration is read once from the environment, validated, and passed down.
 * Nothing else in src/ reads process.env.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Reads `.env` in the working directory into the environment when there is one (variables already set win), so
 * the settings of a machine can live in one file. Answers the file read, or null.
 */
export function loadDotEnv(path = '.env'): string | null {
  if (!existsSync(path)) return null;
  try {
    process.loadEnvFile(path);
  } catch (error) {
    throw new ConfigError(`${path} could not be read: ${(error as Error).message}`);
  }
  return path;
}

export type Role = 'all' | 'api' | 'worker' | 'migrate';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
/** `auto`: readable lines on a terminal, JSON (one object a line) otherwise. */
export const LOG_FORMATS = ['auto', 'pretty', 'json'] as const;
/** Who may sign up: anyone, only emails a platform administrator invited, or nobody (administrators create users). */
export const REGISTRATION_POLICIES = ['open', 'invite', 'closed'] as const;
export type RegistrationPolicy = (typeof REGISTRATION_POLICIES)[number];

/** Where recordings and other files go: a directory (the default) or an S3-compatible bucket. */
export type StorageConfig =
  | { driver: 'local' /** null when DATA_DIR is ":memory:" and STORAGE_DIR is unset. */; dir: string | null }
  | {
      driver: 's3';
      bucket: string;
      region: string;
      endpoint: string | null;
      forcePathStyle: boolean;
      /** null: the AWS SDK's default credential chain (environment, profile, instance role). */
      credentials: { accessKeyId: string; secretAccessKey: string } | null;
    };

/** The default LLM for agents: the built-in playbook engine (offline), or an OpenAI-compatible server. */
export interface LlmConfig {
  provider: 'parley-playbook' | 'openai';
  baseUrl: string;
  apiKey: string | null;
  model: string;
  timeoutMs: number;
}

/** Knowledge retrieval and PDF import; embeddings are optional (an OpenAI-compatible /embeddings upstream). */
export interface KnowledgeConfig {
  /** Tokens of retrieved knowledge added to each turn. */
  budgetTokens: number;
  pdfMaxBytes: number;
  pdfMaxPages: number;
  /** How long reading one PDF may take, and its reader's heap: a file past either is refused as too complex. */
  pdfMaxSeconds: number;
  pdfMaxMemoryMb: number;
  embeddings: { baseUrl: string; apiKey: string | null; model: string; timeoutMs: number } | null;
}

/** Speech synthesis: espeak-ng in WebAssembly (offline, optional package), an OpenAI-compatible server, or none. */
export interface TtsConfig {
  provider: 'espeak-ng' | 'openai' | 'none';
  baseUrl: string;
  apiKey: string | null;
  model: string;
  timeoutMs: number;
}

/** Outbound webhooks: which targets are allowed, the key their signing secrets are encrypted under, retention. */
export interface WebhooksConfig {
  /** http:// endpoint URLs; by default allowed unless NODE_ENV is production (then https only). */
  allowHttp: boolean;
  /** Private, loopback, link-local and other non-public targets (for a deployment on a private network, and tests). */
  allowPrivate: boolean;
  /** Encrypts stored signing secrets; null: a key generated once and kept in the database. */
  secretKey: string | null;
  /** How long a rotated-out secret still signs deliveries beside the new one. */
  rotationOverlapHours: number;
  /** Delivery records (and their attempts) older than this are pruned. */
  retentionDays: number;
  /** Delivery attempts one worker process makes at once. */
  concurrencyPerWorker: number;
  /** Endpoints one account may register. */
  maxEndpointsPerAccount: number;
}

/** How calls run: the voice provider, limits and timings, and the secrets that sign asset URLs and provider callbacks. */
export interface CallsConfig {
  /** The network calls go through; `sim` is the built-in simulated telephone network. */
  voiceProvider: 'sim';
  /** Calls of one account live at once; more wait in the queue and start as slots free. */
  maxConcurrentPerAccount: number;
  /** Calls one worker process runs at once. */
  concurrencyPerWorker: number;
  /** A connected call is ended when it has lasted this long. */
  maxDurationSeconds: number;
  /** A live call whose heartbeat is older than this is taken for lost (its process died) and closed as failed. */
  heartbeatStaleSeconds: number;
  /** How long a signed recording or transcript URL stays valid. */
  assetUrlTtlSeconds: number;
  /** Key of the asset URL signatures; null: one is generated and kept in the database, shared by every instance. */
  assetUrlSecret: string | null;
  /** Key of the signatures on voice-provider callbacks (post-call reports, inbound calls); null: callbacks are refused. */
  voiceProviderSecret: string | null;
  /** Simulated agent capacity: conversations the agent pipeline holds at once per process (0: no limit). */
  simAgentSlots: number;
  /** Share (0–1) of answered calls whose agent pipeline starts late, by simLateStartMs (abandoned-call simulation). */
  simLateStartRate: number;
  simLateStartMs: number;
}

/** The dialer's rules (see the README's Campaigns section). */
export interface CampaignsConfig {
  /** Dials of one contact across all the account's campaigns in 24 hours. */
  dailyAttemptLimit: number;
  /** A contact whose call was abandoned is not called again for this long. */
  abandonedRedialHours: number;
  /** A caller number found at_risk or spam_likely rests this long. */
  numberRestMinutes: number;
  /** The compliance pause applies from this many live-answered calls in the 30-day window. */
  abandonMinLiveAnswered: number;
  /** Contacts a dialer claims at a time. */
  dialBatch: number;
  /** How often a running campaign's dialer wakes up. */
  tickSeconds: number;
  /** Contacts claimed this long ago and not dialled belong to a dialer that died: they go back to the queue. */
  claimTimeoutSeconds: number;
  /** The abandon-rate governor lowers a campaign's pace; off, campaigns dial at maxConcurrency (the pause still applies). */
  paceGovernor: boolean;
}

export interface Config {
  host: string;
  port: number;
  /** PGlite data directory, used when databaseUrl is unset. ":memory:" keeps everything in RAM. */
  dataDir: string;
  databaseUrl: string | null;
  databasePoolSize: number;
  /** How often an idle worker looks for background work it was not woken for, in seconds. */
  jobsPollSeconds: number;
  redisUrl: string | null;
  logLevel: (typeof LOG_LEVELS)[number];
  logFormat: (typeof LOG_FORMATS)[number];
  /** Log every request and response at info; otherwise they are logged at debug. */
  logRequests: boolean;
  registration: RegistrationPolicy;
  /** Public origin of the service, e.g. https://parley.example.com; decides the cookie's Secure flag. */
  publicBaseUrl: string | null;
  /**
   * Which X-Forwarded-For hops to believe: false (none), a number of proxies in front of the service, or their
   * addresses and CIDR ranges. Never every hop, or a client could choose its own IP.
   */
  trustProxy: TrustProxy;
  /** Requests per minute per API key; sessions use the same number per user. */
  rateLimitPerMinute: number;
  /** Requests per minute per client IP for unauthenticated requests. */
  anonymousRateLimitPerMinute: number;
  /** Requests per minute per client IP to /api/health (each check queries the database). */
  healthRateLimitPerMinute: number;
  /** Failed logins per email (and per IP, times 5) in a 15-minute window before login is throttled. */
  loginMaxFailures: number;
  jsonBodyLimitBytes: number;
  csvBodyLimitBytes: number;
  sessionTtlHours: number;
  shutdownGraceMs: number;
  storage: StorageConfig;
  llm: LlmConfig;
  tts: TtsConfig;
  calls: CallsConfig;
  knowledge: KnowledgeConfig;
  webhooks: WebhooksConfig;
  campaigns: CampaignsConfig;
  /** Monthly fee of a bought phone number, in USD (a decimal string), by ISO country; '*' for every other country. */
  numberMonthlyFeesUsd: Record<string, string>;
}

export type TrustProxy = false | number | string[];

export class ConfigError extends Error {}

/**
 * A number setting is written in plain decimal digits: "abc", "0x10", "1e3", " 5" or "5," is a mistake, refused rather
 * than read as 0 or as another number.
 */
const INTEGER = /^\d+$/;
const DECIMAL = /^\d+(?:\.\d+)?$/;

function number(
  env: NodeJS.ProcessEnv,
  name: string,
  fallback: number,
  { min, max, kind }: { min: number; max: number; kind: 'an integer' | 'a number' },
): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  const shaped = (kind === 'an integer' ? INTEGER : DECIMAL).test(raw) && Number.isSafeInteger(Math.trunc(value));
  if (!shaped || value < min) throw new ConfigError(`${name} must be ${kind} >= ${min}, got "${raw}"`);
  if (value > max) throw new ConfigError(`${name} must be at most ${max}, got "${raw}"`);
  return value;
}

function int(env: NodeJS.ProcessEnv, name: string, fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  return number(env, name, fallback, { min, max, kind: 'an integer' });
}

/** A duration in seconds, which may have a fraction (0.5). */
function seconds(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number): number {
  return number(env, name, fallback, { min, max: Number.MAX_SAFE_INTEGER, kind: 'a number' });
}

/** A share from 0 to 1 (0.25). */
function share(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  return number(env, name, fallback, { min: 0, max: 1, kind: 'a number' });
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

function oneOf<T extends string>(env: NodeJS.ProcessEnv, name: string, allowed: readonly T[], fallback: T): T {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!(allowed as readonly string[]).includes(raw))
    throw new ConfigError(`${name} must be one of ${allowed.join(', ')}, got "${raw}"`);
  return raw as T;
}

/** A secret: unset, or at least 16 characters (a short one is a mistake, not a key). */
function secret(env: NodeJS.ProcessEnv, name: string): string | null {
  const raw = text(env, name);
  if (raw !== null && raw.length < 16) throw new ConfigError(`${name} must be at least 16 characters`);
  return raw;
}

function text(env: NodeJS.ProcessEnv, name: string): string | null {
  const raw = env[name];
  return raw === undefined || raw === '' ? null : raw;
}

/** An http(s) base URL without its trailing slash, so `${baseUrl}/chat/completions` is always one slash. */
function baseUrl(env: NodeJS.ProcessEnv, name: string, fallback: string): string {
  const raw = url(env, name) ?? fallback;
  if (!/^https?:$/.test(new URL(raw).protocol)) throw new ConfigError(`${name} must be an http or https URL`);
  return raw.replace(/\/+$/, '');
}

const OPENAI_BASE_URL = 'https://api.openai.com/v1';

function storageConfig(env: NodeJS.ProcessEnv, dataDir: string): StorageConfig {
  const driver = oneOf(env, 'STORAGE_DRIVER', ['local', 's3'], 'local');
  if (driver === 'local') {
    return { driver, dir: text(env, 'STORAGE_DIR') ?? (dataDir === ':memory:' ? null : join(dataDir, 'objects')) };
  }
  const bucket = text(env, 'S3_BUCKET');
  if (!bucket) throw new ConfigError('S3_BUCKET is required when STORAGE_DRIVER is s3');
  const accessKeyId = text(env, 'S3_ACCESS_KEY_ID');
  const secretAccessKey = text(env, 'S3_SECRET_ACCESS_KEY');
  if (!accessKeyId !== !secretAccessKey) {
    throw new ConfigError(
      'S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY must be set together (or neither, for the default AWS credentials)',
    );
  }
  return {
    driver,
    bucket,
    region: text(env, 'S3_REGION') ?? 'us-east-1',
    endpoint: url(env, 'S3_ENDPOINT'),
    forcePathStyle: bool(env, 'S3_FORCE_PATH_STYLE', false),
    credentials: accessKeyId && secretAccessKey ? { accessKeyId, secretAccessKey } : null,
  };
}

function callsConfig(env: NodeJS.ProcessEnv): CallsConfig {
  return {
    voiceProvider: oneOf(env, 'VOICE_PROVIDER', ['sim'], 'sim'),
    maxConcurrentPerAccount: int(env, 'CALLS_MAX_CONCURRENT_PER_ACCOUNT', 5, 1),
    concurrencyPerWorker: int(env, 'CALLS_PER_WORKER', 10, 1),
    // A call runs as one job; the job queue fails jobs older than 4 hours: 3 hours at most.
    maxDurationSeconds: int(env, 'CALLS_MAX_DURATION_SECONDS', 600, 10, 3 * 3600),
    heartbeatStaleSeconds: int(env, 'CALLS_HEARTBEAT_STALE_SECONDS', 30, 1),
    assetUrlTtlSeconds: int(env, 'ASSET_URL_TTL_SECONDS', 900, 1),
    assetUrlSecret: secret(env, 'ASSET_URL_SECRET'),
    voiceProviderSecret: secret(env, 'VOICE_PROVIDER_SECRET'),
    simAgentSlots: int(env, 'SIM_AGENT_SLOTS', 0, 0),
    simLateStartRate: share(env, 'SIM_AGENT_LATE_START_RATE', 0),
    simLateStartMs: int(env, 'SIM_AGENT_LATE_START_MS', 3000, 0),
  };
}

/** `US=1.15,GB=1.50,*=2.00`: a price per country, and optionally one for every other country. */
function pricesByCountry(env: NodeJS.ProcessEnv, name: string, fallback: string): Record<string, string> {
  const raw = env[name] || fallback;
  const prices: Record<string, string> = {};
  for (const entry of raw.split(',')) {
    const match = /^\s*([A-Z]{2}|\*)\s*=\s*(\d{1,6}(?:\.\d{1,2})?)\s*$/.exec(entry);
    if (!match)
      throw new ConfigError(
        `${name}: "${entry.trim()}" is not COUNTRY=PRICE (e.g. US=1.15, or *=2.00 for every other country)`,
      );
    // Written as the database answers money of two decimals: 2 -> 2.00.
    const [whole, cents = ''] = match[2]!.split('.');
    prices[match[1]!] = `${Number(whole)}.${cents.padEnd(2, '0')}`;
  }
  return prices;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const dataDir = env.DATA_DIR || './data';
  return {
    host: env.HOST || '127.0.0.1',
    port: int(env, 'PORT', 3000, 0, 65_535),
    dataDir,
    databaseUrl: url(env, 'DATABASE_URL'),
    databasePoolSize: int(env, 'DATABASE_POOL_SIZE', 10, 1),
    jobsPollSeconds: int(env, 'JOBS_POLL_SECONDS', 2, 1),
    redisUrl: url(env, 'REDIS_URL'),
    logLevel: oneOf(env, 'LOG_LEVEL', LOG_LEVELS, 'info'),
    logFormat: oneOf(env, 'LOG_FORMAT', LOG_FORMATS, 'auto'),
    logRequests: bool(env, 'LOG_REQUESTS', false),
    registration: oneOf(env, 'REGISTRATION', REGISTRATION_POLICIES, 'open'),
    publicBaseUrl: url(env, 'PUBLIC_BASE_URL'),
    trustProxy: trustProxy(env, 'TRUST_PROXY'),
    rateLimitPerMinute: int(env, 'RATE_LIMIT_PER_MINUTE', 300, 1),
    anonymousRateLimitPerMinute: int(env, 'ANON_RATE_LIMIT_PER_MINUTE', 120, 1),
    healthRateLimitPerMinute: int(env, 'HEALTH_RATE_LIMIT_PER_MINUTE', 60, 1),
    loginMaxFailures: int(env, 'LOGIN_MAX_FAILURES', 10, 1),
    jsonBodyLimitBytes: int(env, 'JSON_BODY_LIMIT_BYTES', 1024 * 1024, 1024),
    csvBodyLimitBytes: int(env, 'CSV_BODY_LIMIT_BYTES', 50 * 1024 * 1024, 1024),
    sessionTtlHours: int(env, 'SESSION_TTL_HOURS', 24 * 14, 1),
    shutdownGraceMs: int(env, 'SHUTDOWN_GRACE_MS', 25_000, 0),
    storage: storageConfig(env, dataDir),
    llm: {
      provider: oneOf(env, 'LLM_PROVIDER', ['parley-playbook', 'openai'], 'parley-playbook'),
      baseUrl: baseUrl(env, 'LLM_BASE_URL', OPENAI_BASE_URL),
      apiKey: text(env, 'LLM_API_KEY'),
      model: text(env, 'LLM_MODEL') ?? 'gpt-4o-mini',
      timeoutMs: int(env, 'LLM_TIMEOUT_MS', 30_000, 1),
    },
    tts: {
      provider: oneOf(env, 'TTS_PROVIDER', ['espeak-ng', 'openai', 'none'], 'espeak-ng'),
      baseUrl: baseUrl(env, 'TTS_BASE_URL', OPENAI_BASE_URL),
      apiKey: text(env, 'TTS_API_KEY'),
      model: text(env, 'TTS_MODEL') ?? 'gpt-4o-mini-tts',
      timeoutMs: int(env, 'TTS_TIMEOUT_MS', 30_000, 1),
    },
    calls: callsConfig(env),
    knowledge: {
      budgetTokens: int(env, 'KNOWLEDGE_BUDGET_TOKENS', 1200, 50),
      pdfMaxBytes: int(env, 'PDF_MAX_BYTES', 20 * 1024 * 1024, 1024),
      pdfMaxPages: int(env, 'PDF_MAX_PAGES', 500, 1),
      pdfMaxSeconds: seconds(env, 'PDF_MAX_SECONDS', 30, 1),
      pdfMaxMemoryMb: int(env, 'PDF_MAX_MEMORY_MB', 512, 64),
      embeddings: url(env, 'EMBEDDINGS_BASE_URL')
        ? {
            baseUrl: baseUrl(env, 'EMBEDDINGS_BASE_URL', OPENAI_BASE_URL),
            apiKey: text(env, 'EMBEDDINGS_API_KEY'),
            model: text(env, 'EMBEDDINGS_MODEL') ?? 'text-embedding-3-small',
            timeoutMs: int(env, 'EMBEDDINGS_TIMEOUT_MS', 30_000, 1),
          }
        : null,
    },
    webhooks: {
      allowHttp: bool(env, 'WEBHOOK_ALLOW_HTTP', env.NODE_ENV !== 'production'),
      allowPrivate: bool(env, 'WEBHOOK_ALLOW_PRIVATE', false),
      secretKey: secret(env, 'WEBHOOK_SECRET_KEY'),
      rotationOverlapHours: int(env, 'WEBHOOK_ROTATION_OVERLAP_HOURS', 24, 0),
      retentionDays: int(env, 'WEBHOOK_RETENTION_DAYS', 30, 1),
      concurrencyPerWorker: int(env, 'WEBHOOK_CONCURRENCY', 8, 1),
      maxEndpointsPerAccount: int(env, 'WEBHOOK_MAX_ENDPOINTS_PER_ACCOUNT', 50, 1),
    },
    campaigns: {
      dailyAttemptLimit: int(env, 'CAMPAIGN_DAILY_ATTEMPT_LIMIT', 3, 1),
      abandonedRedialHours: int(env, 'CAMPAIGN_ABANDONED_REDIAL_HOURS', 72, 0),
      numberRestMinutes: int(env, 'CAMPAIGN_NUMBER_REST_MINUTES', 240, 0),
      abandonMinLiveAnswered: int(env, 'CAMPAIGN_ABANDON_MIN_LIVE_ANSWERED', 20, 1),
      dialBatch: int(env, 'CAMPAIGN_DIAL_BATCH', 20, 1),
      tickSeconds: seconds(env, 'CAMPAIGN_TICK_SECONDS', 2, 0.1),
      claimTimeoutSeconds: int(env, 'CAMPAIGN_CLAIM_TIMEOUT_SECONDS', 120, 5),
      paceGovernor: bool(env, 'CAMPAIGN_PACE_GOVERNOR', true),
    },
    numberMonthlyFeesUsd: pricesByCountry(env, 'NUMBER_MONTHLY_FEES_USD', 'US=1.15,CA=1.15,GB=1.50,*=2.00'),
  };
}
