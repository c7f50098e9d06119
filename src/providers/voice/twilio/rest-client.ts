/**
 * The REST API of a Twilio-compatible carrier (2010-04-01): place and hang up calls, find, buy and release numbers.
 * HTTP basic auth with the account SID and auth token, form-encoded bodies, JSON answers. The base URL is
 * configurable so the same client talks to Twilio, a compatible carrier, or the local test carrier.
 */
import { request, type Dispatcher } from 'undici';
import { Type, type Static, type TSchema } from 'typebox';
import { Value } from 'typebox/value';
import { ProviderError, redactSecrets } from '../../provider-error.js';

export const TWILIO_PROVIDER = 'twilio';
export const TWILIO_DEFAULT_BASE_URL = 'https://api.twilio.com';
const API_VERSION = '2010-04-01';

export interface TwilioRestOptions {
  accountSid: string;
  authToken: string;
  /** Without the API version: https://api.twilio.com (the default), or a local server's http://127.0.0.1:port. */
  baseUrl?: string;
  /** Each request, first byte to last, must fit in this. */
  timeoutMs?: number;
  dispatcher?: Dispatcher;
}

/** A carrier error answer: Twilio's own error code (21211: invalid To, 20404: not found …) and its message. */
export class TwilioApiError extends ProviderError {
  constructor(
    message: string,
    status: number,
    /** Twilio's numeric error code, when the body had one. */
    readonly twilioCode: number | null,
    readonly moreInfo: string | null,
  ) {
    super(TWILIO_PROVIDER, 'upstream_error', message, status);
  }
}

export const STATUS_CALLBACK_EVENTS = ['initiated', 'ringing', 'answered', 'completed'] as const;
export type StatusCallbackEvent = (typeof STATUS_CALLBACK_EVENTS)[number];

export interface CreateCallRequest {
  to: string;
  from: string;
  /** What the call runs when answered: TwiML itself, or a URL the carrier fetches it from. Exactly one. */
  twiml?: string;
  url?: string;
  statusCallback?: string;
  /** Which progress the status callback hears about (all four by default when there is a status callback). */
  statusCallbackEvents?: readonly StatusCallbackEvent[];
  /** Seconds to let it ring before giving up as no-answer. */
  timeoutSeconds?: number;
  /** Answering-machine detection: `Enable` answers at once, `DetectMessageEnd` waits for the greeting's end. */
  machineDetection?: 'Enable' | 'DetectMessageEnd';
}

const CallResource = Type.Object({
  sid: Type.String({ minLength: 1 }),
  status: Type.String(),
  to: Type.Union([Type.String(), Type.Null()]),
  from: Type.Union([Type.String(), Type.Null()]),
});
export type TwilioCall = Static<typeof CallResource>;

const AvailableNumberResource = Type.Object({
  phone_number: Type.String({ minLength: 1 }),
  friendly_name: Type.Optional(Type.String()),
  locality: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  region: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  iso_country: Type.String(),
  capabilities: Type.Optional(
    Type.Object({
      voice: Type.Optional(Type.Boolean()),
      SMS: Type.Optional(Type.Boolean()),
      MMS: Type.Optional(Type.Boolean()),
    }),
  ),
});
const AvailableNumberPage = Type.Object({ available_phone_numbers: Type.Array(AvailableNumberResource) });

export interface AvailableNumber {
  phoneNumber: string;
  isoCountry: string;
  locality: string | null;
  region: string | null;
  voice: boolean;
  sms: boolean;
}

const IncomingNumberResource = Type.Object({
  sid: Type.String({ minLength: 1 }),
  phone_number: Type.String({ minLength: 1 }),
});
export interface IncomingNumber {
  sid: string;
  phoneNumber: string;
}

export interface TwilioRestClient {
  createCall(call: CreateCallRequest, signal?: AbortSignal): Promise<TwilioCall>;
  /** Ends the call whatever its state (Status=completed); a call that has already ended answers as it is. */
  hangUpCall(callSid: string, signal?: AbortSignal): Promise<TwilioCall>;
  searchLocalNumbers(country: string, filter: { areaCode?: string }, signal?: AbortSignal): Promise<AvailableNumber[]>;
  buyNumber(number: { phoneNumber: string; voiceUrl: string }, signal?: AbortSignal): Promise<IncomingNumber>;
  releaseNumber(numberSid: string, signal?: AbortSignal): Promise<void>;
}

type FormFields = Record<string, string | readonly string[] | undefined>;

function formBody(fields: FormFields): string {
  const form = new URLSearchParams();
  for (const [name, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    for (const each of typeof value === 'string' ? [value] : value) form.append(name, each);
  }
  return form.toString();
}

const ERROR_BODY_LIMIT = 4096;

const invalid = (message: string) => new ProviderError(TWILIO_PROVIDER, 'invalid_request', message);

export function createTwilioRestClient(options: TwilioRestOptions): TwilioRestClient {
  if (!options.accountSid || !options.authToken) throw invalid('A Twilio account SID and auth token are required.');
  const baseUrl = (options.baseUrl ?? TWILIO_DEFAULT_BASE_URL).replace(/\/+$/, '');
  const timeoutMs = options.timeoutMs ?? 10_000;
  const secrets = [options.authToken];
  const authorization = `Basic ${Buffer.from(`${options.accountSid}:${options.authToken}`).toString('base64')}`;
  const accountPath = `/${API_VERSION}/Accounts/${encodeURIComponent(options.accountSid)}`;

  async function send<S extends TSchema>(
    method: 'GET' | 'POST' | 'DELETE',
    path: string,
    schema: S | null,
    fields: FormFields | null,
    signal: AbortSignal | undefined,
  ): Promise<Static<S>> {
    const url = `${baseUrl}${accountPath}${path}`;
    const where = `${method} ${url.split('?')[0]}`;
    const deadline = AbortSignal.timeout(timeoutMs);
    const combined = signal ? AbortSignal.any([signal, deadline]) : deadline;
    const headers: Record<string, string> = { authorization, accept: 'application/json' };
    if (fields) headers['content-type'] = 'application/x-www-form-urlencoded';

    let status: number;
    let text: string;
    try {
      const response = await request(url, {
        method,
        headers,
        ...(fields ? { body: formBody(fields) } : {}),
        signal: combined,
        ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
      });
      status = response.statusCode;
      text = await response.body.text();
    } catch (error) {
      if (signal?.aborted) throw new ProviderError(TWILIO_PROVIDER, 'aborted', `${where} was aborted by the caller`);
      if (deadline.aborted)
        throw new ProviderError(TWILIO_PROVIDER, 'timeout', `${where} did not complete within ${timeoutMs} ms`);
      const code = (error as { code?: string } | null)?.code ?? '';
      const reason = redactSecrets(error instanceof Error ? error.message : String(error), secrets);
      throw new ProviderError(TWILIO_PROVIDER, 'network', `${where} failed: ${reason}${code ? ` (${code})` : ''}`);
    }

    if (status < 200 || status > 299) throw errorFromAnswer(where, status, text.slice(0, ERROR_BODY_LIMIT), secrets);
    if (!schema) return undefined as Static<S>;
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new ProviderError(
        TWILIO_PROVIDER,
        'bad_response',
        `${where} answered ${status} with a body that is not JSON`,
        status,
      );
    }
    if (!Value.Check(schema, body)) {
      const [first] = Value.Errors(schema, body);
      throw new ProviderError(
        TWILIO_PROVIDER,
        'bad_response',
        `${where} answered ${status} with an unexpected body (${first?.instancePath || '/'} ${first?.message ?? ''})`,
        status,
      );
    }
    return body as Static<S>;
  }

  const requireId = (what: string, value: string) => {
    if (!value) throw invalid(`A ${what} is required.`);
    return encodeURIComponent(value);
  };

  return {
    async createCall(outbound, signal) {
      if (!outbound.to || !outbound.from) throw invalid('A call needs both To and From.');
      if ((outbound.twiml === undefined) === (outbound.url === undefined)) {
        throw invalid('A call needs exactly one of Twiml and Url.');
      }
      const events = outbound.statusCallback ? (outbound.statusCallbackEvents ?? STATUS_CALLBACK_EVENTS) : undefined;
      return send(
        'POST',
        '/Calls.json',
        CallResource,
        {
          To: outbound.to,
          From: outbound.from,
          Twiml: outbound.twiml,
          Url: outbound.url,
          StatusCallback: outbound.statusCallback,
          StatusCallbackMethod: outbound.statusCallback ? 'POST' : undefined,
          StatusCallbackEvent: events,
          Timeout: outbound.timeoutSeconds === undefined ? undefined : String(outbound.timeoutSeconds),
          MachineDetection: outbound.machineDetection,
        },
        signal,
      );
    },

    async hangUpCall(callSid, signal) {
      return send(
        'POST',
        `/Calls/${requireId('call SID', callSid)}.json`,
        CallResource,
        { Status: 'completed' },
        signal,
      );
    },

    async searchLocalNumbers(country, filter, signal) {
      if (!/^[A-Z]{2}$/.test(country)) throw invalid(`"${country}" is not a two-letter ISO country code.`);
      const query = filter.areaCode ? `?${new URLSearchParams({ AreaCode: filter.areaCode })}` : '';
      const page = await send(
        'GET',
        `/AvailablePhoneNumbers/${country}/Local.json${query}`,
        AvailableNumberPage,
        null,
        signal,
      );
      return page.available_phone_numbers.map((number) => ({
        phoneNumber: number.phone_number,
        isoCountry: number.iso_country,
        locality: number.locality ?? null,
        region: number.region ?? null,
        voice: number.capabilities?.voice ?? false,
        sms: number.capabilities?.SMS ?? false,
      }));
    },

    async buyNumber(number, signal) {
      if (!number.phoneNumber) throw invalid('A phone number to buy is required.');
      const bought = await send(
        'POST',
        '/IncomingPhoneNumbers.json',
        IncomingNumberResource,
        { PhoneNumber: number.phoneNumber, VoiceUrl: number.voiceUrl, VoiceMethod: 'POST' },
        signal,
      );
      return { sid: bought.sid, phoneNumber: bought.phone_number };
    },

    async releaseNumber(numberSid, signal) {
      await send('DELETE', `/IncomingPhoneNumbers/${requireId('number SID', numberSid)}.json`, null, null, signal);
    },
  };
}

const ErrorBody = Type.Object({
  code: Type.Optional(Type.Union([Type.Number(), Type.Null()])),
  message: Type.Optional(Type.String()),
  more_info: Type.Optional(Type.Union([Type.String(), Type.Null()])),
});

/** Twilio's `{ code, message, more_info, status }`, or the status and the start of whatever else came back. */
export function errorFromAnswer(
  where: string,
  status: number,
  body: string,
  secrets: readonly string[] = [],
): TwilioApiError {
  let parsed: unknown = null;
  try {
    parsed = JSON.parse(body);
  } catch {
    // Not JSON: a proxy's page; its start still helps.
  }
  if (Value.Check(ErrorBody, parsed) && parsed.message) {
    const code = typeof parsed.code === 'number' ? parsed.code : null;
    const message = redactSecrets(
      `${where} answered ${status}: ${code === null ? '' : `Twilio error ${code}: `}${parsed.message}`,
      secrets,
    );
    return new TwilioApiError(message, status, code, parsed.more_info ?? null);
  }
  const detail = body.trim().slice(0, 200);
  return new TwilioApiError(
    redactSecrets(`${where} answered ${status}${detail ? `: ${detail}` : ''}`, secrets),
    status,
    null,
    null,
  );
}
