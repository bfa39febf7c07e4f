/**
 * A supplier's scorecard (CONTRACT.md §16.3) from per-day figures: each job counted once, on the day
 * (in the supplier's zone) its `dueAt` falls, when the late sweep settles it; a read adds the days of
 * its window, never the jobs. Hours to tracking go into a fixed histogram, so percentiles are
 * bucket bounds, the same whether computed from the days or from the jobs themselves.
 */

/** Upper bounds (hours) of the histogram's buckets; one more bucket holds everything above the last. */
export const HOUR_BUCKETS = [1, 2, 4, 6, 8, 12, 16, 20, 24, 30, 36, 42, 48, 60, 72, 96, 120, 168, 240, 336, 720];

/** The bucket of a number of hours: the first whose bound is at or above it. */
export const bucketOf = (hours: number) => {
  const i = HOUR_BUCKETS.findIndex((bound) => hours <= bound);
  return i === -1 ? HOUR_BUCKETS.length : i;
};

/** One day's figures: jobs due that day, how each was decided, and the hours-to-tracking histogram. */
export interface DayFigures {
  due: number;
  onTime: number;
  late: number;
  sourceCancelled: number;
  /** Counts by bucket of `HOUR_BUCKETS` (one more for above the last). */
  tracking: number[];
}

/** A job as the scorecard sees it when its due time has passed. */
export interface DueJob {
  dueAt: string;
  /** When its supplier order was placed. */
  placedAt: string;
  shippedAt: string | null;
  /** Null: not cancelled. */
  cancelledBy: 'reseller' | 'source' | null;
}

/** What one job adds to its day; null: nothing (a reseller's cancellation is left out). */
export const figuresOfJob = (job: DueJob): DayFigures | null => {
  if (job.cancelledBy === 'reseller') return null;
  const tracking = new Array<number>(HOUR_BUCKETS.length + 1).fill(0);
  const add = { due: 1, onTime: 0, late: 0, sourceCancelled: 0, tracking };
  if (job.cancelledBy === 'source') return { ...add, sourceCancelled: 1 };
  if (job.shippedAt !== null && Date.parse(job.shippedAt) <= Date.parse(job.dueAt)) {
    tracking[bucketOf((Date.parse(job.shippedAt) - Date.parse(job.placedAt)) / 3_600_000)] = 1;
    return { ...add, onTime: 1 };
  }
  return { ...add, late: 1 };
};

export const emptyDay = (): DayFigures => ({
  due: 0,
  onTime: 0,
  late: 0,
  sourceCancelled: 0,
  tracking: new Array<number>(HOUR_BUCKETS.length + 1).fill(0),
});

const sumDays = (days: DayFigures[]) =>
  days.reduce((sum, day) => {
    sum.due += day.due;
    sum.onTime += day.onTime;
    sum.late += day.late;
    sum.sourceCancelled += day.sourceCancelled;
    day.tracking.forEach((n, i) => {
      sum.tracking[i] = (sum.tracking[i] ?? 0) + n;
    });
    return sum;
  }, emptyDay());

/** The bound of the bucket holding the `p`-th share of the histogram; null when it is empty. */
export const percentileOf = (histogram: number[], p: number): number | null => {
  const total = histogram.reduce((a, b) => a + b, 0);
  if (!total) return null;
  const rank = Math.max(1, Math.ceil(p * total));
  let seen = 0;
  for (const [i, n] of histogram.entries()) {
    seen += n;
    if (seen >= rank) return HOUR_BUCKETS[Math.min(i, HOUR_BUCKETS.length - 1)] ?? null;
  }
  return null;
};

/** Under this many decided jobs a scorecard says it is not `sufficient`. */
export const SUFFICIENT_JOBS = 20;

const rate = (n: number, of: number) => (of ? Math.round((n / of) * 10_000) / 10_000 : null);

/**
 * The scorecard's figures from its window's days. Every counted job is decided (the sweep counts it
 * at its due time); parcel scans are not counted yet (their rates are null, CONTRACT.md §16.2).
 */
export const scorecardOf = (days: DayFigures[]) => {
  const sum = sumDays(days);
  return {
    jobsDue: sum.due,
    shippedOnTime: sum.onTime,
    onTimeRate: rate(sum.onTime, sum.due),
    lateShipmentRate: rate(sum.late, sum.due),
    scanVerifiedOnTimeRate: null,
    validTrackingRate: null,
    sourceCancellationRate: rate(sum.sourceCancelled, sum.due),
    hoursToTracking: { p50: percentileOf(sum.tracking, 0.5), p90: percentileOf(sum.tracking, 0.9) },
    hoursToFirstScan: { p50: null, p90: null },
    lateNow: null,
    untrackedParcels: null,
    sufficient: sum.due >= SUFFICIENT_JOBS,
  };
};
