/**
 * The one error type every provider throws, so callers branch on `code` rather than on each vendor's
 * error classes. Messages are safe to log: adapters build them without credentials (see redactSecrets).
 */
export type ProviderErrorCode =
  /** The provider cannot work here at all (an optional package missing, nothing configured). */
  | 'unavailable'
  /** The caller's input was refused before anything was sent (a bad key, an unknown voice). */
  | 'invalid_request'
  /** The upstream answered with an error status. */
  | 'upstream_error'
  /** The upstream answered 2xx with something that is not the documented protocol. */
  | 'bad_response'
  | 'timeout'
  | 'network'
  /** The caller's AbortSignal fired. */
  | 'aborted'
  /** Object storage: no object under this key. */
  | 'not_found'
  /** Object storage: the requested byte range starts past the end of the object. */
  | 'range_not_satisfiable';

export class ProviderError extends Error {
  override readonly name = 'ProviderError';

  constructor(
    readonly provider: string,
    readonly code: ProviderErrorCode,
    message: string,
    /** The upstream's HTTP status, when there was one. */
    readonly status: number | null = null,
  ) {
    super(message);
  }
}

export function isProviderError(error: unknown, code?: ProviderErrorCode): error is ProviderError {
  return error instanceof ProviderError && (code === undefined || error.code === code);
}

/** Replaces every occurrence of each secret (and of its URL-encoded form) with "[redacted]". */
export function redactSecrets(text: string, secrets: readonly (string | null | undefined)[]): string {
  let result = text;
  for (const secret of secrets) {
    if (!secret || secret.length < 4) continue;
    for (const form of new Set([secret, encodeURIComponent(secret)])) result = result.split(form).join('[redacted]');
  }
  return result;
}
