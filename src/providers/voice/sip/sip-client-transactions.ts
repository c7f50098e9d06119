/**
 * SIP client transactions over UDP (RFC 3261 17.1): each request is resent on its schedule until answered,
 * responses are matched to it by branch and method, and a request nobody answers ends with a local 408.
 */
import { buildAckForFailure, buildResponse } from './sip-builders.js';
import { parseCSeq, parseVia, requireHeader, type SipRequest, type SipResponse } from './sip-message.js';
import { retransmitSchedule, type SIP_TIMERS } from './sip-transaction.js';
import type { SipPeer } from './sip-udp-transport.js';

/** What the transactions need from the user agent that owns the socket and the timers. */
export interface TransactionHost {
  readonly timers: Record<keyof typeof SIP_TIMERS, number>;
  readonly closed: boolean;
  send(message: SipRequest, to: SipPeer): void;
  later(ms: number, run: () => void): NodeJS.Timeout;
  cancelTimer(timer: NodeJS.Timeout): void;
}

interface PendingClient {
  onResponse(response: SipResponse): void;
  abort(): void;
}

export class SipClientTransactions {
  private readonly pending = new Map<string, PendingClient>();

  constructor(private readonly agent: TransactionHost) {}

  /**
   * A client transaction over UDP: retransmits on the RFC 3261 schedule (an INVITE stops at its first
   * provisional), resolves with the final response, or a local 408 when Timer B/F expires or the agent closes.
   * A non-2xx final to an INVITE is ACKed here, and again for each retransmission of it during Timer D.
   */
  transact(request: SipRequest, to: SipPeer, onProvisional?: (response: SipResponse) => void): Promise<SipResponse> {
    const branch = parseVia(requireHeader(request, 'Via')).branch!;
    const key = clientKey(branch, request.method);
    const invite = request.method === 'INVITE';
    return new Promise((resolve) => {
      if (this.agent.closed) return resolve(buildResponse(request, 408, 'Request Timeout'));
      const retransmits = retransmitSchedule(request.method, 'UDP', this.agent.timers).map((at) =>
        this.agent.later(at, () => this.agent.send(request, to)),
      );
      const stopRetransmits = () => retransmits.forEach((timer) => this.agent.cancelTimer(timer));
      const finish = (response: SipResponse) => {
        stopRetransmits();
        this.agent.cancelTimer(timeout);
        this.pending.delete(key);
        resolve(response);
      };
      const timeout = this.agent.later(invite ? this.agent.timers.B : this.agent.timers.F, () =>
        finish(buildResponse(request, 408, 'Request Timeout')),
      );
      this.pending.set(key, {
        abort: () => finish(buildResponse(request, 408, 'Request Timeout')),
        onResponse: (response) => {
          if (response.status < 200) {
            if (invite) stopRetransmits();
            onProvisional?.(response);
            return;
          }
          finish(response);
          if (invite && response.status >= 300) {
            const ack = buildAckForFailure(request, response);
            this.agent.send(ack, to);
            this.pending.set(key, { onResponse: () => this.agent.send(ack, to), abort: () => {} });
            this.agent.later(this.agent.timers.D, () => this.pending.delete(key));
          }
        },
      });
      this.agent.send(request, to);
    });
  }

  /** Hands a response to its transaction; false when none is waiting for it. */
  receive(response: SipResponse): boolean {
    const via = parseVia(requireHeader(response, 'Via'));
    const cseq = parseCSeq(requireHeader(response, 'CSeq'));
    const client = via.branch === undefined ? undefined : this.pending.get(clientKey(via.branch, cseq.method));
    client?.onResponse(response);
    return client !== undefined;
  }

  /** Ends every pending transaction with a local 408 (the agent is closing). */
  abortAll(): void {
    for (const client of [...this.pending.values()]) client.abort();
  }
}

function clientKey(branch: string, method: string): string {
  return `${branch} ${method}`;
}
