/**
 * What an RTP receiver counts (RFC 3550 section 6.4 and appendix A.8): packets lost from gaps in the extended
 * sequence numbers, duplicates, and the interarrival jitter. It also holds the stream to the first SSRC seen,
 * so a second sender on the same port is dropped rather than mixed in.
 */
import type { RtpPacketFields } from './rtp-packet.js';
import { sequenceDistance, timestampDistance } from './rtp-sequence.js';

export type RtpDropReason = 'malformed' | 'unexpectedSource' | 'unexpectedSsrc' | 'unexpectedPayloadType';

export interface RtpReceiveStats {
  /** Every datagram that arrived on the socket, dropped ones included. */
  packetsReceived: number;
  bytesReceived: number;
  /** Expected (from the lowest to the highest sequence number seen) minus the distinct packets received. */
  lost: number;
  duplicates: number;
  /** RFC 3550 interarrival jitter of the audio packets, in milliseconds. */
  jitterMs: number;
  dropped: Record<RtpDropReason, number>;
}

export interface RtpReceiveCounter {
  readonly stats: Readonly<RtpReceiveStats>;
  arrived(bytes: number): void;
  drop(reason: RtpDropReason): void;
  /** A new far end: the next packet's SSRC is accepted and starts a new sequence; the counts carry on. */
  restart(): void;
  /** A well-formed packet from the far end: false when it must be dropped (another SSRC, a duplicate). */
  accept(
    packet: Pick<RtpPacketFields, 'ssrc' | 'sequenceNumber' | 'timestamp'>,
    isAudio: boolean,
    arrivalMs: number,
  ): boolean;
}

// Sequence numbers remembered to spot duplicates: far more than a jitter buffer holds.
const RECENT_SEQUENCES = 512;

export function createRtpReceiveStats(clockRate = 8000): RtpReceiveCounter {
  const stats: RtpReceiveStats = {
    packetsReceived: 0,
    bytesReceived: 0,
    lost: 0,
    duplicates: 0,
    jitterMs: 0,
    dropped: { malformed: 0, unexpectedSource: 0, unexpectedSsrc: 0, unexpectedPayloadType: 0 },
  };
  let ssrc: number | null = null;
  /** Extended (unwrapped) sequence numbers: the lowest and highest seen. */
  let lowest = 0;
  let highest = 0;
  let distinct = 0;
  let lostBefore = 0;
  const recent = new Set<number>();
  const recentOrder: number[] = [];
  let jitter = 0; // in timestamp units, as RFC 3550 keeps it
  let previous: { arrivalMs: number; timestamp: number } | null = null;

  return {
    stats,
    arrived(bytes) {
      stats.packetsReceived++;
      stats.bytesReceived += bytes;
    },
    drop(reason) {
      stats.dropped[reason]++;
    },
    restart() {
      lostBefore = stats.lost;
      ssrc = null;
      distinct = 0;
      recent.clear();
      recentOrder.length = 0;
      previous = null;
    },
    accept(packet, isAudio, arrivalMs) {
      if (ssrc === null) {
        ssrc = packet.ssrc;
        lowest = highest = packet.sequenceNumber;
      } else if (packet.ssrc !== ssrc) {
        stats.dropped.unexpectedSsrc++;
        return false;
      }
      const extended = highest + sequenceDistance(packet.sequenceNumber, highest & 0xffff);
      if (recent.has(extended)) {
        stats.duplicates++;
        return false;
      }
      recent.add(extended);
      recentOrder.push(extended);
      if (recentOrder.length > RECENT_SEQUENCES) recent.delete(recentOrder.shift()!);
      highest = Math.max(highest, extended);
      lowest = Math.min(lowest, extended);
      distinct++;
      stats.lost = lostBefore + Math.max(0, highest - lowest + 1 - distinct);

      if (isAudio) {
        if (previous) {
          const arrivalUnits = ((arrivalMs - previous.arrivalMs) * clockRate) / 1000;
          const difference = arrivalUnits - timestampDistance(packet.timestamp, previous.timestamp);
          jitter += (Math.abs(difference) - jitter) / 16;
          stats.jitterMs = (jitter * 1000) / clockRate;
        }
        previous = { arrivalMs, timestamp: packet.timestamp };
      }
      return true;
    },
  };
}
