import type { Selectable } from 'kysely';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { isPhoneCountry } from '../../lib/phone.js';
import { formatPrice } from '../../lib/money.js';
import { AppError, invalidField, notFound } from '../../lib/errors.js';
import { envelope } from '../../db/pagination.js';
import type { TxHandle } from '../../db/repo.js';
import type { CatalogModelChanges, CatalogRepo, NewCatalogModel } from './catalog.repo.js';
import {
  UPSTREAM_PROVIDER,
  type CatalogModelsTable,
  type ModelKind,
  type ModelProvider,
  type TelephonyRatesTable,
} from './catalog.tables.js';
import type { ListModelsQuery, ModelInput, TelephonyRatesInput } from './catalog.schemas.js';
import { priceWith, type PriceRequest } from './catalog.pricing.js';

export type { PriceRequest, Priced, PricedLine } from './catalog.pricing.js';

type ModelRow = Selectable<CatalogModelsTable>;

/** Each API price field and its column; a kind has only its own. */
const PRICE_COLUMNS = {
  inputPer1kTokensUsd: 'input_per_1k_tokens_usd',
  outputPer1kTokensUsd: 'output_per_1k_tokens_usd',
  perMinuteUsd: 'per_minute_usd',
  per1kCharactersUsd: 'per_1k_characters_usd',
} as const;
type PriceField = keyof typeof PRICE_COLUMNS;
const KIND_PRICES: Record<ModelKind, PriceField[]> = {
  llm: ['inputPer1kTokensUsd', 'outputPer1kTokensUsd'],
  stt: ['perMinuteUsd'],
  tts: ['per1kCharactersUsd'],
};
const KIND_NAMES: Record<ModelKind, string> = { llm: 'LLM', stt: 'speech-to-text', tts: 'text-to-speech' };

function toModel(kind: ModelKind, row: ModelRow) {
  return {
    id: row.id,
    slug: row.slug,
    name: row.name,
    provider: row.provider,
    baseUrl: row.base_url,
    model: row.model,
    hasApiKey: row.api_key !== null,
    ...Object.fromEntries(KIND_PRICES[kind].map((field) => [field, formatPrice(row[PRICE_COLUMNS[field]]!)])),
    latencyClass: row.latency_class,
    ...(kind === 'llm' ? { contextTokens: row.context_tokens } : {}),
    builtIn: row.built_in,
    active: row.active,
    isDefault: row.is_default,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

/** An http(s) URL without credentials and without its trailing slash, so `${baseUrl}/chat/completions` has one slash. */
function cleanBaseUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    throw invalidField('body/baseUrl', 'must be an http or https URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw invalidField('body/baseUrl', 'must be an http or https URL');
  if (url.username || url.password)
    throw invalidField('body/baseUrl', 'must not carry credentials: send the key as apiKey');
  if (url.search || url.hash) throw invalidField('body/baseUrl', 'must not have a query or fragment');
  return url.toString().replace(/\/+$/, '');
}

function cleanName(name: string): string {
  const trimmed = name.trim();
  if (!trimmed) throw invalidField('body/name', 'must not be blank');
  return trimmed;
}

/** The columns a create or update body writes. */
function columnsFrom(input: ModelInput): CatalogModelChanges {
  const columns: CatalogModelChanges = {};
  if (input.slug !== undefined) columns.slug = input.slug;
  if (input.name !== undefined) columns.name = cleanName(input.name);
  if (input.provider !== undefined) columns.provider = input.provider as ModelProvider;
  if (input.baseUrl !== undefined) columns.base_url = input.baseUrl === null ? null : cleanBaseUrl(input.baseUrl);
  if (input.model !== undefined) {
    columns.model = input.model.trim();
    if (!columns.model) throw invalidField('body/model', 'must not be blank');
  }
  if (input.apiKey !== undefined) columns.api_key = input.apiKey;
  if (input.latencyClass !== undefined) columns.latency_class = input.latencyClass;
  if (input.contextTokens !== undefined) columns.context_tokens = input.contextTokens;
  if (input.active !== undefined) columns.active = input.active;
  if (input.isDefault !== undefined) columns.is_default = input.isDefault;
  for (const field of Object.keys(PRICE_COLUMNS) as PriceField[]) {
    const value = input[field];
    if (value !== undefined) columns[PRICE_COLUMNS[field]] = value;
  }
  return columns;
}

const conflict = (message: string, details: Record<string, unknown> = {}) => new AppError('conflict', message, details);

/**
 * Checks the model as it would be after the change, and fills what follows from the provider: a built-in
 * engine has no upstream (its URL and key are cleared), an OpenAI-compatible one needs a URL and a model name.
 */
function settle(kind: ModelKind, current: ModelRow | null, columns: CatalogModelChanges): CatalogModelChanges {
  const next = { ...current, ...columns } as ModelRow;
  if (current?.built_in) {
    if (columns.provider !== undefined && columns.provider !== current.provider) {
      throw conflict(`${current.slug} is a built-in engine: its provider cannot change`, { slug: current.slug });
    }
    if (columns.slug !== undefined && columns.slug !== current.slug) {
      throw conflict(`${current.slug} is a built-in engine: its slug cannot change`, { slug: current.slug });
    }
  }
  if (next.provider === UPSTREAM_PROVIDER) {
    if (!next.base_url) throw invalidField('body/baseUrl', `is required for ${UPSTREAM_PROVIDER} providers`);
    if (!next.model) throw invalidField('body/model', `is required for ${UPSTREAM_PROVIDER} providers`);
  } else {
    if (columns.base_url) throw invalidField('body/baseUrl', `is only used by ${UPSTREAM_PROVIDER} providers`);
    if (columns.api_key) throw invalidField('body/apiKey', `is only used by ${UPSTREAM_PROVIDER} providers`);
    if (next.base_url !== null && next.base_url !== undefined) columns.base_url = null;
    if (next.api_key !== null && next.api_key !== undefined) columns.api_key = null;
    if (!next.model) columns.model = next.provider;
  }
  const name = `${KIND_NAMES[kind]} model`;
  if (current?.is_default && columns.is_default === false) {
    throw conflict(`${current.slug} is the default ${name}: make another model the default instead`, {
      slug: current.slug,
    });
  }
  if (current?.is_default && columns.active === false) {
    throw conflict(`${current.slug} is the default ${name}: make another model the default before turning it off`, {
      slug: current.slug,
    });
  }
  if (next.is_default && next.active === false)
    throw conflict(`An inactive model cannot be the default ${name}: turn it on as well`);
  return columns;
}

/** Drops every column whose value equals the current one, so a save that changes nothing writes nothing. */
function actualChanges(columns: CatalogModelChanges, current: ModelRow): CatalogModelChanges {
  return Object.fromEntries(
    Object.entries(columns).filter(([column, value]) => {
      const now = current[column as keyof ModelRow];
      // Prices come back with 8 places ("0.01400000"): compare them as numbers of the same scale.
      if (column.endsWith('_usd') && typeof value === 'string' && typeof now === 'string')
        return formatPrice(value) !== formatPrice(now);
      return now !== value;
    }),
  ) as CatalogModelChanges;
}

const isUniqueViolation = (error: unknown) => (error as { code?: string }).code === '23505';

type RateRow = Selectable<TelephonyRatesTable>;
const toRate = (row: RateRow) => ({
  country: row.country,
  inboundPerMinuteUsd: formatPrice(row.inbound_per_minute_usd),
  outboundPerMinuteUsd: formatPrice(row.outbound_per_minute_usd),
  updatedAt: row.updated_at.toISOString(),
});
// Countries in order, the * fallback last.
const byCountry = (a: RateRow, b: RateRow) =>
  Number(a.country === '*') - Number(b.country === '*') || a.country.localeCompare(b.country);

/** How long, and for how many references, a process keeps the LLM upstreams it looked up. */
const UPSTREAM_KEPT_MS = 5_000;
const UPSTREAMS_KEPT = 1_000;

/** The upstream of an LLM model: where a turn goes, as the catalog holds it. */
export interface LlmUpstream {
  id: string;
  slug: string;
  provider: ModelProvider;
  baseUrl: string | null;
  model: string;
  apiKey: string | null;
  updatedAt: Date;
}

/** The platform-wide model catalog, the telephony rate table, and the prices the call engine charges from them. */
export function createCatalogService(deps: { repo: CatalogRepo; clock: Clock }) {
  const { repo, clock } = deps;
  const modelLabel = (kind: ModelKind) => `${KIND_NAMES[kind][0]!.toUpperCase()}${KIND_NAMES[kind].slice(1)} model`;

  async function rates() {
    const [rows, fee] = await Promise.all([repo.listRates(), repo.platformFeePerMinute()]);
    return { rates: rows.sort(byCountry).map(toRate), platformFeePerMinuteUsd: formatPrice(fee) };
  }

  // Every proxied LLM turn looks its model up, and models change rarely: answers are kept for a few seconds per
  // process; a change made through this process drops them at once, one made elsewhere is seen within that time.
  const upstreams = new Map<string, { until: number; model: Promise<LlmUpstream | undefined> }>();
  async function findUpstream(reference: string | null): Promise<LlmUpstream | undefined> {
    const row = await repo.findForPricing('llm', reference ?? undefined);
    if (!row?.active) return undefined;
    return {
      id: row.id,
      slug: row.slug,
      provider: row.provider,
      baseUrl: row.base_url,
      model: row.model,
      apiKey: row.api_key,
      updatedAt: row.updated_at,
    };
  }

  return {
    async listModels(kind: ModelKind, query: ListModelsQuery) {
      const { limit, offset, ...filters } = query;
      const { items, total } = await repo.list(kind, filters, { limit, offset });
      return envelope(
        'models',
        items.map((row) => toModel(kind, row)),
        total,
        query,
      );
    },

    async createModel(kind: ModelKind, input: ModelInput) {
      const columns = settle(kind, null, columnsFrom(input));
      const now = clock.now();
      const model = {
        latency_class: 'medium',
        active: true,
        is_default: false,
        ...columns,
        id: newId(),
        kind,
        created_at: now,
        updated_at: now,
      } as NewCatalogModel;
      const row = await repo
        .transaction(async (tx) => {
          if (await tx.findBySlug(kind, model.slug))
            throw conflict(`A ${KIND_NAMES[kind]} model with the slug ${model.slug} already exists`, {
              slug: model.slug,
            });
          if (model.is_default) await tx.clearDefault(kind, model.id, now);
          return tx.insert(model);
        })
        .catch((error: unknown) => {
          if (isUniqueViolation(error))
            throw conflict(
              'Another change to the catalog got there first (the same slug, or a new default); try again',
            );
          throw error;
        });
      upstreams.clear();
      return toModel(kind, row);
    },

    async updateModel(kind: ModelKind, id: string, input: ModelInput) {
      const row = await repo
        .transaction(async (tx) => {
          const current = await tx.findForUpdate(kind, id);
          if (!current) throw notFound(modelLabel(kind));
          const changes = actualChanges(settle(kind, current, columnsFrom(input)), current);
          if (Object.keys(changes).length === 0) return current;
          if (changes.slug !== undefined && (await tx.findBySlug(kind, changes.slug))) {
            throw conflict(`A ${KIND_NAMES[kind]} model with the slug ${changes.slug} already exists`, {
              slug: changes.slug,
            });
          }
          const now = clock.now();
          if (changes.is_default) await tx.clearDefault(kind, id, now);
          return tx.update(kind, id, { ...changes, updated_at: now });
        })
        .catch((error: unknown) => {
          if (isUniqueViolation(error))
            throw conflict(
              'Another change to the catalog got there first (the same slug, or a new default); try again',
            );
          throw error;
        });
      upstreams.clear();
      return toModel(kind, row);
    },

    async deleteModel(kind: ModelKind, id: string) {
      return repo.transaction(async (tx) => {
        upstreams.clear();
        const current = await tx.findForUpdate(kind, id);
        if (!current) throw notFound(modelLabel(kind));
        if (current.built_in)
          throw conflict(`${current.slug} is a built-in engine: turn it off instead of deleting it`, {
            slug: current.slug,
          });
        if (current.is_default) {
          throw conflict(
            `${current.slug} is the default ${KIND_NAMES[kind]} model: make another model the default first`,
            { slug: current.slug },
          );
        }
        await tx.delete(kind, id);
        return { id, deleted: true as const };
      });
    },

    rates,

    /**
     * The active LLMs an agent can run live (by slug or id), the default first: the public view, without upstream
     * URLs or keys. The catalog is platform-managed and small, so this reads it whole.
     */
    async liveModels() {
      const { items } = await repo.list('llm', { active: true }, { limit: 500, offset: 0 });
      return items
        .sort((a, b) => Number(b.is_default) - Number(a.is_default) || a.slug.localeCompare(b.slug))
        .map((row) => ({
          id: row.id,
          slug: row.slug,
          name: row.name,
          provider: row.provider,
          model: row.model,
          builtIn: row.built_in,
          isDefault: row.is_default,
          latencyClass: row.latency_class,
          contextTokens: row.context_tokens,
          inputPer1kTokensUsd: formatPrice(row.input_per_1k_tokens_usd ?? '0'),
          outputPer1kTokensUsd: formatPrice(row.output_per_1k_tokens_usd ?? '0'),
        }));
    },

    /** Replaces the whole rate table and the platform fee; the table must keep a * row for every other country. */
    async replaceRates(input: TelephonyRatesInput) {
      const seen = new Set<string>();
      for (const [index, rate] of input.rates.entries()) {
        const field = `body/rates/${index}/country`;
        if (rate.country !== '*' && !isPhoneCountry(rate.country))
          throw invalidField(field, `${rate.country} is not a country code`);
        if (seen.has(rate.country)) throw invalidField(field, `${rate.country} appears more than once`);
        seen.add(rate.country);
      }
      if (!seen.has('*'))
        throw invalidField('body/rates', 'must include a * row: the rate for every country without a row of its own');
      const now = clock.now();
      await repo.transaction(async (tx) => {
        await tx.lockPricing();
        await tx.replaceRates(
          input.rates.map((rate) => ({
            country: rate.country,
            inbound_per_minute_usd: rate.inboundPerMinuteUsd,
            outbound_per_minute_usd: rate.outboundPerMinuteUsd,
          })),
          now,
        );
        await tx.setPlatformFeePerMinute(input.platformFeePerMinuteUsd, now);
      });
      return rates();
    },

    /**
     * For the LLM proxy: the active LLM model an agent names (by id or slug; the default model for null), with what
     * it takes to call it. Undefined when the catalog has no such active model.
     */
    llmUpstream(reference: string | null): Promise<LlmUpstream | undefined> {
      const key = reference ?? '';
      const now = clock.now().getTime();
      const kept = upstreams.get(key);
      if (kept && kept.until > now) return kept.model;
      if (upstreams.size >= UPSTREAMS_KEPT) upstreams.clear();
      const model = findUpstream(reference);
      upstreams.set(key, { until: now + UPSTREAM_KEPT_MS, model });
      // A failed lookup is not kept.
      model.catch(() => upstreams.get(key)?.model === model && upstreams.delete(key));
      return model;
    },

    /**
     * For the call engine: the cost of what a call used, as cost-item lines with exact decimal amounts. Pass `tx`
     * when calling from inside a transaction (on the embedded database the pool is that one connection).
     */
    price(request: PriceRequest, tx?: TxHandle) {
      return priceWith(tx ? repo.within(tx) : repo, request);
    },
  };
}

export type CatalogService = ReturnType<typeof createCatalogService>;
