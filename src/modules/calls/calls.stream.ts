/**
 * Live views of calls as Server-Sent Events: one call's events as they are written (every status change, each
 * transcript turn as `call.turn`, the disposition, the end), and the account's events. Both read what the calls
 * API reads, with the same access rules (another account's call is a 404), every POLL_MS: a write made by any
 * instance shows within about half a second.
 *
 * - One call: its events oldest first. A call's events are written one at a time under the call's lock, each later
 *   than the one before, so a position in that order is a cursor that misses nothing. The stream ends (an `end`
 *   message) once the call has ended.
 * - The account: events as they appear, oldest first; events written out of order by concurrent calls are found by
 *   comparing the newest page with those already sent. It never ends.
 * Resuming: Last-Event-ID names the last event received; the stream goes on after it. An id the stream cannot
 * place (unknown, or from too long ago for the account's stream) starts a call's stream from its first event, and
 * the account's from now.
 */
import type { Auth } from '../../lib/caller.js';
import { pause, type StreamPart } from '../../http/sse.js';
import type { CallsService } from './calls.service.js';
import type { CallEventType } from './calls.tables.js';

export const POLL_MS = 500;
/** A comment this often keeps an idle connection, and the proxies on its way, open. */
const HEARTBEAT_MS = 15_000;
const PAGE = 100;
/** The account's stream looks this far back for events written out of order, and for a Last-Event-ID. */
const ACCOUNT_LOOKBACK_PAGES = 10;
const SEEN_KEPT = 5_000;
/** The events a call ends with. */
const ENDING_EVENTS: ReadonlySet<CallEventType> = new Set(['call.completed', 'call.failed']);

type CallEvent = Awaited<ReturnType<CallsService['events']>>['events'][number];

const toMessage = (event: CallEvent): StreamPart => ({ id: event.id, event: event.type, data: event });

export interface CallStreamsDeps {
  calls: Pick<CallsService, 'callEvents' | 'events'>;
  pollMs?: number;
  heartbeatMs?: number;
}

export function createCallStreams(deps: CallStreamsDeps) {
  const { calls } = deps;
  const pollMs = deps.pollMs ?? POLL_MS;
  const heartbeatMs = deps.heartbeatMs ?? HEARTBEAT_MS;

  /** Where the call's event `id` is in its timeline (the position after it), or 0 when it is not there. */
  async function positionAfter(auth: Auth, callId: string, id: string): Promise<number> {
    for (let offset = 0; ; offset += PAGE) {
      const page = await calls.callEvents(auth, callId, { limit: PAGE, offset });
      const index = page.events.findIndex((event) => event.id === id);
      if (index >= 0) return offset + index + 1;
      if (page.events.length < PAGE) return 0;
    }
  }

  async function* followCall(auth: Auth, callId: string, start: number, signal: AbortSignal) {
    let position = start;
    let ended = false;
    let lastSent = Date.now();
    while (!signal.aborted) {
      const page = await calls.callEvents(auth, callId, { limit: PAGE, offset: position });
      for (const event of page.events) {
        yield toMessage(event);
        if (ENDING_EVENTS.has(event.type)) ended = true;
      }
      position += page.events.length;
      if (page.events.length === PAGE) continue;
      if (page.events.length > 0) lastSent = Date.now();
      // What is written with the end (costs, the disposition) has had one more poll to show.
      if (ended && page.events.length === 0) {
        yield { event: 'end', data: { callId } } satisfies StreamPart;
        return;
      }
      if (Date.now() - lastSent >= heartbeatMs) {
        yield { comment: 'keep-alive' } satisfies StreamPart;
        lastSent = Date.now();
      }
      if (!(await pause(pollMs, signal))) return;
    }
  }

  /** The account's newest events, newest first, back to (not including) one already seen, or `pages` pages. */
  async function newestUntilSeen(auth: Auth, seen: (id: string) => boolean, pages: number) {
    const found: CallEvent[] = [];
    for (let page = 0; page < pages; page++) {
      const { events } = await calls.events(auth, { limit: PAGE, offset: page * PAGE });
      for (const event of events) {
        if (seen(event.id)) return { events: found, reachedSeen: true };
        found.push(event);
      }
      if (events.length < PAGE) break;
    }
    return { events: found, reachedSeen: false };
  }

  /** Where the account's stream starts: after `resumeAfter` when it is recent enough to find, else now. */
  async function accountStart(auth: Auth, resumeAfter: string | null) {
    const current = await newestUntilSeen(auth, (id) => id === resumeAfter, ACCOUNT_LOOKBACK_PAGES);
    const replay = resumeAfter !== null && current.reachedSeen ? [...current.events].reverse() : [];
    return { known: current.events.map((event) => event.id), replay };
  }

  async function* followAccount(auth: Auth, start: { known: string[]; replay: CallEvent[] }, signal: AbortSignal) {
    const seen = new Set<string>(start.known);
    const remember = (events: CallEvent[]) => {
      for (const event of events) seen.add(event.id);
      for (const id of seen) {
        if (seen.size <= SEEN_KEPT) break;
        seen.delete(id);
      }
    };
    for (const event of start.replay) yield toMessage(event);
    let lastSent = Date.now();
    while (await pause(pollMs, signal)) {
      const fresh = await newestUntilSeen(auth, (id) => seen.has(id), ACCOUNT_LOOKBACK_PAGES);
      for (const event of [...fresh.events].reverse()) yield toMessage(event);
      remember(fresh.events);
      if (fresh.events.length > 0) lastSent = Date.now();
      else if (Date.now() - lastSent >= heartbeatMs) {
        yield { comment: 'keep-alive' } satisfies StreamPart;
        lastSent = Date.now();
      }
    }
  }

  return {
    /**
     * One call's events from the start, or after `resumeAfter`. Answers only once the call is known to be the
     * account's (a 404 otherwise), so the error is an ordinary error body.
     */
    async call(auth: Auth, callId: string, resumeAfter: string | null) {
      const start = resumeAfter ? await positionAfter(auth, callId, resumeAfter) : 0;
      if (!resumeAfter) await calls.callEvents(auth, callId, { limit: 1, offset: 0 });
      return (signal: AbortSignal) => followCall(auth, callId, start, signal);
    },

    /** The account's events from now on (what exists is read before answering), or after `resumeAfter`. */
    async account(auth: Auth, resumeAfter: string | null) {
      const start = await accountStart(auth, resumeAfter);
      return (signal: AbortSignal) => followAccount(auth, start, signal);
    },
  };
}

export type CallStreams = ReturnType<typeof createCallStreams>;
