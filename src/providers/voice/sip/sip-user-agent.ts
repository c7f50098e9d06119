/**
 * The signalling half of a SIP user agent over UDP, made of the blocks in this folder: client transactions with
 * their retransmissions and timeouts, outbound calls (digest challenge, ring timeout with CANCEL), inbound calls
 * through a handler that answers or rejects, BYE both ways and OPTIONS. Media is somebody else's job: a call
 * carries SDP in and out, nothing more.
 */
import { EventEmitter } from 'node:events';
import { buildAckFor2xx, buildCancel, buildRequest, type RequestFields } from './sip-builders.js';
import { buildDigestAuthorization, type DigestCredentials } from './sip-digest.js';
import { SipClientTransactions } from './sip-client-transactions.js';
import { SipDialog } from './sip-dialog.js';
import {
  getHeader,
  getHeaders,
  parseCSeq,
  requireHeader,
  tagOf,
  type SipHeader,
  type SipRequest,
  type SipResponse,
} from './sip-message.js';
import { parseSdpAnswer, type RemoteMedia } from './sip-sdp.js';
import {
  inviteOutcome,
  newBranch,
  newTag,
  ringTimeoutOutcome,
  SIP_TIMERS,
  type CallOutcome,
} from './sip-transaction.js';
import { SipUdpTransport, type SipPeer } from './sip-udp-transport.js';
import { SipServerTransactions, type InviteHandler } from './sip-user-agent-server.js';
import { formatSipUri, parseNameAddr, parseSipUri, type SipUri } from './sip-uri.js';

export type SipTimers = Record<keyof typeof SIP_TIMERS, number>;

export interface SipUserAgentOptions {
  /** Address to bind and to put in Via and Contact; 127.0.0.1 by default. */
  host?: string;
  /** 0 (the default) picks a free port. */
  port?: number;
  /** The user part of our Contact. */
  user?: string;
  /** Decides on each incoming call; without one every call is answered 480 Temporarily Unavailable. */
  onInvite?: InviteHandler;
  timers?: Partial<SipTimers>;
}

export interface InviteOptions {
  /** The callee's URI, also the Request-URI. */
  to: string;
  /** Our address of record (`sip:+15550100@trunk.example`). */
  from: string;
  sdpOffer: string;
  /** Answers one 401/407 challenge. */
  credentials?: DigestCredentials;
  /** Past this without a final answer we CANCEL and the call is no_answer. */
  ringTimeoutMs: number;
  /** Where to send the INVITE; the host and port of `to` when not given. */
  target?: SipPeer;
  onProvisional?: (status: number, reason: string) => void;
}

export interface InviteResult {
  outcome: CallOutcome;
  /** The provisional statuses received, in order (100, 180, 183). */
  provisional: number[];
  /** Present when answered. */
  dialog?: SipDialog;
}

export interface SipUserAgentEvents {
  /** An incoming call was answered and its ACK arrived. */
  call: [dialog: SipDialog];
}

export class SipUserAgent extends EventEmitter<SipUserAgentEvents> {
  readonly timers: SipTimers;
  private readonly dialogs = new Map<string, SipDialog>();
  private readonly pendingTimers = new Set<NodeJS.Timeout>();
  private readonly server: SipServerTransactions;
  private readonly clientTransactions: SipClientTransactions;
  private transport!: SipUdpTransport;
  private shutDown = false;

  private constructor(private readonly options: SipUserAgentOptions) {
    super();
    this.timers = { ...SIP_TIMERS, ...options.timers };
    this.server = new SipServerTransactions(this, options.onInvite);
    this.clientTransactions = new SipClientTransactions(this);
  }

  static async start(options: SipUserAgentOptions = {}): Promise<SipUserAgent> {
    const agent = new SipUserAgent(options);
    agent.transport = await SipUdpTransport.open(
      {
        onRequest: (request, from) => agent.server.receive(request, from),
        onResponse: (response) => agent.receiveResponse(response),
      },
      {
        ...(options.host !== undefined ? { host: options.host } : {}),
        ...(options.port !== undefined ? { port: options.port } : {}),
      },
    );
    return agent;
  }

  get address(): SipPeer {
    return { host: this.transport.host, port: this.transport.port };
  }

  get closed(): boolean {
    return this.shutDown;
  }

  /** Datagrams dropped as unreadable or unusable. */
  get malformedCount(): number {
    return this.transport.malformedCount;
  }

  get contact(): SipUri {
    return parseSipUri(
      `sip:${this.options.user ?? 'parley'}@${hostForUri(this.transport.host)}:${this.transport.port}`,
    );
  }

  async invite(options: InviteOptions): Promise<InviteResult> {
    const toUri = parseSipUri(options.to);
    const fromUri = parseSipUri(options.from);
    const target = options.target ?? peerOf(toUri);
    const callId = `${newTag()}@${hostForUri(this.transport.host)}`;
    const fromTag = newTag();
    const provisional: number[] = [];
    let cseq = 1;
    let authorization: SipHeader | undefined;
    let ringTimedOut = false;
    let onRingTimeout = () => {};
    const ringTimer = this.later(options.ringTimeoutMs, () => {
      ringTimedOut = true;
      onRingTimeout();
    });
    try {
      for (;;) {
        const invite = buildRequest({
          method: 'INVITE',
          uri: toUri,
          from: { uri: fromUri, tag: fromTag },
          to: { uri: toUri },
          callId,
          cseq,
          via: this.via(),
          contact: this.contact,
          body: { contentType: 'application/sdp', content: options.sdpOffer },
          ...(authorization ? { extraHeaders: [authorization] } : {}),
        });
        // A CANCEL may only follow a provisional answer (RFC 3261 9.1); without one Timer B ends the call.
        let ringing = false;
        let cancelled = false;
        const cancel = () => {
          if (cancelled || !ringing) return;
          cancelled = true;
          void this.transact(buildCancel(invite), target);
        };
        onRingTimeout = cancel;
        const final = await this.transact(invite, target, (response) => {
          provisional.push(response.status);
          options.onProvisional?.(response.status, response.reason);
          ringing = true;
          if (ringTimedOut) cancel();
        });
        if ((final.status === 401 || final.status === 407) && options.credentials && authorization === undefined) {
          const challenge = getHeader(final, final.status === 401 ? 'WWW-Authenticate' : 'Proxy-Authenticate');
          if (challenge !== undefined && !ringTimedOut) {
            try {
              authorization = {
                name: final.status === 401 ? 'Authorization' : 'Proxy-Authorization',
                value: buildDigestAuthorization(challenge, options.credentials, {
                  method: 'INVITE',
                  uri: formatSipUri(toUri),
                }),
              };
              cseq++;
              continue;
            } catch {
              // An unsupported challenge: the call fails with the 401/407 below.
            }
          }
        }
        if (final.status >= 300) {
          return {
            outcome: ringTimedOut ? ringTimeoutOutcome() : inviteOutcome(final.status, final.reason),
            provisional,
          };
        }
        return this.confirmOutbound(invite, final, ringTimedOut, provisional);
      }
    } finally {
      this.cancelTimer(ringTimer);
    }
  }

  /** OPTIONS as a keepalive: resolves on a 2xx, fails on anything else or no answer. */
  async ping(target: SipPeer | string): Promise<SipResponse> {
    const uri =
      typeof target === 'string' ? parseSipUri(target) : parseSipUri(`sip:${hostForUri(target.host)}:${target.port}`);
    const peer = typeof target === 'string' ? peerOf(uri) : target;
    const options = buildRequest({
      method: 'OPTIONS',
      uri,
      from: { uri: this.contact, tag: newTag() },
      to: { uri },
      callId: `${newTag()}@${hostForUri(this.transport.host)}`,
      cseq: 1,
      via: this.via(),
      extraHeaders: [{ name: 'Accept', value: 'application/sdp' }],
    });
    const response = await this.transact(options, peer);
    if (response.status >= 300)
      throw new Error(`OPTIONS to ${formatSipUri(uri)} answered ${response.status} ${response.reason}`);
    return response;
  }

  async close(): Promise<void> {
    if (this.shutDown) return;
    this.shutDown = true;
    this.clientTransactions.abortAll();
    for (const timer of this.pendingTimers) clearTimeout(timer);
    this.pendingTimers.clear();
    await this.transport.close();
  }

  /** @internal for the server side and dialogs */
  send(message: SipRequest | SipResponse, to: SipPeer): void {
    this.transport.send(message, to);
  }

  /** @internal */
  via(): RequestFields['via'] {
    return { transport: 'UDP', host: hostForUri(this.transport.host), port: this.transport.port, branch: newBranch() };
  }

  /** @internal */
  later(ms: number, run: () => void): NodeJS.Timeout {
    const timer = setTimeout(() => {
      this.pendingTimers.delete(timer);
      run();
    }, ms);
    this.pendingTimers.add(timer);
    return timer;
  }

  /** @internal */
  cancelTimer(timer: NodeJS.Timeout): void {
    clearTimeout(timer);
    this.pendingTimers.delete(timer);
  }

  /** @internal */
  established(dialog: SipDialog): void {
    this.emit('call', dialog);
  }

  /** @internal */
  findDialog(callId: string, localTag: string | undefined): SipDialog | undefined {
    return localTag === undefined ? undefined : this.dialogs.get(dialogKey(callId, localTag));
  }

  /** @internal */
  createDialog(state: SipDialog['state']): SipDialog {
    const dialog = new SipDialog(state, {
      transact: (request, to) => this.transact(request, to),
      via: () => this.via(),
      ended: (ended) => this.dialogs.delete(dialogKey(ended.callId, ended.state.local.tag)),
    });
    this.dialogs.set(dialogKey(state.callId, state.local.tag), dialog);
    return dialog;
  }

  /** @internal a client transaction; see SipClientTransactions. */
  transact(request: SipRequest, to: SipPeer, onProvisional?: (response: SipResponse) => void): Promise<SipResponse> {
    return this.clientTransactions.transact(request, to, onProvisional);
  }

  private receiveResponse(response: SipResponse): void {
    if (this.clientTransactions.receive(response)) return;
    const cseq = parseCSeq(requireHeader(response, 'CSeq'));
    // A 200 to our INVITE sent again: our ACK was lost, send it again.
    if (cseq.method === 'INVITE' && response.status >= 200 && response.status < 300) {
      const dialog = this.findDialog(requireHeader(response, 'Call-ID'), tagOf(requireHeader(response, 'From')));
      if (dialog?.ackFor2xx) this.send(dialog.ackFor2xx, dialog.nextHop());
    }
  }

  private async confirmOutbound(
    invite: SipRequest,
    final: SipResponse,
    ringTimedOut: boolean,
    provisional: number[],
  ): Promise<InviteResult> {
    const routeSet = getHeaders(final, 'Record-Route').reverse();
    const contact = getHeader(final, 'Contact');
    let remoteMedia: RemoteMedia | undefined;
    let unusable: string | undefined;
    try {
      remoteMedia = parseSdpAnswer(final.body.toString('utf8'));
    } catch (error) {
      unusable = (error as Error).message;
    }
    const dialog = this.createDialog({
      callId: requireHeader(invite, 'Call-ID'),
      direction: 'outbound',
      local: { ...parseNameAddr(requireHeader(invite, 'From')), tag: tagOf(requireHeader(invite, 'From'))! },
      remote: { ...parseNameAddr(requireHeader(final, 'To')), tag: tagOf(requireHeader(final, 'To')) ?? '' },
      remoteTarget: contact !== undefined ? parseNameAddr(contact).uri : parseSipUri(invite.uri),
      routeSet,
      localSeq: parseCSeq(requireHeader(invite, 'CSeq')).seq,
      remoteMedia: remoteMedia ?? { address: '0.0.0.0', port: 0, payloadType: 0, codec: 'PCMU', dtmfPayloadType: null },
    });
    dialog.ackFor2xx = buildAckFor2xx(invite, final, this.via(), routeSet);
    this.send(dialog.ackFor2xx, dialog.nextHop());
    // Answered after our CANCEL, or with nothing we can play: the call exists, so it is hung up (RFC 3261 15).
    if (ringTimedOut || unusable !== undefined) {
      await dialog.bye();
      return {
        outcome: ringTimedOut
          ? ringTimeoutOutcome()
          : { outcome: 'failed', code: 488, reason: `unusable SDP answer: ${unusable}` },
        provisional,
      };
    }
    return { outcome: inviteOutcome(final.status, final.reason), provisional, dialog };
  }
}

function dialogKey(callId: string, localTag: string): string {
  return `${callId} ${localTag}`;
}

function peerOf(uri: SipUri): SipPeer {
  return { host: uri.host.replace(/^\[|\]$/g, ''), port: uri.port ?? 5060 };
}

/** An IPv6 address in a URI or Via is bracketed. */
export function hostForUri(host: string): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}
