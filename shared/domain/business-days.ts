/**
 * A supplier's promise and its business-day arithmetic (CONTRACT.md §16.1), in the supplier's own
 * zone, with Intl alone: working days, days off, the cut-off, daylight-saving changes. Pure.
 */

export const WEEKDAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

/** A source store's promise as the API shows it (its zone always resolved). */
export interface ServiceLevel {
  shipWithinBusinessDays: number;
  cutoffTime: string;
  timeZone: string;
  workingDays: Weekday[];
  daysOff: string[];
}

export const DEFAULT_CUTOFF = '14:00';
export const DEFAULT_WORKING_DAYS: Weekday[] = ['mon', 'tue', 'wed', 'thu', 'fri'];
/** Working days a parcel has for its first carrier scan (Walmart's late origin scan). */
export const SCAN_WITHIN_BUSINESS_DAYS = 2;

/** Whether the runtime knows the IANA zone (the constructor, not `supportedValuesOf`: it omits aliases). */
export const isTimeZone = (zone: string) => {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return zone.length > 0;
  } catch {
    return false;
  }
};

/** `HH:MM`, 00:00 to 23:59. */
export const isCutoffTime = (value: string) => /^([01]\d|2[0-3]):[0-5]\d$/.test(value);

/** `YYYY-MM-DD` naming a real calendar date. */
export const isLocalDate = (value: string) =>
  /^\d{4}-\d{2}-\d{2}$/.test(value) && new Date(`${value}T00:00:00Z`).toISOString().startsWith(value);

const formatters = new Map<string, Intl.DateTimeFormat>();
const formatterOf = (timeZone: string) => {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formatters.set(timeZone, formatter);
  }
  return formatter;
};

/** An instant's wall clock in a zone: its local date (`YYYY-MM-DD`) and time (`HH:MM`). */
export const localParts = (instant: Date, timeZone: string) => {
  const parts = Object.fromEntries(
    formatterOf(timeZone)
      .formatToParts(instant)
      .map((p) => [p.type, p.value]),
  );
  return { date: `${parts.year}-${parts.month}-${parts.day}`, time: `${parts.hour}:${parts.minute}` };
};

/** The zone's offset from UTC at an instant, in milliseconds. */
const offsetAt = (instant: number, timeZone: string) => {
  const parts = Object.fromEntries(
    formatterOf(timeZone)
      .formatToParts(new Date(instant))
      .map((p) => [p.type, Number(p.value)]),
  );
  const wall = Date.UTC(parts.year, parts.month - 1, parts.day, parts.hour, parts.minute, parts.second);
  return wall - (instant - (instant % 1000));
};

/**
 * The instant of a local wall-clock time: a time in a spring-forward gap resolves forward, one in a
 * fall-back overlap to the earlier instant (Temporal's `compatible`).
 */
export const instantOf = (date: string, time: string, timeZone: string): Date => {
  const naive = Date.parse(`${date}T${time}Z`);
  const before = offsetAt(naive - 86_400_000, timeZone);
  const after = offsetAt(naive + 86_400_000, timeZone);
  const valid = [naive - before, naive - after].filter((at) => at + offsetAt(at, timeZone) === naive);
  // None valid: the time falls in a gap and resolves forward by the change (the earlier offset).
  return new Date(valid.length ? Math.min(...valid) : naive - before);
};

const nextDate = (date: string) => new Date(Date.parse(`${date}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
const weekdayOf = (date: string) => WEEKDAYS[new Date(`${date}T00:00:00Z`).getUTCDay()];

type Calendar = Pick<ServiceLevel, 'workingDays' | 'daysOff'>;

export const isWorkingDay = (calendar: Calendar, date: string) =>
  calendar.workingDays.includes(weekdayOf(date)) && !calendar.daysOff.includes(date);

/** The `count`-th working day after `date` (count 0: `date` itself). */
export const addWorkingDays = (calendar: Calendar, date: string, count: number) => {
  let day = date;
  for (let left = count; left > 0; ) {
    day = nextDate(day);
    if (isWorkingDay(calendar, day)) left -= 1;
  }
  return day;
};

/** The first working day at or after `date`. */
const workingDayFrom = (calendar: Calendar, date: string) => {
  let day = date;
  while (!isWorkingDay(calendar, day)) day = nextDate(day);
  return day;
};

/** The end (23:59:59 local) of a local date, as an instant. */
export const endOfLocalDay = (date: string, timeZone: string) =>
  new Date(instantOf(nextDate(date), '00:00', timeZone).getTime() - 1000);

/**
 * When a supplier order created at `placedAt` is due: created on a working day before the cut-off,
 * that day is day 0, otherwise the next working day is; due at the end of the
 * `shipWithinBusinessDays`-th working day after day 0, in the supplier's zone.
 */
export const dueAtOf = (promise: ServiceLevel, placedAt: Date) => {
  if (!promise.workingDays.length) throw new Error('a promise needs at least one working day');
  const local = localParts(placedAt, promise.timeZone);
  const dayZero =
    isWorkingDay(promise, local.date) && local.time < promise.cutoffTime
      ? local.date
      : workingDayFrom(promise, nextDate(local.date));
  return endOfLocalDay(addWorkingDays(promise, dayZero, promise.shipWithinBusinessDays), promise.timeZone);
};

/**
 * The end of the window a parcel created at `createdAt` has for its first carrier scan: the end of
 * the second working day after its creation's local date.
 */
export const scanDueAtOf = (calendar: Calendar & { timeZone: string }, createdAt: Date) => {
  const { date } = localParts(createdAt, calendar.timeZone);
  return endOfLocalDay(addWorkingDays(calendar, date, SCAN_WITHIN_BUSINESS_DAYS), calendar.timeZone);
};

/** The local date (`YYYY-MM-DD`) of an instant in a zone. */
export const localDateOf = (instant: Date, timeZone: string) => localParts(instant, timeZone).date;
