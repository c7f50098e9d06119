/**
 * The answering side of the user agent: server transactions (a retransmitted request gets the last response
 * again), incoming INVITEs (100 Trying, then the handler's decision; the final answer resent until its ACK),
 * CANCEL, in-dialog ACK and BYE, and OPTIONS.
 */
import { buildResponse } from './sip-builders.js';
import type { SipDialog, SipDialogState } from './sip-dialog.js';
import { getHeader, parseVia, requireHeader, tagOf, type SipRequest, type SipResponse } from './sip-message.js';
import { negotiateSdpAnswer, type G711Codec, type LocalMedia } from './sip-sdp.js';
import { newTag, retransmitSchedule, type SIP_TIMERS } from './sip-transaction.js';
import type { SipPeer } from './sip-udp-transport.js';
import { parseNameAddr, type SipUri } from './sip-uri.js';

export interface IncomingInvite {
  callId: string;
  from: string;
  to: string;
  /** The SDP offer, '' when the INVITE had none. */
  offer: string;
  request: SipRequest;
  source: SipPeer;
  /** Sends 180 Ringing while the decision is pending. */
  ring(): void;
}

/** Answer with our media (the SDP answer is negotiated from the offer), or reject with a status. */
export type InviteDecision =
  | { answer: LocalMedia & { codecs?: readonly G711Codec[] } }
  | { reject: number; reason?: string };

export type InviteHandler = (call: IncomingInvite) => InviteDecision | Promise<InviteDecision>;

/** What the answering side needs from the user agent that owns the socket, timers and dialogs. */
export interface AnsweringAgent {
  readonly timers: Record<keyof typeof SIP_TIMERS, number>;
  readonly contact: SipUri;
  send(message: SipRequest | SipResponse, to: SipPeer): void;
  later(ms: number, run: () => void): NodeJS.Timeout;
  cancelTimer(timer: NodeJS.Timeout): void;
  findDialog(callId: string, localTag: string | undefined): SipDialog | undefined;
  createDialog(state: SipDialogState): SipDialog;
  /** An incoming call was answered and its ACK arrived. */
  established(dialog: SipDialog): void;
}

const ALLOW = 'INVITE, ACK, CANCEL, BYE, OPTIONS';

interface ServerTransaction {
  request: SipRequest;
  source: SipPeer;
  toTag: string;
  last?: SipResponse;
  stopRetransmits?: () => void;
  dialog?: SipDialog;
}

export class SipServerTransactions {
  private readonly transactions = new Map<string, ServerTransaction>();

  constructor(
    private readonly agent: AnsweringAgent,
    private readonly onInvite: InviteHandler | undefined,
  ) {}

  receive(request: SipRequest, source: SipPeer): void {
    const branch = parseVia(requireHeader(request, 'Via')).branch ?? '';
    if (request.method === 'ACK') {
      this.receiveAck(request, branch);
      return;
    }
    const key = `${branch} ${request.method}`;
    const existing = this.transactions.get(key);
    if (existing) {
      if (existing.last) this.agent.send(existing.last, existing.source);
      else if (request.method === 'INVITE') this.agent.send(buildResponse(request, 100, 'Trying'), source);
      return;
    }
    const transaction: ServerTransaction = { request, source, toTag: newTag() };
    this.transactions.set(key, transaction);
    // Kept for Timer J (64*T1) so retransmissions of the request are recognised, then forgotten.
    this.agent.later(64 * this.agent.timers.T1, () => this.transactions.delete(key));
    switch (request.method) {
      case 'INVITE':
        void this.receiveInvite(transaction);
        break;
      case 'CANCEL':
        this.receiveCancel(transaction, branch);
        break;
      case 'BYE': {
        const dialog = this.agent.findDialog(requireHeader(request, 'Call-ID'), tagOf(requireHeader(request, 'To')));
        if (!dialog) {
          this.respond(transaction, 481, 'Call/Transaction Does Not Exist');
          break;
        }
        this.respond(transaction, 200, 'OK');
        dialog.remoteHangup();
        break;
      }
      case 'OPTIONS':
        this.respond(transaction, 200, 'OK', {
          extraHeaders: [
            { name: 'Allow', value: ALLOW },
            { name: 'Accept', value: 'application/sdp' },
          ],
        });
        break;
      default:
        this.respond(transaction, 405, 'Method Not Allowed', {
          extraHeaders: [{ name: 'Allow', value: ALLOW }],
        });
    }
  }

  private async receiveInvite(transaction: ServerTransaction): Promise<void> {
    const { request } = transaction;
    this.agent.send(buildResponse(request, 100, 'Trying'), transaction.source);
    // A re-INVITE (hold, session refresh) is not supported yet: refused, the call goes on.
    if (tagOf(requireHeader(request, 'To')) !== undefined) return this.respond(transaction, 488, 'Not Acceptable Here');
    const offer = request.body.toString('utf8');
    let decision: InviteDecision;
    try {
      decision = this.onInvite
        ? await this.onInvite({
            callId: requireHeader(request, 'Call-ID'),
            from: requireHeader(request, 'From'),
            to: requireHeader(request, 'To'),
            offer,
            request,
            source: transaction.source,
            ring: () => {
              if (!transaction.last) this.agent.send(this.response(transaction, 180, 'Ringing'), transaction.source);
            },
          })
        : { reject: 480, reason: 'Temporarily Unavailable' };
    } catch {
      decision = { reject: 500, reason: 'Server Internal Error' };
    }
    if (transaction.last) return; // cancelled meanwhile
    if ('reject' in decision) return this.finalToInvite(transaction, decision.reject, decision.reason ?? 'Rejected');
    const negotiated = negotiateSdpAnswer(offer, decision.answer);
    if (!negotiated.ok) return this.finalToInvite(transaction, 488, 'Not Acceptable Here');
    const from = parseNameAddr(requireHeader(request, 'From'));
    const contact = getHeader(request, 'Contact');
    transaction.dialog = this.agent.createDialog({
      callId: requireHeader(request, 'Call-ID'),
      direction: 'inbound',
      local: { ...parseNameAddr(requireHeader(request, 'To')), tag: transaction.toTag },
      remote: { ...from, tag: from.params.tag ?? '' },
      remoteTarget: contact !== undefined ? parseNameAddr(contact).uri : from.uri,
      routeSet: request.headers.filter((header) => header.name === 'Record-Route').map((header) => header.value),
      localSeq: 0,
      remoteMedia: negotiated.remote,
    });
    this.finalToInvite(transaction, 200, 'OK', {
      contact: this.agent.contact,
      body: { contentType: 'application/sdp', content: negotiated.sdp },
    });
  }

  private receiveCancel(cancel: ServerTransaction, branch: string): void {
    const invite = this.transactions.get(`${branch} INVITE`);
    if (!invite) {
      this.respond(cancel, 481, 'Call/Transaction Does Not Exist');
      return;
    }
    this.respond(cancel, 200, 'OK');
    if (!invite.last) this.finalToInvite(invite, 487, 'Request Terminated');
  }

  private receiveAck(ack: SipRequest, branch: string): void {
    // The ACK of a non-2xx shares the INVITE's branch; the ACK of a 2xx is a new request of the dialog.
    const byBranch = this.transactions.get(`${branch} INVITE`);
    if (byBranch?.last && byBranch.last.status >= 300) {
      byBranch.stopRetransmits?.();
      return;
    }
    const dialog = this.agent.findDialog(requireHeader(ack, 'Call-ID'), tagOf(requireHeader(ack, 'To')));
    for (const transaction of this.transactions.values()) {
      if (transaction.dialog === dialog && transaction.dialog && transaction.stopRetransmits) {
        transaction.stopRetransmits();
        delete transaction.stopRetransmits;
        this.agent.established(transaction.dialog);
      }
    }
  }

  /** A final answer to an INVITE is resent (T1 doubling, capped at T2) until its ACK or 64*T1 (RFC 3261 17.2.1). */
  private finalToInvite(
    transaction: ServerTransaction,
    status: number,
    reason: string,
    options: Parameters<typeof buildResponse>[3] = {},
  ): void {
    this.respond(transaction, status, reason, options);
    const retransmits = retransmitSchedule('OPTIONS', 'UDP', this.agent.timers).map((at) =>
      this.agent.later(at, () => this.agent.send(transaction.last!, transaction.source)),
    );
    transaction.stopRetransmits = () => retransmits.forEach((timer) => this.agent.cancelTimer(timer));
    // A 200 never ACKed: the call is not up, so the dialog is ended with a BYE (RFC 3261 13.3.1.4).
    this.agent.later(64 * this.agent.timers.T1, () => {
      const dialog = transaction.dialog;
      if (dialog && transaction.stopRetransmits && !dialog.ended) void dialog.bye();
    });
  }

  private respond(
    transaction: ServerTransaction,
    status: number,
    reason: string,
    options: Parameters<typeof buildResponse>[3] = {},
  ): void {
    transaction.last = this.response(transaction, status, reason, options);
    this.agent.send(transaction.last, transaction.source);
  }

  private response(
    transaction: ServerTransaction,
    status: number,
    reason: string,
    options: Parameters<typeof buildResponse>[3] = {},
  ): SipResponse {
    return buildResponse(transaction.request, status, reason, { toTag: transaction.toTag, ...options });
  }
}
