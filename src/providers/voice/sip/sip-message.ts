/**
 * SIP messages (RFC 3261 section 7) as plain objects: bytes in, a request or response out, and back. A small,
 * strict reader written here: the npm SIP parsers are either parts of browser user agents or CommonJS packages
 * without types. Anything it cannot read is a SipFormatError with the reason, never a crash, and it never reads
 * past the bytes it was given, so a lying Content-Length cannot make it wait.
 */
import {
  formatParams,
  parseHostPort,
  parseHeaderParams,
  parseNameAddr,
  SipFormatError,
  splitOutsideQuotes,
} from './sip-uri.js';

export { SipFormatError };

export interface SipHeader {
  /** The canonical spelling (`Call-ID`, `Via`) for known headers, as received otherwise. */
  name: string;
  value: string;
}

interface SipMessageBase {
  /** In order; a header that appeared several times (or comma-joined) stays as received. */
  headers: SipHeader[];
  body: Buffer;
}

export interface SipRequest extends SipMessageBase {
  kind: 'request';
  method: string;
  uri: string;
}

export interface SipResponse extends SipMessageBase {
  kind: 'response';
  status: number;
  reason: string;
}

export type SipMessage = SipRequest | SipResponse;

/** A datagram holds one message; more than this is not SIP over UDP worth reading. */
export const MAX_SIP_MESSAGE_BYTES = 65_535;
const MAX_HEADERS = 256;

const COMPACT_FORMS: Record<string, string> = {
  a: 'Accept-Contact',
  b: 'Referred-By',
  c: 'Content-Type',
  d: 'Request-Disposition',
  e: 'Content-Encoding',
  f: 'From',
  i: 'Call-ID',
  j: 'Reject-Contact',
  k: 'Supported',
  l: 'Content-Length',
  m: 'Contact',
  o: 'Event',
  r: 'Refer-To',
  s: 'Subject',
  t: 'To',
  u: 'Allow-Events',
  v: 'Via',
  x: 'Session-Expires',
  y: 'Identity',
};

// Headers whose spelling differs from plain Title-Case, and the ones we write.
const CANONICAL = new Map(
  [
    'Call-ID',
    'CSeq',
    'WWW-Authenticate',
    'Proxy-Authenticate',
    'Proxy-Authorization',
    'Authorization',
    'Authentication-Info',
    'Max-Forwards',
    'Record-Route',
    'User-Agent',
    'Content-Length',
    'Content-Type',
    'MIME-Version',
    'RSeq',
    'RAck',
    'P-Asserted-Identity',
    ...Object.values(COMPACT_FORMS),
  ].map((name) => [name.toLowerCase(), name]),
);

/**
 * Headers that may hold several values joined by commas (RFC 3261 7.3.1). The authentication headers are not
 * among them: their parameters hold commas.
 */
const COMMA_SEPARATED = new Set([
  'via',
  'contact',
  'route',
  'record-route',
  'allow',
  'supported',
  'require',
  'proxy-require',
  'unsupported',
  'accept',
  'accept-encoding',
  'accept-language',
  'allow-events',
  'content-encoding',
  'in-reply-to',
]);

export function canonicalHeaderName(name: string): string {
  const lower = name.toLowerCase();
  return COMPACT_FORMS[lower] ?? CANONICAL.get(lower) ?? name;
}

const TOKEN = /^[A-Za-z0-9\-.!%*_+`'~]+$/;
const REQUEST_LINE = /^([A-Za-z0-9\-.!%*_+`'~]+) (\S+) SIP\/2\.0$/;
const STATUS_LINE = /^SIP\/2\.0 ([1-6]\d\d) ?(.*)$/;

export interface ParseOptions {
  /**
   * Stream transports (TCP) must send Content-Length; on UDP a missing one means the rest of the datagram
   * (RFC 3261 18.3).
   */
  requireContentLength?: boolean;
}

/** One message from one datagram (or one framed stream message). */
export function parseSipMessage(input: Buffer | string, options: ParseOptions = {}): SipMessage {
  const bytes = typeof input === 'string' ? Buffer.from(input, 'utf8') : input;
  if (bytes.length > MAX_SIP_MESSAGE_BYTES)
    throw new SipFormatError(`message is ${bytes.length} bytes, at most ${MAX_SIP_MESSAGE_BYTES}`);
  let start = 0;
  // Keep-alive CRLFs before a message are allowed (RFC 3261 7.5).
  while (bytes[start] === 0x0d || bytes[start] === 0x0a) start++;
  const headEnd = findHeadEnd(bytes, start);
  if (!headEnd) throw new SipFormatError('no blank line after the headers');
  const head = bytes.subarray(start, headEnd.index).toString('utf8');
  const lines = unfold(head.split(/\r?\n/));
  const startLine = lines.shift() ?? '';
  const headers = lines.map(parseHeaderLine);
  if (headers.length > MAX_HEADERS) throw new SipFormatError(`more than ${MAX_HEADERS} headers`);

  const available = bytes.subarray(headEnd.index + headEnd.length);
  const lengthHeader = headerValues(headers, 'Content-Length');
  let body: Buffer;
  if (lengthHeader.length === 0) {
    if (options.requireContentLength) throw new SipFormatError('Content-Length is required on a stream transport');
    body = available;
  } else {
    if (new Set(lengthHeader.map((v) => v.trim())).size > 1)
      throw new SipFormatError('conflicting Content-Length headers');
    const length = parseContentLength(lengthHeader[0]!);
    if (length > available.length) {
      throw new SipFormatError(`Content-Length says ${length} bytes, the message has ${available.length}`);
    }
    body = available.subarray(0, length); // bytes beyond it are not part of this message (RFC 3261 18.3)
  }

  let message: SipMessage;
  const status = STATUS_LINE.exec(startLine);
  if (status) {
    message = { kind: 'response', status: Number(status[1]), reason: status[2]!.trim(), headers, body };
  } else {
    const request = REQUEST_LINE.exec(startLine);
    if (!request) throw new SipFormatError(`not a SIP start line: ${JSON.stringify(startLine.slice(0, 80))}`);
    message = { kind: 'request', method: request[1]!, uri: request[2]!, headers, body };
  }
  checkMandatoryHeaders(message);
  return message;
}

/**
 * Cuts one message off the front of a stream buffer (TCP): the message and the bytes after it, or null when
 * more bytes are needed. Leading keep-alive CRLFs are dropped.
 */
export function takeStreamMessage(buffer: Buffer): { message: SipMessage; rest: Buffer } | null {
  let start = 0;
  while (buffer[start] === 0x0d || buffer[start] === 0x0a) start++;
  const headEnd = findHeadEnd(buffer, start);
  if (!headEnd) {
    if (buffer.length - start > MAX_SIP_MESSAGE_BYTES) throw new SipFormatError('no end of headers within 64 KiB');
    return null;
  }
  const head = buffer.subarray(start, headEnd.index).toString('utf8');
  const lengthLine = unfold(head.split(/\r?\n/))
    .slice(1)
    .map(parseHeaderLine)
    .find((header) => header.name === 'Content-Length');
  if (!lengthLine) throw new SipFormatError('Content-Length is required on a stream transport');
  const end = headEnd.index + headEnd.length + parseContentLength(lengthLine.value);
  if (end - start > MAX_SIP_MESSAGE_BYTES)
    throw new SipFormatError(`message longer than ${MAX_SIP_MESSAGE_BYTES} bytes`);
  if (buffer.length < end) return null;
  return {
    message: parseSipMessage(buffer.subarray(start, end), { requireContentLength: true }),
    rest: buffer.subarray(end),
  };
}

/** Bytes to send: CRLF line ends, and Content-Length always written from the body's real length. */
export function serializeSipMessage(message: SipMessage): Buffer {
  const startLine =
    message.kind === 'request'
      ? `${message.method} ${message.uri} SIP/2.0`
      : `SIP/2.0 ${message.status} ${message.reason}`;
  const lines = [startLine];
  for (const header of message.headers) {
    if (header.name.toLowerCase() === 'content-length') continue;
    if (/[\r\n]/.test(header.value) || !TOKEN.test(header.name)) {
      throw new SipFormatError(`header ${JSON.stringify(header.name)} cannot be written as one line`);
    }
    lines.push(`${header.name}: ${header.value}`);
  }
  lines.push(`Content-Length: ${message.body.length}`, '', '');
  return Buffer.concat([Buffer.from(lines.join('\r\n'), 'utf8'), message.body]);
}

/** The first value of a header (a comma-joined list counts as several), or undefined. */
export function getHeader(message: Pick<SipMessage, 'headers'>, name: string): string | undefined {
  return getHeaders(message, name)[0];
}

/** Every value of a header, in order, across repeated lines and comma-joined lists. */
export function getHeaders(message: Pick<SipMessage, 'headers'>, name: string): string[] {
  return headerValues(message.headers, name);
}

/** Like getHeader, for headers every message must carry: a clear error when absent. */
export function requireHeader(message: Pick<SipMessage, 'headers'>, name: string): string {
  const value = getHeader(message, name);
  if (value === undefined) throw new SipFormatError(`missing ${canonicalHeaderName(name)} header`);
  return value;
}

function headerValues(headers: SipHeader[], name: string): string[] {
  const canonical = canonicalHeaderName(name);
  const splits = COMMA_SEPARATED.has(canonical.toLowerCase());
  const values: string[] = [];
  for (const header of headers) {
    if (header.name !== canonical) continue;
    if (splits)
      values.push(
        ...splitOutsideQuotes(header.value, ',')
          .map((v) => v.trim())
          .filter((v) => v !== ''),
      );
    else values.push(header.value);
  }
  return values;
}

export interface Via {
  /** `UDP`, `TCP`, `TLS`, `WS`… upper-cased. */
  transport: string;
  host: string;
  port?: number;
  branch?: string;
  /** The address the next hop saw the request come from (RFC 3261 18.2.1). */
  received?: string;
  /** `true` when asked for (`;rport`), the port seen when filled in (RFC 3581). */
  rport?: number | true;
  params: Record<string, string | null>;
}

export function parseVia(value: string): Via {
  const match = /^SIP\s*\/\s*2\.0\s*\/\s*([A-Za-z0-9-]+)\s+([^;]+)(.*)$/i.exec(value.trim());
  if (!match) throw new SipFormatError(`bad Via: ${JSON.stringify(value.slice(0, 80))}`);
  const { host, port } = parseHostPort(match[2]!.trim(), value);
  const params = parseHeaderParams(match[3]!);
  const rport = params.rport;
  if (rport !== undefined && rport !== null && !/^\d{1,5}$/.test(rport))
    throw new SipFormatError(`bad rport: ${rport}`);
  return {
    transport: match[1]!.toUpperCase(),
    host,
    ...(port !== undefined ? { port } : {}),
    ...(params.branch ? { branch: params.branch } : {}),
    ...(params.received ? { received: params.received } : {}),
    ...(rport !== undefined ? { rport: rport === null ? (true as const) : Number(rport) } : {}),
    params,
  };
}

export function formatVia(via: Pick<Via, 'transport' | 'host' | 'port' | 'params'>): string {
  return `SIP/2.0/${via.transport} ${via.host}${via.port !== undefined ? `:${via.port}` : ''}${formatParams(via.params)}`;
}

export interface CSeq {
  seq: number;
  method: string;
}

export function parseCSeq(value: string): CSeq {
  const match = /^(\d{1,10})\s+([A-Za-z0-9\-.!%*_+`'~]+)$/.exec(value.trim());
  if (!match || Number(match[1]) > 2 ** 31 - 1)
    throw new SipFormatError(`bad CSeq: ${JSON.stringify(value.slice(0, 80))}`);
  return { seq: Number(match[1]), method: match[2]! };
}

/** The tag of a From or To header, if it has one. */
export function tagOf(value: string): string | undefined {
  return parseNameAddr(value).params.tag ?? undefined;
}

function parseContentLength(value: string): number {
  const trimmed = value.trim();
  if (!/^\d{1,10}$/.test(trimmed))
    throw new SipFormatError(`bad Content-Length: ${JSON.stringify(trimmed.slice(0, 40))}`);
  return Number(trimmed);
}

function findHeadEnd(bytes: Buffer, from: number): { index: number; length: number } | null {
  const crlf = bytes.indexOf('\r\n\r\n', from);
  const lf = bytes.indexOf('\n\n', from);
  // A sender that ends lines with bare LF is tolerated (RFC 3261 7.5 asks receivers to be lenient here).
  if (crlf >= 0 && (lf < 0 || crlf < lf)) return { index: crlf, length: 4 };
  if (lf >= 0) return { index: lf, length: 2 };
  return null;
}

/** A line starting with a space or tab continues the header above it (folding, RFC 3261 7.3.1). */
function unfold(lines: string[]): string[] {
  const joined: string[] = [];
  for (const line of lines) {
    if ((line.startsWith(' ') || line.startsWith('\t')) && joined.length > 1) {
      joined[joined.length - 1] = `${joined[joined.length - 1]!.trimEnd()} ${line.trim()}`;
    } else if ((line.startsWith(' ') || line.startsWith('\t')) && joined.length <= 1) {
      throw new SipFormatError('a continuation line before any header');
    } else joined.push(line);
  }
  return joined;
}

function parseHeaderLine(line: string): SipHeader {
  const colon = line.indexOf(':');
  if (colon <= 0) throw new SipFormatError(`not a header line: ${JSON.stringify(line.slice(0, 80))}`);
  const name = line.slice(0, colon).trim(); // `Via  :` is allowed: whitespace before the colon (HCOLON)
  if (!TOKEN.test(name)) throw new SipFormatError(`bad header name: ${JSON.stringify(name.slice(0, 40))}`);
  return { name: canonicalHeaderName(name), value: line.slice(colon + 1).trim() };
}

function checkMandatoryHeaders(message: SipMessage): void {
  for (const name of ['Via', 'From', 'To', 'Call-ID', 'CSeq']) {
    if (!message.headers.some((header) => header.name === name)) throw new SipFormatError(`missing ${name} header`);
  }
  const cseq = parseCSeq(requireHeader(message, 'CSeq'));
  if (message.kind === 'request' && cseq.method !== message.method) {
    throw new SipFormatError(`CSeq method ${cseq.method} does not match the request method ${message.method}`);
  }
}
