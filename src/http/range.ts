/**
 * The HTTP Range header for one byte range (`bytes=0-499`, `bytes=500-`, `bytes=-500`). Anything else (several
 * ranges, another unit, a malformed header) is ignored, and the whole file is sent, as HTTP allows.
 */
export type RangeRequest = { start: number; end?: number } | { suffix: number };

/**
 * A byte position as a number. Positions past Number.MAX_SAFE_INTEGER (no stored file is that large) become it: a
 * start there is past the end of any file (416), an end or suffix there reaches the end or the start of the file.
 */
function position(digits: string): number {
  const value = Number(digits);
  return Number.isSafeInteger(value) ? value : Number.MAX_SAFE_INTEGER;
}

export function parseRangeHeader(header: string | undefined): RangeRequest | null {
  if (!header) return null;
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match) return null;
  const [, first = '', last = ''] = match;
  if (first === '' && last === '') return null;
  if (first === '') return position(last) > 0 ? { suffix: position(last) } : null;
  const start = position(first);
  if (last === '') return { start };
  const end = position(last);
  return end >= start ? { start, end } : null;
}
