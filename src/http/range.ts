/**
 * The HTTP Range header for one byte range (`bytes=0-499`, `bytes=500-`, `bytes=-500`). Anything else (several
 * ranges, another unit, a malformed header) is ignored, and the whole file is sent, as HTTP allows.
 */
export type RangeRequest = { start: number; end?: number } | { suffix: number };

export function parseRangeHeader(header: string | undefined): RangeRequest | null {
  if (!header) return null;
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match) return null;
  const [, first, last] = match;
  if (first === '' && last === '') return null;
  if (first === '') return Number(last) > 0 ? { suffix: Number(last) } : null;
  const start = Number(first);
  if (last === '') return { start };
  const end = Number(last);
  return end >= start && Number.isSafeInteger(end) ? { start, end } : null;
}
