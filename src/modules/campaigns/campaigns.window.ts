/**
 * Calling windows in the callee's local time. A campaign's schedule (days of the week, a start and an end time) is
 * narrowed to 8:00–21:00 local whatever it says; a callee whose number spans several zones is called only when it
 * is inside the window in every one of them.
 */
export const WEEKDAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

export interface Schedule {
  days: Weekday[];
  /** "HH:MM", local time of the callee. */
  start: string;
  end: string;
}

export const DEFAULT_SCHEDULE: Schedule = {
  days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat'],
  start: '09:00',
  end: '20:00',
};
/** Never earlier or later than this, local time, whatever the schedule says. */
export const LEGAL_START_MINUTES = 8 * 60;
export const LEGAL_END_MINUTES = 21 * 60;

const minutesOf = (time: string) => Number(time.slice(0, 2)) * 60 + Number(time.slice(3, 5));

const formatters = new Map<string, Intl.DateTimeFormat>();
function formatter(zone: string) {
  let format = formatters.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      weekday: 'short',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    });
    formatters.set(zone, format);
  }
  return format;
}

/** The weekday and minute of the day at `at` in `zone`. */
export function localTime(zone: string, at: Date): { day: Weekday; minutes: number } {
  const parts = formatter(zone).formatToParts(at);
  const value = (type: string) => parts.find((part) => part.type === type)?.value ?? '';
  return {
    day: value('weekday').slice(0, 3).toLowerCase() as Weekday,
    minutes: Number(value('hour')) * 60 + Number(value('minute')),
  };
}

/** Whether `at` is inside the schedule (narrowed to the legal hours) in every one of `zones`. */
export function insideWindow(zones: readonly string[], schedule: Schedule, at: Date): boolean {
  if (zones.length === 0) return false;
  const start = Math.max(minutesOf(schedule.start), LEGAL_START_MINUTES);
  const end = Math.min(minutesOf(schedule.end), LEGAL_END_MINUTES);
  return zones.every((zone) => {
    const local = localTime(zone, at);
    return schedule.days.includes(local.day) && local.minutes >= start && local.minutes < end;
  });
}

const STEP_MS = 5 * 60_000;
const HORIZON_MS = 8 * 24 * 3600_000;

/**
 * The first moment at or after `from` inside the window (to 5 minutes), or null when there is none within 8 days
 * (an empty schedule, or zones too far apart to share one).
 */
export function nextWindowStart(zones: readonly string[], schedule: Schedule, from: Date): Date | null {
  if (insideWindow(zones, schedule, from)) return from;
  const first = Math.ceil(from.getTime() / STEP_MS) * STEP_MS;
  for (let t = first; t <= from.getTime() + HORIZON_MS; t += STEP_MS) {
    const at = new Date(t);
    if (insideWindow(zones, schedule, at)) return at;
  }
  return null;
}
