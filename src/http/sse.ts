/**
 * Server-Sent Events: a route answers a stream of messages (`id`, `event`, `data`, one JSON line) that a browser's
 * EventSource reads and resumes with Last-Event-ID. `createEventStreams(app).send` sends one; the messages come
 * from an async iterable that stops when the client goes away or the server closes (its signal aborts).
 */
import { Readable } from 'node:stream';
import { setTimeout as wait } from 'node:timers/promises';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { invalidField } from '../lib/errors.js';
import type { App } from './types.js';

export interface StreamMessage {
  /** What the client sends back in Last-Event-ID to resume after this message; none for control messages. */
  id?: string;
  event: string;
  data: unknown;
}

/** A stream's parts: messages, and comments that keep idle connections (and the proxies on the way) open. */
export type StreamPart = StreamMessage | { comment: string };

/** How long EventSource waits before it reconnects, sent first. */
const RETRY_MS = 2000;

export function formatPart(part: StreamPart): string {
  if ('comment' in part) return `: ${part.comment}\n\n`;
  const id = part.id === undefined ? '' : `id: ${part.id}\n`;
  return `${id}event: ${part.event}\ndata: ${JSON.stringify(part.data)}\n\n`;
}

/** The Last-Event-ID a reconnecting client sends (or `lastEventId` in the query, for clients that cannot set it). */
export function lastEventId(request: FastifyRequest): string | null {
  const header = request.headers['last-event-id'];
  const fromQuery = (request.query as { lastEventId?: unknown } | undefined)?.lastEventId;
  const value = typeof header === 'string' && header !== '' ? header : fromQuery;
  return typeof value === 'string' && value !== '' ? value : null;
}

/**
 * A stream that may never end is sent only to a client that asks for one: its Accept header names
 * text/event-stream (EventSource sends exactly that), text/* or any type (curl's and fetch's default). Without it,
 * a 400 names the header.
 */
export function requireEventStreamAccepted(request: FastifyRequest) {
  const accept = String(request.headers.accept ?? '').toLowerCase();
  if (!/(^|,)\s*(text\/event-stream|text\/\*|\*\/\*)\s*(;|,|$)/.test(accept)) {
    throw invalidField('headers/accept', 'must accept text/event-stream (send Accept: text/event-stream)');
  }
}

/** Waits `ms` of real time, or less when the signal aborts (answering false then). */
export async function pause(ms: number, signal: AbortSignal): Promise<boolean> {
  try {
    await wait(ms, undefined, { signal });
    return true;
  } catch {
    return false;
  }
}

/**
 * Event streams of an app: `send` answers a request with the stream `open(signal)` makes; the signal aborts when
 * the client disconnects, or when the app closes (an open stream must not hold a shutdown up). Checks that can
 * fail (access, a missing resource) belong before `send`, so they answer the usual error body.
 */
export function createEventStreams(app: App) {
  const open = new Set<AbortController>();
  app.addHook('preClose', async () => {
    for (const controller of open) controller.abort();
  });
  return {
    send(request: FastifyRequest, reply: FastifyReply, make: (signal: AbortSignal) => AsyncIterable<StreamPart>) {
      const controller = new AbortController();
      open.add(controller);
      const stop = () => {
        controller.abort();
        open.delete(controller);
      };
      request.raw.once('close', stop);
      reply.raw.once('close', stop);
      async function* body() {
        try {
          yield `retry: ${RETRY_MS}\n\n`;
          for await (const part of make(controller.signal)) yield formatPart(part);
        } finally {
          open.delete(controller);
        }
      }
      reply
        .header('content-type', 'text/event-stream; charset=utf-8')
        .header('cache-control', 'no-cache, no-transform')
        // nginx and similar proxies pass the stream on as it comes instead of buffering it.
        .header('x-accel-buffering', 'no');
      return reply.send(Readable.from(body(), { objectMode: false }));
    },
  };
}
