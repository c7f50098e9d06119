/**
 * The one way the dashboard talks to the API: openapi-fetch over the types generated from the live API document
 * (schema.gen.ts, written by the build). A route or field renamed on the server fails the dashboard's typecheck.
 *
 *   const agents = await unwrap(api.GET('/v1/agents'));
 *
 * `unwrap` answers the data of a 2xx, and throws an ApiError (status, the error body, details) for anything else.
 */
import createClient from 'openapi-fetch';
import type { components, operations, paths } from './schema.gen';

export type Schemas = components['schemas'];
export type ErrorBody = Schemas['ErrorBody'];
/** An operation's parameters by its operationId: `Operations['listCalls']['parameters']['query']`. */
export type Operations = operations;

/**
 * A header a form on another site cannot send: the server refuses a write signed in with the session cookie from a
 * browser without it (and from another origin).
 */
export const CSRF_HEADER = 'X-Requested-With';
export const CSRF_VALUE = 'parley-dashboard';

export const api = createClient<paths>({
  baseUrl: '/api',
  credentials: 'same-origin',
  headers: { [CSRF_HEADER]: CSRF_VALUE },
});

/** An answer other than 2xx: its status and the service's error body (null when the body was not one). */
export class ApiError extends Error {
  readonly status: number;
  readonly body: ErrorBody | null;

  constructor(status: number, body: ErrorBody | null) {
    super(body?.message ?? `The server answered ${status}`);
    this.name = 'ApiError';
    this.status = status;
    this.body = body;
  }

  get code(): string {
    return this.body?.error ?? 'unknown';
  }

  /** 429: the seconds the server asked us to wait. */
  get retryAfterSec(): number | null {
    return this.body?.error === 'rate_limited' ? this.body.details.retryAfterSec : null;
  }

  /** 400 validation_failed: each invalid field's message by its path ("body/name", "querystring/status"). */
  get fieldErrors(): Record<string, string> {
    if (this.body?.error !== 'validation_failed') return {};
    return Object.fromEntries(this.body.details.fields.map((f) => [f.field, f.message]));
  }
}

const isErrorBody = (value: unknown): value is ErrorBody =>
  typeof value === 'object' && value !== null && typeof (value as { error?: unknown }).error === 'string';

/** Listeners told of every 401 (the session ended): the app sends the user to sign in, and back afterwards. */
const unauthorizedListeners = new Set<() => void>();
export function onUnauthorized(listener: () => void): () => void {
  unauthorizedListeners.add(listener);
  return () => void unauthorizedListeners.delete(listener);
}

/** The data of a successful answer; anything else is thrown as an ApiError (and a 401 told to the listeners). */
export async function unwrap<T>(request: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await request;
  if (response.ok) return data as T;
  const failure = new ApiError(response.status, isErrorBody(error) ? error : null);
  if (response.status === 401) for (const listener of unauthorizedListeners) listener();
  throw failure;
}

/** A field's error message from a failed request, for the input that names it (`error={fieldError(e, 'body/name')}`). */
export function fieldError(error: unknown, field: string): string | undefined {
  return error instanceof ApiError ? error.fieldErrors[field] : undefined;
}
