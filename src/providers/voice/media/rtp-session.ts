/**
 * The RTP media session a call's audio flows through: one UDP socket to one far end. Incoming G.711 goes
 * through the jitter buffer (pull() a 20 ms frame at a time) and telephone events become digits; outgoing
 * audio is paced in real time from a fixed start, so timer lateness never accumulates into drift.
 */
import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';
import { createDtmfDecoder, type DtmfDigit, buildDtmfPackets } from './dtmf-events.js';
import { decodeG711, type G711Codec } from './g711.js';
import type { UdpEndpoint } from './ipv4-udp.js';
import { createJitterBuffer, type JitterBufferOptions, type PulledFrame } from './jitter-buffer.js';
import type { PcapWriter } from './pcap-writer.js';
import { parseRtp, type RtpPacketFields } from './rtp-packet.js';
import { createRtpPacketizer, FRAME_MS, FRAME_SAMPLES } from './rtp-packetizer.js';
import { createRtpReceiveStats, type RtpReceiveStats } from './rtp-receive-stats.js';

export interface RtpSessionOptions {
  localAddress: string;
  /** 0 picks a free port. */
  localPort: number;
  remote: UdpEndpoint;
  /** 0 PCMU or 8 PCMA. */
  payloadType: 0 | 8;
  /** The telephone-event payload type agreed in SDP; without it DTMF is neither sent nor accepted. */
  dtmfPayloadType?: number;
  capture?: PcapWriter;
  jitterBuffer?: JitterBufferOptions;
}

export interface PlayOptions {
  signal?: AbortSignal;
}

export interface PlayResult {
  /** Audio that actually left, in ms (whole frames; the last frame may be padded with silence). */
  sentMs: number;
  aborted: boolean;
}

export interface RtpSessionStats extends RtpReceiveStats {
  packetsSent: number;
  bytesSent: number;
  /** Audio frames that arrived after their turn to play had passed. */
  late: number;
}

export interface RtpSession {
  /** The address and port the socket is bound to (the port to put in SDP). */
  readonly local: UdpEndpoint;
  readonly ssrc: number;
  /** Points the session at another far end (an SDP answer or re-INVITE names it); its SSRC is learnt anew. */
  setRemote(remote: UdpEndpoint): void;
  /** The next 20 ms of received audio (8 kHz PCM), or silence while buffering. */
  pull(): PulledFrame;
  /** Calls `listener` once for each digit the far end sends; returns a function that unsubscribes. */
  onDigit(listener: (digit: DtmfDigit) => void): () => void;
  /** Sends 8 kHz PCM as 20 ms packets in real time; resolves when the last one left or the signal aborted. */
  play(pcm: Int16Array, options?: PlayOptions): Promise<PlayResult>;
  /** Sends one key press as RFC 4733 events; audio being played pauses meanwhile. */
  sendDtmf(digit: string, options?: { durationMs?: number }): Promise<void>;
  readonly stats: Readonly<RtpSessionStats>;
  close(): Promise<void>;
}

const CODECS: Record<0 | 8, G711Codec> = { 0: 'pcmu', 8: 'pcma' };

/** Wall-clock milliseconds with sub-millisecond precision, for capture timestamps. */
const nowMs = () => performance.timeOrigin + performance.now();

/** Waits until performance.now() reaches `due`, or the signal aborts (then at once). */
function waitUntil(due: number, signal?: AbortSignal): Promise<void> {
  const wait = due - performance.now();
  if (wait <= 0 || signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, wait);
    signal?.addEventListener('abort', done, { once: true });
  });
}

interface DtmfJob {
  digit: string;
  durationMs?: number;
  resolve: () => void;
  reject: (error: Error) => void;
}

export async function openRtpSession(options: RtpSessionOptions): Promise<RtpSession> {
  const codec = CODECS[options.payloadType];
  if (!codec) throw new Error(`an RTP session sends PCMU (0) or PCMA (8), got ${options.payloadType}`);
  const socket: Socket = createSocket('udp4');
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(options.localPort, options.localAddress, () => {
      socket.off('error', reject);
      resolve();
    });
  });
  const bound = socket.address();
  const local: UdpEndpoint = { address: bound.address, port: bound.port };
  let remote = options.remote;
  const packetizer = createRtpPacketizer({ codec });
  const jitter = createJitterBuffer(options.jitterBuffer);
  const receive = createRtpReceiveStats();
  const decoder = createDtmfDecoder();
  const listeners = new Set<(digit: DtmfDigit) => void>();
  const sent = { packetsSent: 0, bytesSent: 0 };
  let closed = false;

  socket.on('error', () => {}); // an ICMP unreachable from a far end not listening yet must not crash the process

  const accept = (msg: Buffer, from: RemoteInfo): RtpPacketFields | null => {
    if (from.address !== remote.address || from.port !== remote.port) {
      receive.drop('unexpectedSource');
      return null;
    }
    let packet: RtpPacketFields;
    try {
      packet = parseRtp(msg);
    } catch {
      receive.drop('malformed');
      return null;
    }
    const isDtmf = options.dtmfPayloadType !== undefined && packet.payloadType === options.dtmfPayloadType;
    if (packet.payloadType !== options.payloadType && !isDtmf) {
      receive.drop('unexpectedPayloadType');
      return null;
    }
    if (isDtmf && packet.payload.length < 4) {
      receive.drop('malformed');
      return null;
    }
    return packet;
  };

  socket.on('message', (msg, from) => {
    options.capture?.writeUdp({
      atMs: nowMs(),
      source: { address: from.address, port: from.port },
      destination: local,
      payload: msg,
    });
    receive.arrived(msg.length);
    const packet = accept(msg, from);
    if (!packet) return;
    const isAudio = packet.payloadType === options.payloadType;
    if (!receive.accept(packet, isAudio, performance.now())) return;
    if (isAudio) {
      jitter.push(packet.sequenceNumber, decodeG711(codec, packet.payload));
      return;
    }
    for (const digit of decoder.push(packet)) for (const listener of listeners) listener(digit);
  });

  const send = (packet: Uint8Array) => {
    if (closed) return;
    options.capture?.writeUdp({ atMs: nowMs(), source: local, destination: remote, payload: packet });
    socket.send(packet, remote.port, remote.address);
    sent.packetsSent++;
    sent.bytesSent += packet.length;
  };

  // One sender at a time: play() and a DTMF outside play() take turns; DTMF during play() is slotted in by it.
  let turn = Promise.resolve();
  const exclusive = <T>(run: () => Promise<T>): Promise<T> => {
    const result = turn.then(run);
    turn = result.then(
      () => {},
      () => {},
    );
    return result;
  };
  let dtmfDuringPlay: DtmfJob[] | null = null;
  /** The slot clock of the current sending run: slot n is due at start + n * 20 ms. */
  let lastSlotEnd: number | null = null;

  /** Keeps the timestamp in step with the wall clock across a pause between sending runs. */
  const startRun = () => {
    const start = performance.now();
    if (lastSlotEnd !== null && start > lastSlotEnd) {
      packetizer.skip(Math.floor((start - lastSlotEnd) / FRAME_MS) * FRAME_SAMPLES);
    }
    packetizer.markTalkspurt();
    return start;
  };

  /** Sends one key press, a packet per slot from `slot` on; returns the next free slot. */
  const sendDigit = async (job: DtmfJob, start: number, slot: number, signal?: AbortSignal) => {
    const packets = buildDtmfPackets({
      digit: job.digit,
      durationMs: job.durationMs,
      payloadType: options.dtmfPayloadType,
      ssrc: packetizer.ssrc,
      timestamp: packetizer.timestamp,
      takeSequenceNumber: packetizer.takeSequenceNumber,
    });
    for (const packet of packets) {
      await waitUntil(start + slot * FRAME_MS, signal);
      send(packet);
      slot++;
    }
    // The event took that much media time; the audio after it is a new talkspurt.
    packetizer.skip(packets.length * FRAME_SAMPLES);
    packetizer.markTalkspurt();
    return slot;
  };

  return {
    local,
    ssrc: packetizer.ssrc,
    setRemote(next) {
      remote = { address: next.address, port: next.port };
      receive.restart();
    },
    pull: () => jitter.pull(),
    onDigit(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    get stats() {
      return { ...receive.stats, dropped: { ...receive.stats.dropped }, ...sent, late: jitter.stats.late };
    },
    play(pcm, { signal } = {}) {
      return exclusive(async () => {
        const frames = Math.ceil(pcm.length / FRAME_SAMPLES);
        const padded = new Int16Array(frames * FRAME_SAMPLES);
        padded.set(pcm);
        const start = startRun();
        const jobs: DtmfJob[] = [];
        dtmfDuringPlay = jobs;
        let slot = 0;
        let framesSent = 0;
        try {
          while (framesSent < frames && !signal?.aborted && !closed) {
            const job = jobs.shift();
            if (job) {
              try {
                slot = await sendDigit(job, start, slot);
                job.resolve();
              } catch (error) {
                job.reject(error as Error);
              }
              continue;
            }
            await waitUntil(start + slot * FRAME_MS, signal);
            if (signal?.aborted || closed) break;
            const offset = framesSent * FRAME_SAMPLES;
            for (const packet of packetizer.push(padded.subarray(offset, offset + FRAME_SAMPLES))) send(packet);
            framesSent++;
            slot++;
          }
        } finally {
          dtmfDuringPlay = null;
          lastSlotEnd = start + slot * FRAME_MS;
          // Digits asked for while playing but not reached go out on their own, in order.
          for (const job of jobs) sendDtmfAlone(job);
        }
        return { sentMs: framesSent * FRAME_MS, aborted: framesSent < frames };
      });
    },
    sendDtmf(digit, { durationMs } = {}) {
      if (options.dtmfPayloadType === undefined) {
        return Promise.reject(new Error('no telephone-event payload type was agreed for this session'));
      }
      // Checks the digit now, so a bad one fails here rather than in the middle of a play().
      buildDtmfPackets({ digit, durationMs, ssrc: 0, timestamp: 0, takeSequenceNumber: () => 0 });
      return new Promise<void>((resolve, reject) => {
        const job = { digit, durationMs, resolve, reject };
        if (dtmfDuringPlay) dtmfDuringPlay.push(job);
        else sendDtmfAlone(job);
      });
    },
    async close() {
      if (closed) return;
      closed = true;
      for (const digit of decoder.flush()) for (const listener of listeners) listener(digit);
      await new Promise<void>((resolve) => socket.close(() => resolve()));
    },
  };

  function sendDtmfAlone(job: DtmfJob) {
    exclusive(async () => {
      const start = startRun();
      const slot = await sendDigit(job, start, 0);
      lastSlotEnd = start + slot * FRAME_MS;
    }).then(job.resolve, job.reject);
  }
}
