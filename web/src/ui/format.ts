/** How values read on the pages: dates, durations, money (exact decimal strings from the API), statuses. */
export const formatDateTime = (iso: string | null | undefined) =>
  iso ? new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' }) : '—';

export function formatDuration(seconds: number | null | undefined) {
  if (seconds === null || seconds === undefined) return '—';
  const m = Math.floor(seconds / 60);
  const s = Math.round(seconds % 60);
  return `${m}:${String(s).padStart(2, '0')}`;
}

/** Milliseconds as m:ss, for transcript times. */
export const formatMs = (ms: number | null | undefined) => (ms === null || ms === undefined ? '' : formatDuration(ms / 1000));

/** A USD amount given as a decimal string, shown to the cent (or finer when it is less than a cent). */
export function formatUsd(amount: string) {
  const value = Number(amount);
  const digits = value !== 0 && Math.abs(value) < 0.01 ? 4 : 2;
  return value.toLocaleString(undefined, { style: 'currency', currency: 'USD', minimumFractionDigits: digits });
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
