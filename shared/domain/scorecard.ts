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
  /**
   * Jobs late now (past due, not shipped, not cancelled): +1 when the sweep finds one late, −1 once
   * when it ships or is cancelled (CONTRACT.md §16.3, `lateNow`).
   */
  lateNow: number;
  /** Counts by bucket of `HOUR_BUCKETS` (one more for above the last). */
  tracking: number[];
  /** Jobs on time whose every parcel had a carrier scan within its window (CONTRACT.md §16.3). */
  scanOnTime: number;
  /** Parcels whose status was reported at least once; of them, those scanned within their window. */
  tracked: number;
  validTracking: number;
  /** Parcels whose status was never reported. */
  untracked: number;
  /** Hours from the supplier order to the job's first carrier scan, by bucket. */
  scans: number[];
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
  const add = { ...emptyDay(), due: 1 };
  const { tracking } = add;
  if (job.cancelledBy === 'source') return { ...add, sourceCancelled: 1 };
  if (job.shippedAt !== null && Date.parse(job.shippedAt) <= Date.parse(job.dueAt)) {
    tracking[bucketOf((Date.parse(job.shippedAt) - Date.parse(job.placedAt)) / 3_600_000)] = 1;
    return { ...add, onTime: 1 };
  }
  // Not shipped at its due time: late now, until it ships or is cancelled.
  return { ...add, late: 1, lateNow: job.shippedAt === null ? 1 : 0 };
};

const emptyHistogram = () => new Array<number>(HOUR_BUCKETS.length + 1).fill(0);

export const emptyDay = (): DayFigures => ({
  due: 0,
  onTime: 0,
  late: 0,
  sourceCancelled: 0,
  lateNow: 0,
  tracking: emptyHistogram(),
  scanOnTime: 0,
  tracked: 0,
  validTracking: 0,
  untracked: 0,
  scans: emptyHistogram(),
});

/** The day's plain counters (the histograms aside): what the day's item keeps as top-level numbers. */
export const DAY_COUNTERS = [
  'due',
  'onTime',
  'late',
  'sourceCancelled',
  'lateNow',
  'scanOnTime',
  'tracked',
  'validTracking',
  'untracked',
] as const;
/** The histograms, by the prefix of their buckets' names on the day's item (`t0`…, `s0`…). */
export const DAY_HISTOGRAMS = { tracking: 't', scans: 's' } as const;

const addHistogram = (into: number[], from: number[]) =>
  from.forEach((n, i) => {
    into[i] = (into[i] ?? 0) + n;
  });

/** Days' figures added up. */
export const sumDays = (days: DayFigures[]) =>
  days.reduce((sum, day) => {
    for (const name of DAY_COUNTERS) sum[name] += day[name];
    addHistogram(sum.tracking, day.tracking);
    addHistogram(sum.scans, day.scans);
    return sum;
  }, emptyDay());

// ---------- carrier scans (CONTRACT.md §16.2–16.3)

/** A parcel that ships a job, as the scan check sees it. */
export interface ShippedParcel {
  id: string;
  /** Whether its status was reported at least once (else it is untracked). */
  reported: boolean;
  firstScanAt: string | null;
  /** The end of its window for a first scan (2 working days after its creation). */
  scanDueAt: string;
}

/** The scan check of one job at `at`: decided, or the time to look again; what it adds; the unscanned parcels. */
export interface ScanVerdict {
  /** Undefined: decided now; else when the last open window closes. */
  lookAgainAt?: string;
  unscanned: string[];
  add: DayFigures;
}

const scannedInTime = (parcel: ShippedParcel) =>
  parcel.firstScanAt !== null && Date.parse(parcel.firstScanAt) <= Date.parse(parcel.scanDueAt);

/**
 * Whether a shipped job's parcels are decided at `at` (each scanned within its window, or its window
 * closed), and what they add to the job's day: parcels reported, scanned in time, untracked; the job
 * on time and scan-verified; its hours to the first scan. A parcel reported but not scanned in time
 * is unscanned (`fulfillment.unscanned`); one never reported is untracked, not unscanned.
 */
export const scanVerdictOf = (
  job: { placedAt: string; onTime: boolean },
  parcels: ShippedParcel[],
  at: Date,
): ScanVerdict => {
  const add = emptyDay();
  const open = parcels.filter((p) => !scannedInTime(p) && Date.parse(p.scanDueAt) >= at.getTime());
  if (open.length) {
    const lookAgainAt = open
      .map((p) => p.scanDueAt)
      .sort()
      .at(-1);
    return { lookAgainAt: lookAgainAt ?? at.toISOString(), unscanned: [], add };
  }
  const unscanned = parcels.filter((p) => p.reported && !scannedInTime(p)).map((p) => p.id);
  add.tracked = parcels.filter((p) => p.reported).length;
  add.validTracking = parcels.filter(scannedInTime).length;
  add.untracked = parcels.length - add.tracked;
  if (job.onTime && parcels.length && parcels.every(scannedInTime)) add.scanOnTime = 1;
  const first = parcels.flatMap((p) => p.firstScanAt ?? []).sort()[0];
  if (first) add.scans[bucketOf((Date.parse(first) - Date.parse(job.placedAt)) / 3_600_000)] = 1;
  return { unscanned, add };
};

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
 * at its due time); its parcels' scans once they are decided (each scanned within its window, or the
 * window closed), so a job counts as scan-verified from then on.
 */
export const scorecardOf = (days: DayFigures[]) => {
  const sum = sumDays(days);
  return {
    jobsDue: sum.due,
    shippedOnTime: sum.onTime,
    onTimeRate: rate(sum.onTime, sum.due),
    lateShipmentRate: rate(sum.late, sum.due),
    scanVerifiedOnTimeRate: rate(sum.scanOnTime, sum.due),
    validTrackingRate: rate(sum.validTracking, sum.tracked),
    sourceCancellationRate: rate(sum.sourceCancelled, sum.due),
    hoursToTracking: { p50: percentileOf(sum.tracking, 0.5), p90: percentileOf(sum.tracking, 0.9) },
    hoursToFirstScan: { p50: percentileOf(sum.scans, 0.5), p90: percentileOf(sum.scans, 0.9) },
    lateNow: sum.lateNow,
    untrackedParcels: sum.untracked,
    sufficient: sum.due >= SUFFICIENT_JOBS,
  };
};
