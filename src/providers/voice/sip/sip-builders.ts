/**
 * Building the messages a calling user agent sends: an INVITE, OPTIONS or in-dialog BYE from plain fields, the
 * ACK and CANCEL that RFC 3261 derives from an INVITE, and a response that echoes the request's Via, From, To,
 * Call-ID and CSeq, as a far end (or a test's far end) answers.
 */
import {
  formatVia,
  getHeader,
  getHeaders,
  parseCSeq,
  requireHeader,
  type SipHeader,
  type SipRequest,
  type SipResponse,
} from './sip-message.js';
import { formatNameAddr, formatSipUri, parseNameAddr, type SipUri } from './sip-uri.js';

export type SipMethod = 'INVITE' | 'ACK' | 'BYE' | 'CANCEL' | 'OPTIONS';

export interface SipAddress {
  uri: SipUri;
  displayName?: string;
  tag?: string;
}

export interface RequestFields {
  method: SipMethod;
  /** The Request-URI: the callee, or the remote target (Contact) inside a dialog. */
  uri: SipUri;
  from: SipAddress & { tag: string };
  to: SipAddress;
  callId: string;
  cseq: number;
  via: { transport: 'UDP' | 'TCP'; host: string; port?: number; branch: string };
  /** Our address for the far end to send in-dialog requests to; INVITE needs one. */
  contact?: SipUri;
  /** Route set of the dialog (Record-Route, reversed), when there is one. */
  route?: string[];
  maxForwards?: number;
  body?: { contentType: string; content: string | Buffer };
  extraHeaders?: SipHeader[];
}

const USER_AGENT = 'Parley';

export function buildRequest(fields: RequestFields): SipRequest {
  const headers: SipHeader[] = [
    // rport asks the far end to answer to the port the request came from, which NAT may have changed (RFC 3581).
    {
      name: 'Via',
      value: formatVia({
        transport: fields.via.transport,
        host: fields.via.host,
        ...(fields.via.port !== undefined ? { port: fields.via.port } : {}),
        params: { branch: fields.via.branch, rport: null },
      }),
    },
    { name: 'Max-Forwards', value: String(fields.maxForwards ?? 70) },
    ...(fields.route ?? []).map((value) => ({ name: 'Route', value })),
    { name: 'From', value: formatAddress(fields.from) },
    { name: 'To', value: formatAddress(fields.to) },
    { name: 'Call-ID', value: fields.callId },
    { name: 'CSeq', value: `${fields.cseq} ${fields.method}` },
    ...(fields.contact ? [{ name: 'Contact', value: `<${formatSipUri(fields.contact)}>` }] : []),
    { name: 'User-Agent', value: USER_AGENT },
    ...(fields.body ? [{ name: 'Content-Type', value: fields.body.contentType }] : []),
    ...(fields.extraHeaders ?? []),
  ];
  const content = fields.body?.content ?? '';
  return {
    kind: 'request',
    method: fields.method,
    uri: formatSipUri(fields.uri),
    headers,
    body: typeof content === 'string' ? Buffer.from(content, 'utf8') : content,
  };
}

/**
 * The ACK for a non-2xx final answer to an INVITE: part of the INVITE's transaction, so the same branch,
 * Request-URI and CSeq number, and the To of the response (with its tag) (RFC 3261 17.1.1.3).
 */
export function buildAckForFailure(invite: SipRequest, response: SipResponse): SipRequest {
  return requestOfInviteTransaction(invite, 'ACK', requireHeader(response, 'To'));
}

/**
 * The ACK for a 2xx: a request of the dialog, with a new branch, sent to the Contact of the 200 OK, the
 * INVITE's CSeq number (RFC 3261 13.2.2.4).
 */
export function buildAckFor2xx(
  invite: SipRequest,
  response: SipResponse,
  via: RequestFields['via'],
  route?: string[],
): SipRequest {
  const contact = getHeader(response, 'Contact');
  const cseq = parseCSeq(requireHeader(invite, 'CSeq'));
  return {
    kind: 'request',
    method: 'ACK',
    uri: contact ? formatSipUri(parseNameAddr(contact).uri) : invite.uri,
    headers: [
      {
        name: 'Via',
        value: formatVia({
          transport: via.transport,
          host: via.host,
          ...(via.port !== undefined ? { port: via.port } : {}),
          params: { branch: via.branch, rport: null },
        }),
      },
      { name: 'Max-Forwards', value: '70' },
      ...(route ?? []).map((value) => ({ name: 'Route', value })),
      { name: 'From', value: requireHeader(invite, 'From') },
      { name: 'To', value: requireHeader(response, 'To') },
      { name: 'Call-ID', value: requireHeader(invite, 'Call-ID') },
      { name: 'CSeq', value: `${cseq.seq} ACK` },
    ],
    body: Buffer.alloc(0),
  };
}

/**
 * CANCEL of a pending INVITE: the same Request-URI, top Via (branch included), From, To (without a tag),
 * Call-ID, Route and CSeq number (RFC 3261 9.1).
 */
export function buildCancel(invite: SipRequest): SipRequest {
  return requestOfInviteTransaction(invite, 'CANCEL', requireHeader(invite, 'To'));
}

/** A request in the INVITE's own transaction: its Request-URI, top Via (branch), From, Call-ID, Route, CSeq number. */
function requestOfInviteTransaction(invite: SipRequest, method: 'ACK' | 'CANCEL', to: string): SipRequest {
  const cseq = parseCSeq(requireHeader(invite, 'CSeq'));
  return {
    kind: 'request',
    method,
    uri: invite.uri,
    headers: [
      { name: 'Via', value: requireHeader(invite, 'Via') },
      { name: 'Max-Forwards', value: '70' },
      ...getHeaders(invite, 'Route').map((value) => ({ name: 'Route', value })),
      { name: 'From', value: requireHeader(invite, 'From') },
      { name: 'To', value: to },
      { name: 'Call-ID', value: requireHeader(invite, 'Call-ID') },
      { name: 'CSeq', value: `${cseq.seq} ${method}` },
    ],
    body: Buffer.alloc(0),
  };
}

export interface ResponseOptions {
  /** Added to To when it has no tag yet (every response but 100 Trying should carry one). */
  toTag?: string;
  contact?: SipUri;
  body?: { contentType: string; content: string | Buffer };
  extraHeaders?: SipHeader[];
}

/** A response to a request: every Via in order, From, To (+tag), Call-ID and CSeq copied (RFC 3261 8.2.6.2). */
export function buildResponse(
  request: SipRequest,
  status: number,
  reason: string,
  options: ResponseOptions = {},
): SipResponse {
  let to = requireHeader(request, 'To');
  if (options.toTag !== undefined) {
    const parsed = parseNameAddr(to);
    if (parsed.params.tag === undefined)
      to = formatNameAddr({ ...parsed, params: { ...parsed.params, tag: options.toTag } });
  }
  const content = options.body?.content ?? '';
  return {
    kind: 'response',
    status,
    reason,
    headers: [
      ...request.headers.filter((header) => header.name === 'Via'),
      ...(status > 100 && status < 300 ? request.headers.filter((header) => header.name === 'Record-Route') : []),
      { name: 'From', value: requireHeader(request, 'From') },
      { name: 'To', value: to },
      { name: 'Call-ID', value: requireHeader(request, 'Call-ID') },
      { name: 'CSeq', value: requireHeader(request, 'CSeq') },
      ...(options.contact ? [{ name: 'Contact', value: `<${formatSipUri(options.contact)}>` }] : []),
      ...(options.body ? [{ name: 'Content-Type', value: options.body.contentType }] : []),
      ...(options.extraHeaders ?? []),
    ],
    body: typeof content === 'string' ? Buffer.from(content, 'utf8') : content,
  };
}

function formatAddress(address: SipAddress): string {
  return formatNameAddr({
    ...(address.displayName !== undefined ? { displayName: address.displayName } : {}),
    uri: address.uri,
    params: address.tag !== undefined ? { tag: address.tag } : {},
  });
}
