/**
 * When and what a supplier ships (CONTRACT.md §10.2, §16): its promise in business days, the lines a
 * parcel ships, the carrier's progress, and the scorecard of its days. Pure.
 */

// The promise: business days.
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

// The parcel: the lines it ships and the carrier's progress.

/**
 * Which of a sync job's lines a supplier's parcel ships, in the reseller's terms (CONTRACT.md §10.2).
 * Pure: the fulfillment worker applies it to the job's lines as they stand when it delivers.
 */

/** One reseller line item a job carries, with what the reseller's platform has accepted as shipped. */
export interface ShipmentLine {
  resellerLineItemId: string | null;
  sourceLineItemId: string | null;
  quantity: number;
  fulfilledQuantity: number;
}

/** A line a source fulfillment names: the supplier's line item id and how many it ships. */
export interface ShippedLine {
  id: string;
  quantity: number;
}

export type ShipmentPlan =
  /** Ship exactly these reseller line items and quantities. */
  | { kind: 'lines'; lines: Array<{ resellerLineItemId: string; quantity: number }> }
  /** The job's lines have no reseller ids (an order without line item ids): fulfilled without line items. */
  | { kind: 'whole' }
  /** Nothing is left to ship: nothing is sent, and the fulfillment records why. */
  | { kind: 'ignored'; reason: string };

const remaining = (line: ShipmentLine) => Math.max(0, line.quantity - line.fulfilledQuantity);

/**
 * The reseller fulfillment a parcel becomes. `shipped` null: the parcel names no lines, so it covers
 * every line of the job not yet fulfilled. Otherwise only the job's lines it names, quantities cut to
 * what remains; ids that are not the job's are left out. Never a line of another job.
 */
export const planShipment = (lines: ShipmentLine[], shipped: ShippedLine[] | null): ShipmentPlan => {
  if (lines.length === 0 || lines.some((line) => line.resellerLineItemId === null)) {
    return lines.every((line) => remaining(line) === 0) && lines.length > 0
      ? { kind: 'ignored', reason: 'every item of the job is already fulfilled' }
      : { kind: 'whole' };
  }
  const wanted = new Map<string, number>();
  if (shipped === null) {
    for (const line of lines) wanted.set(line.resellerLineItemId!, remaining(line));
  } else {
    const bySourceId = new Map<string, ShipmentLine>();
    for (const line of lines) if (line.sourceLineItemId !== null) bySourceId.set(line.sourceLineItemId, line);
    for (const item of shipped) {
      const line = bySourceId.get(item.id);
      if (!line) continue;
      const id = line.resellerLineItemId!;
      wanted.set(id, Math.min(remaining(line), (wanted.get(id) ?? 0) + item.quantity));
    }
  }
  const planned = [...wanted]
    .filter(([, quantity]) => quantity > 0)
    .map(([resellerLineItemId, quantity]) => ({ resellerLineItemId, quantity }));
  if (planned.length > 0) return { kind: 'lines', lines: planned };
  if (shipped === null) return { kind: 'ignored', reason: 'every item of the job is already fulfilled' };
  if (wanted.size === 0) return { kind: 'ignored', reason: 'the fulfillment names no line item of this job' };
  return { kind: 'ignored', reason: 'every item it names is already fulfilled' };
};

export type FulfillmentStatus = 'unfulfilled' | 'partial' | 'fulfilled';

/** The job's `fulfillmentStatus`, from its lines' quantities the reseller's platform accepted. */
export const fulfillmentStatusOf = (
  lines: Pick<ShipmentLine, 'quantity' | 'fulfilledQuantity'>[],
): FulfillmentStatus => {
  const shipped = lines.reduce((sum, line) => sum + Math.min(line.fulfilledQuantity, line.quantity), 0);
  const total = lines.reduce((sum, line) => sum + line.quantity, 0);
  if (shipped === 0) return 'unfulfilled';
  return shipped >= total ? 'fulfilled' : 'partial';
};

/** The job's lines after the reseller's platform accepted (`sign` 1) or cancelled (`-1`) a fulfillment's lines. */
export const applyShipment = <T extends ShipmentLine>(
  lines: T[],
  shippedLines: Array<{ resellerLineItemId: string; quantity: number }> | 'whole',
  sign: 1 | -1,
): T[] => {
  if (shippedLines === 'whole') {
    return lines.map((line) => ({ ...line, fulfilledQuantity: sign === 1 ? line.quantity : 0 }));
  }
  const byId = new Map(shippedLines.map((line) => [line.resellerLineItemId, line.quantity]));
  return lines.map((line) => {
    const quantity = line.resellerLineItemId === null ? undefined : byId.get(line.resellerLineItemId);
    if (quantity === undefined) return line;
    const fulfilledQuantity = Math.min(line.quantity, Math.max(0, line.fulfilledQuantity + sign * quantity));
    return { ...line, fulfilledQuantity };
  });
};

/** What a parcel covers of its job: the reseller lines it ships, or the whole job. */
export type ParcelCover = ReadonlyArray<{ id: string; quantity: number }> | 'whole';

/**
 * How much of each of a job's lines the parcels cover together, never more than the line's
 * quantity: what the reseller's platform accepted (`fulfilledQuantity`, from the delivered parcels)
 * or what is spoken for (the parcels on their way too, when a new parcel is planned).
 */
export const coveredQuantities = (
  lines: ReadonlyArray<{ resellerLineItemId: string | null; quantity: number }>,
  parcels: ReadonlyArray<ParcelCover>,
): number[] =>
  lines.map((line) => {
    let covered = 0;
    for (const parcel of parcels) covered = parcel === 'whole' ? line.quantity : covered + shippedOf(parcel, line);
    return Math.min(line.quantity, covered);
  });

/** What one parcel's items ship of one line. */
const shippedOf = (items: Exclude<ParcelCover, 'whole'>, line: { resellerLineItemId: string | null }): number =>
  items.reduce((sum, item) => (item.id === line.resellerLineItemId ? sum + item.quantity : sum), 0);

// ---------- carrier progress (CONTRACT.md §16.2)

/** A parcel's `shipmentStatus` as the API shows it: the supplier's platform's last word on the carrier. */
export const SHIPMENT_STATUSES = [
  'label_purchased',
  'label_printed',
  'confirmed',
  'failure',
  'in_transit',
  'out_for_delivery',
  'attempted_delivery',
  'ready_for_pickup',
  'delivered',
] as const;
export type ShipmentStatus = (typeof SHIPMENT_STATUSES)[number];

/**
 * How far along each status is: a status never moves back (a late `in_transit` after `delivered`
 * changes nothing). From rank 2 on, the carrier has the parcel: a scan. `failure` is no scan.
 */
const RANKS: Record<ShipmentStatus, number> = {
  label_purchased: 0,
  label_printed: 0,
  confirmed: 1,
  failure: 1,
  in_transit: 2,
  out_for_delivery: 3,
  attempted_delivery: 3,
  ready_for_pickup: 3,
  delivered: 4,
};
const SCAN_RANK = 2;

/**
 * A status as a platform spells it (REST `shipment_status`, a fulfillment event's `status`, upper or
 * lower case), in the service's terms; null for a value it does not know (the set grows between API
 * versions: never an error). Event statuses with no REST twin take the nearest one.
 */
export const shipmentStatusOf = (raw: unknown): ShipmentStatus | null => {
  if (typeof raw !== 'string') return null;
  const status = raw.toLowerCase();
  if (status === 'carrier_picked_up' || status === 'delayed') return 'in_transit';
  if (status === 'picked_up') return 'delivered';
  return (SHIPMENT_STATUSES as readonly string[]).includes(status) ? (status as ShipmentStatus) : null;
};

export const isScan = (status: ShipmentStatus) => RANKS[status] >= SCAN_RANK;

/** What a parcel knows of its carrier: its last status and the carrier's time of its first scan. */
export interface CarrierProgress {
  shipmentStatus?: ShipmentStatus;
  firstScanAt?: string;
}

/** One report of a status (`at`: the carrier's time, else the report's). */
export interface CarrierReport {
  status: ShipmentStatus;
  at: string | null;
}

/**
 * The parcel's progress after a report: the status unless it would move back, and the first scan's
 * time (the earliest scan reported, whatever order the reports come in). Undefined: nothing changes.
 */
export const progressAfter = (current: CarrierProgress, report: CarrierReport): CarrierProgress | undefined => {
  const next: CarrierProgress = { ...current };
  if (!current.shipmentStatus || RANKS[report.status] >= RANKS[current.shipmentStatus]) {
    next.shipmentStatus = report.status;
  }
  if (isScan(report.status) && report.at && (!current.firstScanAt || report.at < current.firstScanAt)) {
    next.firstScanAt = report.at;
  }
  return next.shipmentStatus === current.shipmentStatus && next.firstScanAt === current.firstScanAt ? undefined : next;
};

// The scorecard.

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
