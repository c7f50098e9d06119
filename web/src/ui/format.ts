/** How values read on the pages: dates, durations, money (exact decimal strings from the API), statuses. */

/** One formatter of each kind, made on first use: `toLocaleString` with options makes a new one on every call. */
function once<T>(make: () => T) {
  let made: T | undefined;
  return () => {
    made ??= make();
    return made;
  };
}
const dateTimeFormat = once(() => new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' }));
const usdFormat = once(() => new Intl.NumberFormat(undefined, { style: 'currency', currency: 'USD' }));
const subCentFormat = once(
  () => new Intl.NumberFormat(undefined, { style: 'currency', currency: 'USD', minimumFractionDigits: 4 }),
);

export const formatDateTime = (iso: string | null | undefined) => (iso ? dateTimeFormat().format(new Date(iso)) : '—');

export function formatDuration(seconds: number | null | undefined) {
  if (seconds === null || seconds === undefined) return '—';
  const m = Math.floor(seconds / 60);
  const s = Math.round(seconds % 60);
  return `${m}:${String(s).padStart(2, '0')}`;
}

/** Milliseconds as m:ss, for transcript times. */
export const formatMs = (ms: number | null | undefined) =>
  ms === null || ms === undefined ? '' : formatDuration(ms / 1000);

/** A USD amount given as a decimal string, shown to the cent (or finer when it is less than a cent). */
export function formatUsd(amount: string) {
  const value = Number(amount);
  return (value !== 0 && Math.abs(value) < 0.01 ? subCentFormat() : usdFormat()).format(value);
}

const LIVE = new Set(['queued', 'dialing', 'ringing', 'connected']);
export const isLiveStatus = (status: string) => LIVE.has(status);

/** Badge colours by status: dark shades, so their text passes the contrast check. */
export const STATUS_COLORS: Record<string, string> = {
  queued: 'gray.7',
  dialing: 'blue.9',
  ringing: 'blue.9',
  connected: 'teal.9',
  completed: 'indigo.9',
  failed: 'red.9',
  busy: 'grape.9',
  no_answer: 'grape.9',
  draft: 'gray.7',
  active: 'teal.9',
  paused: 'grape.9',
};

export const humanize = (value: string) => value.replaceAll('_', ' ');
