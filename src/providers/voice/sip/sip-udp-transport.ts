/**
 * SIP over UDP (RFC 3261 18): one datagram is one message. What arrives is parsed with the strict reader; a
 * datagram it cannot read is dropped and counted, never thrown into the socket's event loop.
 */
import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';
import { once } from 'node:events';
import {
  parseSipMessage,
  serializeSipMessage,
  type SipMessage,
  type SipRequest,
  type SipResponse,
} from './sip-message.js';

export interface SipPeer {
  host: string;
  port: number;
}

export interface SipUdpTransportHandlers {
  onRequest(request: SipRequest, from: SipPeer): void;
  onResponse(response: SipResponse, from: SipPeer): void;
}

export class SipUdpTransport {
  /** Datagrams dropped because they were not a SIP message we could read or use. */
  malformedCount = 0;
  private closed = false;

  private constructor(
    private readonly socket: Socket,
    readonly host: string,
    readonly port: number,
  ) {}

  /** Binds to `host` (127.0.0.1 by default) and `port` (0: any free port). */
  static async open(
    handlers: SipUdpTransportHandlers,
    options: { host?: string; port?: number } = {},
  ): Promise<SipUdpTransport> {
    const host = options.host ?? '127.0.0.1';
    const socket = createSocket(host.includes(':') ? 'udp6' : 'udp4');
    socket.bind(options.port ?? 0, host);
    await once(socket, 'listening');
    const transport = new SipUdpTransport(socket, host, socket.address().port);
    socket.on('message', (bytes, remote) => transport.receive(bytes, remote, handlers));
    // A send to a closed port can surface as an error event (ICMP); it must not crash the process.
    socket.on('error', () => {});
    return transport;
  }

  send(message: SipMessage, to: SipPeer): void {
    if (this.closed) return;
    this.socket.send(serializeSipMessage(message), to.port, to.host);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const done = once(this.socket, 'close');
    this.socket.close();
    await done;
  }

  private receive(bytes: Buffer, remote: RemoteInfo, handlers: SipUdpTransportHandlers): void {
    let message: SipMessage;
    try {
      message = parseSipMessage(bytes);
    } catch {
      this.malformedCount++;
      return;
    }
    const from = { host: remote.address, port: remote.port };
    try {
      if (message.kind === 'request') handlers.onRequest(message, from);
      else handlers.onResponse(message, from);
    } catch {
      // A message that parsed but carries a header the handler cannot use (a bad Via, a bad Contact).
      this.malformedCount++;
    }
  }
}
