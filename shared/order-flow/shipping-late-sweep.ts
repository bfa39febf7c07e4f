import { logger } from '../core/logger.js';
import { BUSINESS_METRICS } from '../core/metric-names.js';
import { countMetric } from '../core/metrics.js';
import { figuresOfJob } from '../domain/scorecard.js';
import { readLateSweepMark, writeLateSweepMark } from '../entities/late-sweep.js';
import { jobLines } from './order-body.js';
import { dueDayOf, jobsDueIn, settleDueJob, shippedAtOf, supplierZoneOf } from './order-service-level.js';
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

/** What the job adds to its supplier's scorecard day (CONTRACT.md §16.3), decided at its due time. */
const countOf = async (job: SyncJob, shippedAt: string | null, zones: Map<string, Promise<string>>) => {
  if (!job.dueAt || !job.completedAt) return undefined;
  const zone = zones.get(job.sourceStoreId) ?? supplierZoneOf(job.sourceStoreId);
  zones.set(job.sourceStoreId, zone);
  const cancelled = job.status === 'cancelled';
  const add = figuresOfJob({
    dueAt: job.dueAt,
    placedAt: job.completedAt,
    shippedAt: cancelled ? null : shippedAt,
    cancelledBy: cancelled ? (job.cancellation?.requestedBy === 'source' ? 'source' : 'reseller') : null,
  });
  return { day: dueDayOf(job.dueAt, await zone), add };
};

const settleHour = async (hour: string, at: Date, zones: Map<string, Promise<string>>) => {
  let late = 0;
  for (const job of await jobsDueIn(hour)) {
    const shippedAt = shippedAtOf(job, (await jobLines(job)) ?? []);
    const unshipped = job.status === 'completed' && shippedAt === null;
    const isLate = unshipped && !job.lateAt && job.dueAt !== null && Date.parse(job.dueAt ?? '') < at.getTime();
    if ((await settleDueJob(job, hour, isLate, at.toISOString(), await countOf(job, shippedAt, zones))) && isLate)
      late += 1;
  }
  return late;
};

/** One run at `at` (the scheduled event's time); stops early when `remainingMs` runs low, the mark where it got. */
export const sweepLateJobs = async (at: Date, remainingMs: () => number) => {
  const hours = hoursToSweep(await readLateSweepMark(), at);
  let late = 0;
  const zones = new Map<string, Promise<string>>();
  for (const hour of hours) {
    if (remainingMs() < 30_000) break;
    late += await settleHour(hour, at, zones);
    await writeLateSweepMark(hour, at.toISOString());
  }
  if (late) countMetric(BUSINESS_METRICS.jobsLate, late);
  logger.info('late sweep ran', { hours: hours.length, late });
  return { hours: hours.length, late };
};
