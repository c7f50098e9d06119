/**
 * Deepgram's live streaming API (and servers that speak it): a WebSocket to `{baseUrl}/v1/listen` with the
 * audio format and endpointing in the query, `Authorization: Token <key>`, binary audio frames up, JSON
 * "Results" / "UtteranceEnd" / "Metadata" messages down, KeepAlive while no audio flows and CloseStream to
 * finish.
 */
import WebSocket from 'ws';
import { encodeMulaw } from '../voice/media/g711.js';
import { ProviderError, type ProviderErrorCode, redactSecrets } from '../provider-error.js';
import { createSilenceEndpointer } from './silence-endpointer.js';
import type { SpeechToText, SttEvent, SttOpenOptions, SttSession, SttWord } from './stt-port.js';

const PROVIDER = 'deepgram-stt';

export interface DeepgramSttOptions {
  /** `wss://api.deepgram.com` or a compatible server; `/v1/listen` is added. */
  baseUrl: string;
  apiKey: string;
  model: string;
  /** What goes over the wire: `mulaw` halves the bytes of 8 kHz audio; `linear16` works at 16 kHz too. */
  encoding?: 'linear16' | 'mulaw';
  /** Also ask for "UtteranceEnd" after this much silence between words (Deepgram takes 1000 or more). */
  utteranceEndMs?: number;
  /** Send KeepAlive when no audio went up for this long (Deepgram closes an idle stream after 10 s). */
  keepAliveMs?: number;
  /** How long open() and finish() wait for the server. */
  timeoutMs?: number;
}

export const DEEPGRAM_DEFAULTS = { endpointingMs: 300, silenceFallbackMs: 1000, keepAliveMs: 5000, timeoutMs: 10_000 };

// ---------------------------------------------------------------------------------------------------------
// Messages

export type DeepgramMessage =
  | {
      type: 'Results';
      isFinal: boolean;
      speechFinal: boolean;
      text: string;
      startMs: number;
      endMs: number;
      confidence: number | null;
      words: SttWord[];
    }
  | { type: 'UtteranceEnd'; lastWordEndMs: number }
  | { type: 'Metadata'; requestId: string | null }
  | { type: 'Error'; message: string }
  /** SpeechStarted and anything newer: nothing to do. */
  | { type: 'other' };

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const isNumber = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);
const toMs = (seconds: number) => Math.round(seconds * 1000);

/** Reads one text frame; throws a `bad_response` ProviderError for anything outside the protocol. */
export function parseDeepgramMessage(text: string): DeepgramMessage {
  const bad = (why: string) => new ProviderError(PROVIDER, 'bad_response', `the server sent ${why}`);
  let message: unknown;
  try {
    message = JSON.parse(text);
  } catch {
    throw bad('a message that is not JSON');
  }
  if (!isObject(message) || typeof message.type !== 'string') throw bad('a message without a type');
  switch (message.type) {
    case 'Results': {
      const alternative =
        isObject(message.channel) && Array.isArray(message.channel.alternatives)
          ? message.channel.alternatives[0]
          : undefined;
      if (!isObject(alternative) || typeof alternative.transcript !== 'string')
        throw bad('a Results message without channel.alternatives[0].transcript');
      if (!isNumber(message.start) || !isNumber(message.duration))
        throw bad('a Results message without start and duration');
      const words = Array.isArray(alternative.words) ? alternative.words : [];
      return {
        type: 'Results',
        isFinal: message.is_final === true,
        speechFinal: message.speech_final === true,
        text: alternative.transcript,
        startMs: toMs(message.start),
        endMs: toMs(message.start + message.duration),
        confidence: isNumber(alternative.confidence) ? alternative.confidence : null,
        words: words.filter(isObject).map((word) => ({
          word: String(word.punctuated_word ?? word.word ?? ''),
          startMs: isNumber(word.start) ? toMs(word.start) : 0,
          endMs: isNumber(word.end) ? toMs(word.end) : 0,
          confidence: isNumber(word.confidence) ? word.confidence : null,
        })),
      };
    }
    case 'UtteranceEnd':
      if (!isNumber(message.last_word_end)) throw bad('an UtteranceEnd message without last_word_end');
      return { type: 'UtteranceEnd', lastWordEndMs: toMs(message.last_word_end) };
    case 'Metadata':
      return { type: 'Metadata', requestId: typeof message.request_id === 'string' ? message.request_id : null };
    case 'Error':
      return {
        type: 'Error',
        message: String(message.description ?? message.message ?? message.err_msg ?? 'an error without a description'),
      };
    default:
      return { type: 'other' };
  }
}

/** The query string of a listen request. */
export function deepgramListenUrl(
  baseUrl: string,
  options: Pick<DeepgramSttOptions, 'model' | 'utteranceEndMs'> & {
    encoding: 'linear16' | 'mulaw';
    sampleRate: number;
    endpointingMs: number;
    language?: string | undefined;
  },
): string {
  const url = new URL(`${baseUrl.replace(/\/+$/, '')}/v1/listen`);
  url.searchParams.set('encoding', options.encoding);
  url.searchParams.set('sample_rate', String(options.sampleRate));
  url.searchParams.set('channels', '1');
  url.searchParams.set('interim_results', 'true');
  url.searchParams.set('endpointing', String(options.endpointingMs));
  url.searchParams.set('model', options.model);
  if (options.language) url.searchParams.set('language', options.language);
  if (options.utteranceEndMs !== undefined) url.searchParams.set('utterance_end_ms', String(options.utteranceEndMs));
  return url.toString();
}

/** What a WebSocket close code from the server means for the caller. */
export function closeCodeError(code: number, reason: string): ProviderError {
  const detail = reason ? `: ${reason}` : '';
  // 1008 (policy) is Deepgram's answer to audio it cannot decode; 1011 to a failure on its side.
  const kind: ProviderErrorCode = code === 1008 ? 'invalid_request' : code === 1011 ? 'upstream_error' : 'network';
  const what = code === 1006 ? 'the connection was lost' : `the server closed the stream (code ${code}${detail})`;
  return new ProviderError(PROVIDER, kind, `${what} before the stream was finished`);
}

// ---------------------------------------------------------------------------------------------------------
// The adapter

export function createDeepgramStt(options: DeepgramSttOptions): SpeechToText {
  const encoding = options.encoding ?? 'linear16';
  const keepAliveMs = options.keepAliveMs ?? DEEPGRAM_DEFAULTS.keepAliveMs;
  const timeoutMs = options.timeoutMs ?? DEEPGRAM_DEFAULTS.timeoutMs;
  const safe = (text: string) => redactSecrets(text, [options.apiKey]);

  return {
    name: `deepgram:${options.model}`,

    async open(open: SttOpenOptions): Promise<SttSession> {
      if (open.sampleRate !== 8000 && open.sampleRate !== 16000)
        throw new ProviderError(
          PROVIDER,
          'invalid_request',
          `the sample rate is 8000 or 16000 Hz, got ${open.sampleRate}`,
        );
      if (encoding === 'mulaw' && open.sampleRate !== 8000)
        throw new ProviderError(PROVIDER, 'invalid_request', 'μ-law audio is 8000 Hz');
      const endpointingMs = open.endpointingMs ?? DEEPGRAM_DEFAULTS.endpointingMs;
      const url = deepgramListenUrl(options.baseUrl, {
        model: options.model,
        utteranceEndMs: options.utteranceEndMs,
        encoding,
        sampleRate: open.sampleRate,
        endpointingMs,
        language: open.language,
      });
      const socket = new WebSocket(url, {
        headers: { Authorization: `Token ${options.apiKey}` },
        handshakeTimeout: timeoutMs,
        perMessageDeflate: false,
      });
      await connected(socket, safe);
      return startSession(socket, open, encoding, keepAliveMs, timeoutMs);
    },
  };
}

function connected(socket: WebSocket, safe: (text: string) => string): Promise<void> {
  return new Promise((resolve, reject) => {
    const fail = (error: ProviderError) => {
      socket.removeAllListeners();
      socket.on('error', () => {});
      socket.terminate();
      reject(error);
    };
    socket.once('open', () => {
      socket.removeAllListeners();
      resolve();
    });
    socket.once('unexpected-response', (_request, response) => {
      const status = response.statusCode ?? 0;
      const dgError = response.headers['dg-error'];
      const detail = typeof dgError === 'string' ? `: ${safe(dgError)}` : '';
      response.resume();
      if (status === 401 || status === 403) {
        fail(
          new ProviderError(PROVIDER, 'invalid_request', `the server refused the API key (${status})${detail}`, status),
        );
      } else {
        fail(
          new ProviderError(PROVIDER, 'upstream_error', `the server answered ${status} to the stream${detail}`, status),
        );
      }
    });
    socket.once('error', (error) => {
      const timedOut = /timed out/i.test(error.message);
      fail(
        new ProviderError(
          PROVIDER,
          timedOut ? 'timeout' : 'network',
          timedOut ? 'the server did not accept the stream in time' : `could not connect: ${safe(error.message)}`,
        ),
      );
    });
  });
}

function startSession(
  socket: WebSocket,
  open: SttOpenOptions,
  encoding: 'linear16' | 'mulaw',
  keepAliveMs: number,
  timeoutMs: number,
): SttSession {
  const endpointer = createSilenceEndpointer({
    sampleRate: open.sampleRate,
    silenceMs: open.silenceFallbackMs ?? DEEPGRAM_DEFAULTS.silenceFallbackMs,
  });
  let samplesSent = 0;
  let lastSentAt = Date.now();
  /** `open` while audio flows, `finishing` after CloseStream, `closed` once over (events stop). */
  let state: 'open' | 'finishing' | 'closed' = 'open';
  let failure: ProviderError | null = null;
  let settleFinish: ((error: ProviderError | null) => void) | null = null;
  let finishTimer: NodeJS.Timeout | null = null;

  /** The end of the last final transcript with words, so finish() can end the utterance it closed. */
  let lastFinalEndMs: number | null = null;

  const emit = (event: SttEvent) => {
    if (state !== 'closed') open.onEvent(event);
  };

  function close(error: ProviderError | null) {
    if (state === 'closed') return;
    if (!error && lastFinalEndMs !== null && endpointer.providerEnded(lastFinalEndMs))
      emit({ type: 'utterance_end', atMs: lastFinalEndMs, source: 'finish' });
    if (error) {
      failure = error;
      emit({ type: 'error', error });
    }
    state = 'closed';
    clearInterval(keepAlive);
    if (finishTimer) clearTimeout(finishTimer);
    socket.removeAllListeners();
    socket.on('error', () => {});
    if (socket.readyState === WebSocket.OPEN || socket.readyState === WebSocket.CONNECTING) {
      if (error) socket.terminate();
      else socket.close(1000);
    }
    settleFinish?.(error);
  }

  const keepAlive = setInterval(
    () => {
      if (state === 'open' && Date.now() - lastSentAt >= keepAliveMs) {
        socket.send(JSON.stringify({ type: 'KeepAlive' }));
        lastSentAt = Date.now();
      }
    },
    Math.max(10, Math.floor(keepAliveMs / 2)),
  );
  keepAlive.unref();

  socket.on('message', (data, isBinary) => {
    if (isBinary) return close(new ProviderError(PROVIDER, 'bad_response', 'the server sent binary data'));
    let message: ReturnType<typeof parseDeepgramMessage>;
    try {
      message = parseDeepgramMessage(data.toString());
    } catch (error) {
      return close(error as ProviderError);
    }
    switch (message.type) {
      case 'Results':
        if (message.text !== '' || message.isFinal) {
          emit({
            type: 'transcript',
            isFinal: message.isFinal,
            text: message.text,
            startMs: message.startMs,
            endMs: message.endMs,
            confidence: message.confidence,
            words: message.words,
          });
        }
        if (message.isFinal && message.text !== '') lastFinalEndMs = message.words.at(-1)?.endMs ?? message.endMs;
        if (message.speechFinal && message.text !== '') {
          const atMs = message.words.at(-1)?.endMs ?? message.endMs;
          if (endpointer.providerEnded(atMs)) emit({ type: 'utterance_end', atMs, source: 'provider' });
        }
        return;
      case 'UtteranceEnd':
        if (endpointer.providerEnded(message.lastWordEndMs))
          emit({ type: 'utterance_end', atMs: message.lastWordEndMs, source: 'provider' });
        return;
      case 'Error':
        return close(new ProviderError(PROVIDER, 'upstream_error', `the server reported an error: ${message.message}`));
      default:
        return;
    }
  });
  socket.on('close', (code, reason) => {
    if (state === 'finishing' && (code === 1000 || code === 1005)) close(null);
    else close(closeCodeError(code, reason.toString()));
  });
  socket.on('error', (error) => {
    close(new ProviderError(PROVIDER, 'network', `the connection failed: ${error.message}`));
  });

  return {
    send(pcm) {
      if (failure) throw failure;
      if (state !== 'open')
        throw new ProviderError(PROVIDER, 'invalid_request', 'the stream is finished; open another');
      if (pcm.length === 0) return;
      const bytes =
        encoding === 'mulaw' ? encodeMulaw(pcm) : new Uint8Array(pcm.buffer, pcm.byteOffset, pcm.byteLength);
      socket.send(bytes);
      samplesSent += pcm.length;
      lastSentAt = Date.now();
      for (const atMs of endpointer.push(pcm)) emit({ type: 'utterance_end', atMs, source: 'silence' });
    },
    finish() {
      if (failure) return Promise.reject(failure);
      if (state === 'closed') return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const previous = settleFinish;
        settleFinish = (error) => {
          previous?.(error);
          if (error) reject(error);
          else resolve();
        };
        if (state === 'open') {
          state = 'finishing';
          socket.send(JSON.stringify({ type: 'CloseStream' }));
          finishTimer = setTimeout(
            () =>
              close(
                new ProviderError(PROVIDER, 'timeout', `the server did not close the stream within ${timeoutMs} ms`),
              ),
            timeoutMs,
          );
        }
      });
    },
    abort() {
      if (state === 'closed') return;
      failure = new ProviderError(PROVIDER, 'aborted', 'the stream was aborted');
      state = 'closed';
      clearInterval(keepAlive);
      if (finishTimer) clearTimeout(finishTimer);
      socket.removeAllListeners();
      socket.on('error', () => {});
      socket.terminate();
      settleFinish?.(failure);
    },
    get audioSeconds() {
      return samplesSent / open.sampleRate;
    },
  };
}
