/**
 * POSTs JSON to an OpenAI-compatible server through undici, with a deadline, the caller's AbortSignal,
 * and errors that never carry the API key. Shared by the LLM and TTS adapters.
 */
import { request, type Dispatcher } from 'undici';
import { ProviderError, redactSecrets } from './provider-error.js';

export interface OpenAiEndpoint {
  /** Names the provider in errors, e.g. "openai-llm". */
  provider: string;
  /** e.g. https://api.openai.com/v1 (no trailing slash). */
  baseUrl: string;
  apiKey: string | null;
  /** The whole exchange, first byte to last, must fit in this. */
  timeoutMs: number;
  /** An undici dispatcher (a Pool or Agent) of the caller's; undici's global one otherwise. */
  dispatcher?: Dispatcher;
}

export interface OpenAiResponse {
  body: Dispatcher.ResponseData['body'];
  headers: Dispatcher.ResponseData['headers'];
  /** Turns an error thrown while reading the body into a ProviderError (timeout, abort, network). */
  failure(error: unknown): ProviderError;
  /** Stops the deadline timer; call once the body is consumed or abandoned. */
  done(): void;
}

const ERROR_BODY_LIMIT = 4096;

/** The URL as shown in errors: without any user:password part. */
function displayUrl(url: string): string {
  const parsed = new URL(url);
  parsed.username = '';
  parsed.password = '';
  return parsed.toString();
}

export async function postJson(
  endpoint: OpenAiEndpoint,
  path: string,
  payload: unknown,
  signal?: AbortSignal,
): Promise<OpenAiResponse> {
  const url = `${endpoint.baseUrl}${path}`;
  const secrets = [endpoint.apiKey];
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), endpoint.timeoutMs);
  const combined = signal ? AbortSignal.any([signal, deadline.signal]) : deadline.signal;
  const where = `POST ${displayUrl(url)}`;

  const failure = (error: unknown): ProviderError => {
    if (error instanceof ProviderError) return error;
    if (signal?.aborted) return new ProviderError(endpoint.provider, 'aborted', `${where} was aborted by the caller`);
    const code = (error as { code?: string } | null)?.code ?? '';
    if (deadline.signal.aborted || /TIMEOUT/.test(code)) {
      return new ProviderError(
        endpoint.provider,
        'timeout',
        `${where} did not complete within ${endpoint.timeoutMs} ms`,
      );
    }
    const reason = redactSecrets(error instanceof Error ? error.message : String(error), secrets);
    return new ProviderError(endpoint.provider, 'network', `${where} failed: ${reason}${code ? ` (${code})` : ''}`);
  };
  const done = () => clearTimeout(timer);

  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (endpoint.apiKey) headers.authorization = `Bearer ${endpoint.apiKey}`;
  let response: Dispatcher.ResponseData;
  try {
    response = await request(url, {
      method: 'POST',
      headers,
      body: JSON.stringify(payload),
      signal: combined,
      ...(endpoint.dispatcher ? { dispatcher: endpoint.dispatcher } : {}),
    });
  } catch (error) {
    done();
    throw failure(error);
  }

  if (response.statusCode < 200 || response.statusCode > 299) {
    let detail = '';
    try {
      detail = await readLimited(response.body, ERROR_BODY_LIMIT);
    } catch {
      // The status alone still says what happened.
    }
    done();
    const message = upstreamMessage(detail);
    throw new ProviderError(
      endpoint.provider,
      'upstream_error',
      redactSecrets(`${where} answered ${response.statusCode}${message ? `: ${message}` : ''}`, secrets),
      response.statusCode,
    );
  }
  return { body: response.body, headers: response.headers, failure, done };
}

/** Reads at most `limit` bytes of a body as text and discards the rest. */
async function readLimited(body: AsyncIterable<Buffer> & { destroy(): void }, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= limit) {
      body.destroy();
      break;
    }
  }
  return Buffer.concat(chunks).subarray(0, limit).toString('utf8');
}

/** OpenAI-style `{ error: { message } }`, or the start of whatever text came back. */
function upstreamMessage(body: string): string {
  let message = body;
  try {
    const parsed = JSON.parse(body) as { error?: { message?: unknown } | string; message?: unknown };
    const candidate = typeof parsed.error === 'string' ? parsed.error : (parsed.error?.message ?? parsed.message);
    if (typeof candidate === 'string') message = candidate;
  } catch {
    // Not JSON: keep the text.
  }
  message = message.replace(/\s+/g, ' ').trim();
  return message.length > 300 ? `${message.slice(0, 300)}…` : message;
}
