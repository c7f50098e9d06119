/**
 * Live call events through the server's event streams (GET /v1/calls/{id}/stream, GET /v1/events/stream), with the
 * browser's EventSource: it sends the session cookie, and reconnects by itself with Last-Event-ID.
 */
import { useEffect, useRef, useState } from 'react';
import type { Schemas } from './client';

export type CallEvent = Schemas['CallEvent'];
type EventType = CallEvent['type'];

/** Every event type the streams send, each a named SSE event. */
const EVENT_TYPES = [
  'call.queued',
  'call.dialing',
  'call.ringing',
  'call.connected',
  'call.turn',
  'call.voicemail',
  'call.transferred',
  'call.disposition_set',
  'call.dnc_added',
  'call.completed',
  'call.failed',
  'call.knowledge_retrieved',
  'campaign.started',
  'campaign.compliance_paused',
] as const satisfies readonly EventType[];
// A type the API adds and this list lacks fails the build here, rather than its events going unheard.
type Unlisted = Exclude<EventType, (typeof EVENT_TYPES)[number]>;
const everyTypeListed: [Unlisted] extends [never] ? true : Unlisted = true;
void everyTypeListed;

export type StreamState = 'connecting' | 'open' | 'ended' | 'failed';

function listen(source: EventSource, onEvent: (event: CallEvent) => void) {
  const handler = (message: MessageEvent<string>) => onEvent(JSON.parse(message.data) as CallEvent);
  for (const type of EVENT_TYPES) source.addEventListener(type, handler);
}

/** One call's events, from its first, as they happen; `enabled: false` (an ended call) opens nothing. */
export function useCallStream(callId: string, enabled: boolean, onEnd?: () => void) {
  const [events, setEvents] = useState<CallEvent[]>([]);
  const [state, setState] = useState<StreamState>('connecting');
  const onEndRef = useRef(onEnd);
  onEndRef.current = onEnd;
  useEffect(() => {
    if (!enabled) return;
    setEvents([]);
    setState('connecting');
    const seen = new Set<string>();
    const source = new EventSource(`/api/v1/calls/${encodeURIComponent(callId)}/stream`);
    source.onopen = () => setState('open');
    listen(source, (event) => {
      if (seen.has(event.id)) return;
      seen.add(event.id);
      setEvents((previous) => [...previous, event]);
    });
    source.addEventListener('end', () => {
      source.close();
      setState('ended');
      onEndRef.current?.();
    });
    // EventSource retries by itself after a dropped connection; CLOSED means the server refused (401, 404).
    source.onerror = () => {
      if (source.readyState === EventSource.CLOSED) setState('failed');
    };
    return () => source.close();
  }, [callId, enabled]);
  return { events, state };
}

/** Calls `onEvent` for each new event of the account while mounted (live lists). */
export function useAccountEvents(onEvent: (event: CallEvent) => void) {
  const onEventRef = useRef(onEvent);
  onEventRef.current = onEvent;
  useEffect(() => {
    const source = new EventSource('/api/v1/events/stream');
    listen(source, (event) => onEventRef.current(event));
    return () => source.close();
  }, []);
}
