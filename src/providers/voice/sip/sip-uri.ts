/**
 * SIP URIs (`sip:user:password@host:port;uri-params?headers`) and the name-addr form that From, To, Contact and
 * Route carry (`"Ada" <sip:ada@example.com>;tag=1`). A strict reader: what it cannot read is a SipFormatError,
 * so a malformed header from the far end is reported, never half-understood.
 */

export class SipFormatError extends Error {}

export interface SipUri {
  scheme: 'sip' | 'sips';
  user?: string;
  password?: string;
  /** A host name, an IPv4 address or an IPv6 reference (`[2001:db8::1]`, brackets kept). */
  host: string;
  port?: number;
  /** `;transport=tcp;lr`: a parameter without a value is `null`. Names are lower-cased. */
  params: Record<string, string | null>;
  /** `?subject=x`: rarely used, kept so a URI survives a round trip. */
  headers: Record<string, string>;
}

export interface NameAddr {
  displayName?: string;
  uri: SipUri;
  /** Header parameters after the address (`;tag=…`, `;expires=…`). Names are lower-cased. */
  params: Record<string, string | null>;
}

const HOST = /^(?:\[[0-9a-fA-F:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?\.?)$/;
// unreserved / escaped / user-unreserved (RFC 3261 25.1); `+` and `#`-free phone numbers pass.
const USER = /^(?:[A-Za-z0-9\-_.!~*'()&=+$,;?/]|%[0-9A-Fa-f]{2})+$/;
const TOKEN = /^[A-Za-z0-9\-.!%*_+`'~]+$/;

export function parseSipUri(text: string): SipUri {
  const match = /^(sips?):(.+)$/i.exec(text.trim());
  if (!match) throw new SipFormatError(`not a sip: or sips: URI: ${JSON.stringify(text.slice(0, 80))}`);
  const scheme = match[1]!.toLowerCase() as SipUri['scheme'];
  let rest = match[2]!;
  const headers: Record<string, string> = {};
  const question = rest.indexOf('?');
  if (question >= 0) {
    for (const pair of rest.slice(question + 1).split('&')) {
      const [name, value = ''] = pair.split('=', 2);
      if (name) headers[name] = value;
    }
    rest = rest.slice(0, question);
  }
  // The user part may hold `;` (user-unreserved), so the host starts after the last `@`.
  const at = rest.lastIndexOf('@');
  let user: string | undefined;
  let password: string | undefined;
  if (at >= 0) {
    const userInfo = rest.slice(0, at);
    rest = rest.slice(at + 1);
    const colon = userInfo.indexOf(':');
    user = colon >= 0 ? userInfo.slice(0, colon) : userInfo;
    password = colon >= 0 ? userInfo.slice(colon + 1) : undefined;
    if (!USER.test(user)) throw new SipFormatError(`bad user part in URI: ${JSON.stringify(text.slice(0, 80))}`);
  }
  const [hostPort = '', ...paramParts] = rest.split(';');
  const { host, port } = parseHostPort(hostPort, text);
  const params: Record<string, string | null> = {};
  for (const part of paramParts) {
    if (part === '') continue;
    const equals = part.indexOf('=');
    const name = (equals >= 0 ? part.slice(0, equals) : part).toLowerCase();
    if (!TOKEN.test(name)) throw new SipFormatError(`bad URI parameter: ${JSON.stringify(part)}`);
    params[name] = equals >= 0 ? part.slice(equals + 1) : null;
  }
  return {
    scheme,
    ...(user !== undefined ? { user } : {}),
    ...(password !== undefined ? { password } : {}),
    host,
    ...(port !== undefined ? { port } : {}),
    params,
    headers,
  };
}

/** `host`, `host:port`, `[v6]` or `[v6]:port`; the port is 1-65535. */
export function parseHostPort(text: string, context = text): { host: string; port?: number } {
  const match = /^(\[[^\]]+\]|[^:]+)(?::(\d{1,5}))?$/.exec(text.trim());
  if (!match || !HOST.test(match[1]!)) throw new SipFormatError(`bad host in ${JSON.stringify(context.slice(0, 80))}`);
  if (match[2] === undefined) return { host: match[1]! };
  const port = Number(match[2]);
  if (port < 1 || port > 65535)
    throw new SipFormatError(`port out of range in ${JSON.stringify(context.slice(0, 80))}`);
  return { host: match[1]!, port };
}

export function formatSipUri(uri: SipUri): string {
  let text = `${uri.scheme}:`;
  if (uri.user !== undefined) text += `${uri.user}${uri.password !== undefined ? `:${uri.password}` : ''}@`;
  text += uri.host;
  if (uri.port !== undefined) text += `:${uri.port}`;
  text += formatParams(uri.params);
  const headers = Object.entries(uri.headers);
  if (headers.length > 0) text += `?${headers.map(([name, value]) => `${name}=${value}`).join('&')}`;
  return text;
}

export function formatParams(params: Record<string, string | null>): string {
  return Object.entries(params)
    .map(([name, value]) => (value === null ? `;${name}` : `;${name}=${value}`))
    .join('');
}

/**
 * `;name=value;flag` after a header's main value. Quoted values keep their quotes out; a `;` or `,` inside
 * quotes is part of the value.
 */
export function parseHeaderParams(text: string): Record<string, string | null> {
  const params: Record<string, string | null> = {};
  for (const part of splitOutsideQuotes(text, ';')) {
    const trimmed = part.trim();
    if (trimmed === '') continue;
    const equals = trimmed.indexOf('=');
    const name = (equals >= 0 ? trimmed.slice(0, equals) : trimmed).trim().toLowerCase();
    if (!TOKEN.test(name)) throw new SipFormatError(`bad header parameter: ${JSON.stringify(trimmed.slice(0, 80))}`);
    params[name] = equals >= 0 ? unquote(trimmed.slice(equals + 1).trim()) : null;
  }
  return params;
}

/** From/To/Contact/Route value: `"Name" <uri>;params`, `Name <uri>;params` or `uri;params` (then `;` ends the URI). */
export function parseNameAddr(text: string): NameAddr {
  const value = text.trim();
  const open = indexOutsideQuotes(value, '<');
  if (open >= 0) {
    const close = value.indexOf('>', open);
    if (close < 0) throw new SipFormatError(`unclosed < in ${JSON.stringify(value.slice(0, 80))}`);
    const display = value.slice(0, open).trim();
    const displayName = display === '' ? undefined : unquote(display);
    return {
      ...(displayName !== undefined ? { displayName } : {}),
      uri: parseSipUri(value.slice(open + 1, close)),
      params: parseHeaderParams(value.slice(close + 1)),
    };
  }
  // addr-spec form: the URI cannot carry its own parameters, everything after `;` belongs to the header.
  const semicolon = value.indexOf(';');
  return {
    uri: parseSipUri(semicolon >= 0 ? value.slice(0, semicolon) : value),
    params: semicolon >= 0 ? parseHeaderParams(value.slice(semicolon)) : {},
  };
}

/** Always the bracketed form, so URI parameters and header parameters never mix. */
export function formatNameAddr(nameAddr: NameAddr): string {
  const display = nameAddr.displayName !== undefined ? `${quote(nameAddr.displayName)} ` : '';
  return `${display}<${formatSipUri(nameAddr.uri)}>${formatParams(nameAddr.params)}`;
}

export function quote(text: string): string {
  return `"${text.replace(/["\\]/g, (c) => `\\${c}`)}"`;
}

export function unquote(text: string): string {
  if (text.length >= 2 && text.startsWith('"') && text.endsWith('"')) {
    return text.slice(1, -1).replace(/\\(.)/g, '$1');
  }
  return text;
}

/** Splits on `separator` where it is outside double quotes and angle brackets. */
export function splitOutsideQuotes(text: string, separator: string): string[] {
  const parts: string[] = [];
  let start = 0;
  let inQuotes = false;
  let inAngle = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inQuotes) {
      if (c === '\\') i++;
      else if (c === '"') inQuotes = false;
    } else if (c === '"') inQuotes = true;
    else if (c === '<') inAngle = true;
    else if (c === '>') inAngle = false;
    else if (c === separator && !inAngle) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  if (inQuotes) throw new SipFormatError(`unclosed quote in ${JSON.stringify(text.slice(0, 80))}`);
  parts.push(text.slice(start));
  return parts;
}

function indexOutsideQuotes(text: string, char: string): number {
  let inQuotes = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inQuotes) {
      if (c === '\\') i++;
      else if (c === '"') inQuotes = false;
    } else if (c === '"') inQuotes = true;
    else if (c === char) return i;
  }
  return -1;
}
