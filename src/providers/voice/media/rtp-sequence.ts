/** Arithmetic on RTP's wrapping counters: 16-bit sequence numbers and 32-bit timestamps. */

/** How far `a` is ahead of `b` (negative: behind), taking the shorter way round the 16-bit circle. */
export function sequenceDistance(a: number, b: number): number {
  return ((((a - b) & 0xffff) + 0x8000) & 0xffff) - 0x8000;
}

export function nextSequence(sequenceNumber: number, step = 1): number {
  return (sequenceNumber + step) & 0xffff;
}

/** How far timestamp `a` is ahead of `b` (negative: behind), on the 32-bit circle. */
export function timestampDistance(a: number, b: number): number {
  return (a - b) | 0;
}

export function advanceTimestamp(timestamp: number, samples: number): number {
  return (timestamp + samples) >>> 0;
}
