/**
 * The errors a service throws, and the one table of their codes: the HTTP status, the OpenAPI document and the
 * README all come from it. Codes are stable snake_case; the message is for humans and may change.
 */
export const ERROR_CODES = {
  validation_failed: {
    status: 400,
    meaning: 'The request failed validation; details.fields names each failing field.',
  },
  invalid_json: { status: 400, meaning: 'The body is not well-formed JSON (or not UTF-8).' },
  invalid_csv: { status: 400, meaning: 'The CSV body could not be parsed; details.line names the line.' },
  bad_request: { status: 400, meaning: 'The request is not well-formed HTTP; the connection is closed.' },
  unauthorized: { status: 401, meaning: 'No valid API key or session was sent.' },
  forbidden: { status: 403, meaning: 'Authenticated, but not allowed to do this.' },
  not_found: { status: 404, meaning: 'No such route, or no such resource in this account.' },
  no_capture: {
    status: 404,
    meaning: "The call has no packet capture: this deployment's voice provider records no packets.",
  },
  request_timeout: { status: 408, meaning: 'The request was not received in time; the connection is closed.' },
  conflict: { status: 409, meaning: 'The request conflicts with the current state (a duplicate, a resource in use).' },
  dnc_listed: { status: 409, meaning: "The number is on the account's do-not-call list; no call was placed." },
  payload_too_large: { status: 413, meaning: 'The body is larger than the configured limit.' },
  unsupported_media_type: { status: 415, meaning: 'The Content-Type is not accepted by this endpoint.' },
  range_not_satisfiable: {
    status: 416,
    meaning: 'The requested byte range starts past the end of the file; Content-Range gives its size.',
  },
  rate_limited: { status: 429, meaning: 'Too many requests; details.retryAfterSec says how long to wait.' },
  headers_too_large: { status: 431, meaning: 'The request headers (URL included) are larger than details.limitBytes.' },
  internal_error: { status: 500, meaning: 'An unexpected error; details.requestId identifies it in the logs.' },
  upstream_error: {
    status: 502,
    meaning: 'The model upstream of the LLM proxy failed or timed out; the message says how.',
  },
  service_unavailable: { status: 503, meaning: 'A dependency (database, Redis) is unavailable.' },
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

export class AppError extends Error {
  readonly statusCode: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.statusCode = ERROR_CODES[code].status;
  }
}

export const notFound = (what: string) => new AppError('not_found', `${what} not found`);

/** A 400 naming one field, for checks a schema cannot express; shaped like the validator's own answer. */
export function invalidField(field: string, message: string) {
  return new AppError('validation_failed', `Invalid request: ${field} ${message}`, { fields: [{ field, message }] });
}
