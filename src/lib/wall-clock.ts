/**
 * Wall-clock time in a time zone, with Intl only: the clock at a moment, the moment of a clock reading (summer time
 * included), and calendar-date arithmetic.
 */
/** A wall-clock moment in some zone. `month` is 1-12; `weekday` 0 (Sunday) to 6. */
export interface WallClock {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  weekday: number;
}

const WALL_FORMATS = new Map<string, Intl.DateTimeFormat>();
function wallFormat(zone: string): Intl.DateTimeFormat {
  let format = WALL_FORMATS.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
      weekday: 'short',
      hourCycle: 'h23',
    });
    if (WALL_FORMATS.size > 500) WALL_FORMATS.clear();
    WALL_FORMATS.set(zone, format);
  }
  return format;
}

const WEEKDAY_SHORT = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];

/** The wall clock in `zone` at `at`. */
export function wallClock(zone: string, at: Date): WallClock & { second: number } {
  const parts = wallFormat(zone).formatToParts(at);
  const get = (type: Intl.DateTimeFormatPartTypes) => parts.find((part) => part.type === type)?.value ?? '';
  return {
    year: Number(get('year')),
    month: Number(get('month')),
    day: Number(get('day')),
    hour: Number(get('hour')) % 24,
    minute: Number(get('minute')),
    second: Number(get('second')),
    weekday: WEEKDAY_SHORT.indexOf(get('weekday').slice(0, 3).toLowerCase()),
  };
}

/** How far `zone`'s wall clock is ahead of UTC at `at`, in milliseconds. */
function offsetMs(zone: string, at: Date): number {
  const wall = wallClock(zone, at);
  const asUtc = Date.UTC(wall.year, wall.month - 1, wall.day, wall.hour, wall.minute, wall.second);
  return asUtc - Math.floor(at.getTime() / 1000) * 1000;
}

/**
 * The instant the wall clock of `zone` shows this date and time. A time skipped by a change to summer time is read
 * as the same time after the change (02:30 on that night is 03:30).
 */
export function instantOf(zone: string, local: Pick<WallClock, 'year' | 'month' | 'day' | 'hour' | 'minute'>): Date {
  const asUtc = Date.UTC(local.year, local.month - 1, local.day, local.hour, local.minute);
  let guess = asUtc - offsetMs(zone, new Date(asUtc));
  const second = asUtc - offsetMs(zone, new Date(guess));
  if (second !== guess) guess = Math.max(guess, second);
  return new Date(guess);
}

/** The calendar date `days` after this one (any month or year boundary). */
export function addDays(date: Pick<WallClock, 'year' | 'month' | 'day'>, days: number) {
  const moved = new Date(Date.UTC(date.year, date.month - 1, date.day + days));
  return {
    year: moved.getUTCFullYear(),
    month: moved.getUTCMonth() + 1,
    day: moved.getUTCDate(),
    weekday: moved.getUTCDay(),
  };
}

const pad = (value: number) => String(value).padStart(2, '0');
/** YYYY-MM-DD of a calendar date. */
export const isoDate = (date: Pick<WallClock, 'year' | 'month' | 'day'>) =>
  `${date.year}-${pad(date.month)}-${pad(date.day)}`;
