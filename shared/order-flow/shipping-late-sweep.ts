import { BUSINESS_METRICS, countMetric, logger } from '../core/telemetry.js';
import { emptyDay, figuresOfJob, scanVerdictOf, sumDays } from '../domain/shipping.js';
import { readLateSweepMark, writeLateSweepMark } from '../entities/late-sweep.js';
import {
  dueDayOf,
  dueHourOf,
  jobsDueIn,
  type SupplierCalendar,
  scanParcelsOf,
  settleDueJob,
  shippedAtOf,
  supplierCalendarOf,
} from './order-entries.js';
import { jobLines } from './order-repository.js';
import type { SyncJob } from './order-sync-job.js';

/**
 * The late sweep (CONTRACT.md §16.2), scheduled: every job due in the UTC hours that ended since its
 * last run, each settled once. A completed job not shipped is late: its late lists and `lt` set,
 * which the event recorder reports as `sync_job.late` once; every other job (shipped, cancelled)
 * only leaves its due hour. O(jobs due since the last run): it reads only those hours' entries.
 */

const HOUR = 3_600_000;
/** A first run (no mark yet) looks this far back. */
const FIRST_LOOK_BACK_HOURS = 48;

const hourAt = (ms: number) => new Date(ms).toISOString().slice(0, 13);
const msOfHour = (hour: string) => Date.parse(`${hour}:00:00Z`);

/** The hours to go through at `at`: after the mark, up to the last that has ended. */
export const hoursToSweep = (mark: string | null, at: Date) => {
  const last = msOfHour(hourAt(at.getTime())) - HOUR;
  const first = mark ? msOfHour(mark) + HOUR : last - (FIRST_LOOK_BACK_HOURS - 1) * HOUR;
  const hours: string[] = [];
  for (let ms = first; ms <= last; ms += HOUR) hours.push(hourAt(ms));
  return hours;
};

type Calendars = Map<string, Promise<SupplierCalendar>>;

const calendarOf = (sourceStoreId: string, calendars: Calendars) => {
  const calendar = calendars.get(sourceStoreId) ?? supplierCalendarOf(sourceStoreId);
  calendars.set(sourceStoreId, calendar);
  return calendar;
};

/** What the job adds to its supplier's scorecard day (CONTRACT.md §16.3), decided at its due time. */
const dueFiguresOf = (job: SyncJob, shippedAt: string | null) => {
  const cancelled = job.status === 'cancelled';
  return figuresOfJob({
    dueAt: job.dueAt ?? '',
    placedAt: job.completedAt ?? '',
    shippedAt: cancelled ? null : shippedAt,
    cancelledBy: cancelled ? (job.cancellation?.requestedBy === 'source' ? 'source' : 'reseller') : null,
  });
};

/**
 * What the sweep does with a job read under `hour`. At its due hour: late, or counted on its day
 * (on time, late, cancelled). A shipped job's parcels are then checked for a carrier scan within
 * their windows (CONTRACT.md §16.2): while one is open the job is filed again under the hour it
 * closes (the sweep reads it then: still O(jobs due since the last run)); once decided, the
 * unscanned parcels are marked and the scans counted on the same day.
 */
const settlementOf = async (job: SyncJob, hour: string, at: Date, calendars: Calendars) => {
  if (!job.dueAt || !job.completedAt) return { settlement: { late: false, unscanned: [] } };
  const shippedAt = shippedAtOf(job, (await jobLines(job)) ?? []);
  const atDueHour = dueHourOf(new Date(job.dueAt)) === hour;
  const calendar = await calendarOf(job.sourceStoreId, calendars);
  const day = dueDayOf(job.dueAt, calendar.timeZone);
  const add = atDueHour ? dueFiguresOf(job, shippedAt) : null;
  const pastDue = Date.parse(job.dueAt) < at.getTime();
  const late = atDueHour && pastDue && job.status === 'completed' && shippedAt === null && !job.lateAt;
  // Late now only with the write that marks it (`ln`, the day's `lateNow` +1 in one transaction).
  if (add && !late) add.lateNow = 0;
  const unscanned: string[] = [];
  if (late || job.status !== 'completed' || shippedAt === null)
    return { settlement: { late, unscanned }, count: { day, add } };
  const onTime = Date.parse(shippedAt) <= Date.parse(job.dueAt);
  const verdict = scanVerdictOf({ placedAt: job.completedAt, onTime }, scanParcelsOf(job, calendar), at);
  if (verdict.lookAgainAt) {
    const settlement = { late, nextHour: dueHourOf(new Date(verdict.lookAgainAt)), unscanned };
    return { settlement, count: { day, add } };
  }
  return {
    settlement: { late, unscanned: verdict.unscanned },
    count: { day, add: sumDays([add ?? emptyDay(), verdict.add]) },
  };
};

const settleHour = async (hour: string, at: Date, calendars: Calendars) => {
  let late = 0;
  for (const job of await jobsDueIn(hour)) {
    const { settlement, count } = await settlementOf(job, hour, at, calendars);
    if ((await settleDueJob(job, hour, settlement, at.toISOString(), count)) && settlement.late) late += 1;
  }
  return late;
};

/** One run at `at` (the scheduled event's time); stops early when `remainingMs` runs low, the mark where it got. */
export const sweepLateJobs = async (at: Date, remainingMs: () => number) => {
  const hours = hoursToSweep(await readLateSweepMark(), at);
  let late = 0;
  const calendars: Calendars = new Map();
  for (const hour of hours) {
    if (remainingMs() < 30_000) break;
    late += await settleHour(hour, at, calendars);
    await writeLateSweepMark(hour, at.toISOString());
  }
  if (late) countMetric(BUSINESS_METRICS.jobsLate, late);
  logger.info('late sweep ran', { hours: hours.length, late });
  return { hours: hours.length, late };
};
