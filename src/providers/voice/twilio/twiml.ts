/**
 * TwiML: the XML a Twilio-compatible carrier runs when a call connects. Parley needs three documents: connect the
 * call's audio to our Media Streams WebSocket (with parameters that come back in the stream's `start` message),
 * refuse an inbound call, and hang up.
 */

const XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>';

const XML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' };

/** Text safe inside an attribute value or element; characters XML 1.0 cannot carry at all are refused. */
export function escapeXml(text: string): string {
  if (/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/.test(text)) {
    throw new TwimlError('Text for TwiML contains a control character XML cannot carry.');
  }
  return text.replace(/[&<>"']/g, (char) => XML_ESCAPES[char]!);
}

export class TwimlError extends Error {
  override readonly name = 'TwimlError';
}

export interface ConnectStreamOptions {
  /** The WebSocket the carrier opens: wss:// in production (Twilio accepts nothing else); ws:// for local tests. */
  url: string;
  /** Names the stream (lets it be stopped by name). */
  name?: string;
  /** Where the carrier posts the stream's own status (stream-started, stream-stopped, stream-error). */
  statusCallback?: string;
  /** Custom parameters: they arrive in the `start` message's `customParameters`, in this order. */
  parameters?: Readonly<Record<string, string>>;
}

const attribute = (name: string, value: string | undefined) =>
  value === undefined ? '' : ` ${name}="${escapeXml(value)}"`;

/** `<Response><Connect><Stream url=…><Parameter …/></Stream></Connect></Response>`: a bidirectional stream. */
export function connectStreamTwiml(options: ConnectStreamOptions): string {
  let url: URL;
  try {
    url = new URL(options.url);
  } catch {
    throw new TwimlError(`The stream URL "${options.url}" is not a URL.`);
  }
  if (url.protocol !== 'wss:' && url.protocol !== 'ws:') {
    throw new TwimlError(`The stream URL must be wss:// (or ws:// for a local test), not ${url.protocol}//.`);
  }
  const parameters = Object.entries(options.parameters ?? {})
    .map(([name, value]) => `<Parameter${attribute('name', name)}${attribute('value', value)}/>`)
    .join('');
  const stream =
    `<Stream${attribute('url', options.url)}${attribute('name', options.name)}` +
    `${attribute('statusCallback', options.statusCallback)}` +
    (parameters ? `>${parameters}</Stream>` : '/>');
  return `${XML_DECLARATION}<Response><Connect>${stream}</Connect></Response>`;
}

export type RejectReason = 'rejected' | 'busy';

/** Refuses an inbound call without answering it (no charge): the caller hears a busy tone or "not in service". */
export function rejectTwiml(reason: RejectReason = 'rejected'): string {
  return `${XML_DECLARATION}<Response><Reject reason="${reason}"/></Response>`;
}

/** Ends the call. */
export function hangupTwiml(): string {
  return `${XML_DECLARATION}<Response><Hangup/></Response>`;
}
