/**
 * A SIP dialog (RFC 3261 12): the call once answered, identified by Call-ID and both tags, with what our own
 * in-dialog requests need (the remote target, the route set, our CSeq counter). It ends with our BYE or the far
 * end's ('bye' event).
 */
import { EventEmitter } from 'node:events';
import { buildRequest, type RequestFields, type SipAddress } from './sip-builders.js';
import type { SipRequest, SipResponse } from './sip-message.js';
import type { RemoteMedia } from './sip-sdp.js';
import { parseNameAddr, type SipUri } from './sip-uri.js';
import type { SipPeer } from './sip-udp-transport.js';

export interface SipDialogState {
  callId: string;
  direction: 'outbound' | 'inbound';
  local: SipAddress & { tag: string };
  remote: SipAddress & { tag: string };
  /** The far end's Contact: where in-dialog requests go. */
  remoteTarget: SipUri;
  /** Record-Route as our requests carry it (reversed for the caller, as received for the callee). */
  routeSet: string[];
  localSeq: number;
  remoteMedia: RemoteMedia;
}

export interface SipDialogEvents {
  /** The far end hung up (its BYE was answered 200). */
  bye: [];
}

export interface DialogServices {
  /** A non-INVITE client transaction: resolves with the final response (408 when nothing came). */
  transact(request: SipRequest, to: SipPeer): Promise<SipResponse>;
  via(): RequestFields['via'];
  ended(dialog: SipDialog): void;
}

export class SipDialog extends EventEmitter<SipDialogEvents> {
  ended = false;
  /** The ACK we sent for the 200 (outbound calls), sent again if the 200 is retransmitted. */
  ackFor2xx: SipRequest | undefined;

  constructor(
    readonly state: SipDialogState,
    private readonly services: DialogServices,
  ) {
    super();
  }

  get callId(): string {
    return this.state.callId;
  }

  get remoteMedia(): RemoteMedia {
    return this.state.remoteMedia;
  }

  /** Where our in-dialog requests go: the first route when there is a route set, the remote target otherwise. */
  nextHop(): SipPeer {
    const first = this.state.routeSet[0];
    const uri = first !== undefined ? parseNameAddr(first).uri : this.state.remoteTarget;
    return { host: uri.host.replace(/^\[|\]$/g, ''), port: uri.port ?? 5060 };
  }

  /** Hangs up; resolves with the far end's answer to the BYE (408 when none came). */
  async bye(): Promise<SipResponse> {
    if (this.ended) throw new Error('the dialog has already ended');
    this.end();
    const bye = buildRequest({
      method: 'BYE',
      uri: this.state.remoteTarget,
      from: this.state.local,
      to: this.state.remote,
      callId: this.state.callId,
      cseq: ++this.state.localSeq,
      via: this.services.via(),
      route: this.state.routeSet,
    });
    return this.services.transact(bye, this.nextHop());
  }

  /** The far end's BYE arrived (the agent answers it). */
  remoteHangup(): void {
    if (this.ended) return;
    this.end();
    this.emit('bye');
  }

  private end(): void {
    this.ended = true;
    this.services.ended(this);
  }
}
