import {
  coveredQuantities,
  DAY_COUNTERS,
  type DayFigures,
  DEFAULT_WORKING_DAYS,
  emptyDay,
  localDateOf,
  type ShippedParcel,
  scanDueAtOf,
} from '../domain/shipping.js';
import { INDEX_KEYS, indexEntry, lists } from '../dynamo/keys.js';
import {
  batchGet,
  ConditionFailed,
  getItem,
  keyOf,
  queryIndex,
  TABLE,
  transactIf,
  UpdateBuilder,
  updateIf,
} from '../dynamo/table.js';
import { dayAddition } from '../entities/scorecard-day.js';
import { sourceStoreFrom, sourceStoreKey } from '../entities/store.js';
import { jobLines } from './order-body.js';
import { coverOf, type FulfillmentEntry, shippedTimeOf } from './order-fulfillment-entry.js';
import { loadJob } from './order-repository.js';
import { DUE_AT, LATE_AT, LATE_NOW, type SyncJob, syncJobFrom, syncJobKey } from './order-sync-job.js';

/**
 * A job's promise kept (CONTRACT.md §16.2): its due time, set when its supplier order is placed, the
 * due-hour entry the late sweep reads (GSI5, which a completed job uses for nothing else), and the
 * late mark. The job item is near 1 KB and every byte is paid by each write, so the due time is a
 * number of seconds under a two-letter name, and the late mark a time under another. A cancellation
 * asked of the job (`requestCancel`, `declineCancel`: a supplier that refuses has shipped) takes it
 * out of both, as every move between states does (`indexChanges`).
 */

/** The UTC hour (`YYYY-MM-DDTHH`) a due time falls in: the sweep reads whole hours past. */
export const dueHourOf = (dueAt: Date) => dueAt.toISOString().slice(0, 13);

/** What a completion with a promise adds: the due time, and the job's entry under its due hour. */
export const dueAttributes = (jobId: string, dueAt: Date) => ({
  [DUE_AT]: Math.floor(dueAt.getTime() / 1000),
  ...indexEntry('stateLists', lists.jobsDueIn(dueHourOf(dueAt)).of(jobId)),
});

/** A job's late lists (GSI5 and GSI6, as the held ones): `GET /v1/sync_jobs?late=true` reads only these. */
export const LATE_LIST = 'late';
const lateEntries = (job: Pick<SyncJob, 'id' | 'ownerId' | 'resellerStoreId'>) => ({
  ...indexEntry('stateLists', lists.syncJobsIn(job.ownerId, LATE_LIST).of(job.id)),
  ...indexEntry('storeStateLists', lists.storeSyncJobsIn(job.resellerStoreId, LATE_LIST).of(job.id)),
});

/** Parcels with tracking and not cancelled: what ships a job (not only what reached the reseller). */
const shippingEntries = (job: Pick<SyncJob, 'fulfillments'>): FulfillmentEntry[] =>
  Object.values(job.fulfillments).filter(
    (entry) => entry.status !== 'cancelled' && !entry.cancelRequested && entry.trackingNumber !== null,
  );

/**
 * When the job shipped: every unit of its lines is in a parcel with tracking, not cancelled; the last
 * such parcel's own time as its platform gives it (`created_at`; else when it was received). Null
 * while something is left to ship.
 */
export const shippedAtOf = (
  job: Pick<SyncJob, 'fulfillments'>,
  lines: ReadonlyArray<{ resellerLineItemId: string | null; quantity: number }>,
): string | null => {
  const entries = shippingEntries(job);
  if (!entries.length) return null;
  const covered = coveredQuantities(lines, entries.map(coverOf));
  if (lines.length && lines.some((line, i) => (covered[i] ?? 0) < line.quantity)) return null;
  return entries.map(shippedTimeOf).sort().at(-1) ?? null;
};

/** The job's `serviceLevel` as the API shows it (CONTRACT.md §16.2); null: no promise, or not placed. */
export const serviceLevelOfJob = (
  job: SyncJob,
  lines: ReadonlyArray<{ resellerLineItemId: string | null; quantity: number }>,
  at = new Date(),
) => {
  if (!job.dueAt) return null;
  const shippedAt = job.status === 'cancelled' ? null : shippedAtOf(job, lines);
  // Past due by the clock, or by the sweep's (whose clock may run ahead of this one's).
  const pastDue = at.getTime() > Date.parse(job.dueAt) || Boolean(job.lateAt);
  const open = job.status === 'completed';
  return {
    dueAt: job.dueAt,
    shippedAt,
    onTime: shippedAt !== null ? Date.parse(shippedAt) <= Date.parse(job.dueAt) : pastDue && open ? false : null,
    late: open && shippedAt === null && pastDue,
  };
};

/**
 * A job of the late lists that is late still: completed, and no parcel with tracking since (a parcel
 * that ships part of it takes it off the list: the late list is what nobody has started on).
 */
export const isLateNow = (job: SyncJob) =>
  job.status === 'completed' && Boolean(job.lateAt) && shippingEntries(job).length === 0;

/** The jobs with an entry under a due hour: every shard, read whole (the sweep reads only hours past). */
export const jobsDueIn = async (hour: string): Promise<SyncJob[]> => {
  const entries = (
    await Promise.all(
      lists
        .jobsDueIn(hour)
        .all()
        .map((partition) => queryIndex({ index: 'stateLists', partition })),
    )
  ).flat();
  return entries.length ? batchGet(entries.map(keyOf), syncJobFrom) : [];
};

/** What the sweep does with a job it read under an hour (CONTRACT.md §16.2). */
export interface Settlement {
  /** Found late now: its late lists and `lt` set (`sync_job.late`), and `ln`: counted late now on its day. */
  late: boolean;
  /** Filed again under this later hour (a parcel's scan window still open) instead of leaving its hour. */
  nextHour?: string;
  /** Parcels found reported but not scanned within their window: each marked once (`fulfillment.unscanned`). */
  unscanned: string[];
}

const isEmpty = (add: DayFigures) =>
  DAY_COUNTERS.every((name) => !add[name]) && [...add.tracking, ...add.scans].every((n) => !n);

/**
 * The sweep's one write per job read under `hour`: late (its late lists and `lt` set), filed again
 * under a later hour, or off the due hour (shipped and its scans decided, cancelled, …); the
 * unscanned parcels marked. Conditional on the entry it read: a second run, or a run after a
 * restart, finds it gone (or moved) and writes nothing, so each event is recorded once.
 */
export const settleDueJob = async (
  job: SyncJob,
  hour: string,
  settlement: Settlement,
  at: string,
  count?: { day: string; add: DayFigures | null },
) => {
  const update = new UpdateBuilder();
  const pk = update.name(INDEX_KEYS.stateLists.pk);
  update.when(`${pk} = ${update.value('hour', lists.jobsDueIn(hour).of(job.id))}`);
  if (settlement.late) {
    // Counted late now on its day (the day's `lateNow` +1 in the same transaction), until it ships or is cancelled.
    update.setAttributes({ ...lateEntries(job), [LATE_AT]: at, ...(count?.day ? { [LATE_NOW]: count.day } : {}) });
    update.when(`${update.name('status')} = ${update.value('completed', 'completed')}`);
  } else if (settlement.nextHour) update.set(pk, 'next', lists.jobsDueIn(settlement.nextHour).of(job.id));
  else update.remove(pk);
  settlement.unscanned.forEach((id, i) => {
    const entry = `${update.name('fulfillments')}.${update.name(id, `#u${i}`)}`;
    update.set(`${entry}.${update.name('unscannedAt')}`, 'unscannedAt', at);
  });
  const { ConditionExpression = '', ...parts } = update.build(syncJobKey(job.id));
  if (!count?.add || isEmpty(count.add))
    return !((await updateIf({ ...parts, ConditionExpression })) instanceof ConditionFailed);
  // Counted on its supplier's day in the same transaction: once, with the write that takes it off its hour.
  const settled = await transactIf([
    { Update: { TableName: TABLE(), ...parts, ConditionExpression } },
    dayAddition(job.sourceStoreId, count.day, count.add),
  ]);
  return settled === true;
};

/** A supplier's calendar as its store says now (UTC, Monday to Friday when it has no promise left, or is gone). */
export const supplierCalendarOf = async (sourceStoreId: string) => {
  const level = (await getItem(sourceStoreKey(sourceStoreId), sourceStoreFrom))?.serviceLevel;
  return {
    timeZone: level?.timeZone ?? 'UTC',
    workingDays: level?.workingDays ?? DEFAULT_WORKING_DAYS,
    daysOff: level?.daysOff ?? [],
  };
};
export type SupplierCalendar = Awaited<ReturnType<typeof supplierCalendarOf>>;

/** The job's shipping parcels as the scan check sees them: each with its window for a first scan. */
export const scanParcelsOf = (job: Pick<SyncJob, 'fulfillments'>, calendar: SupplierCalendar): ShippedParcel[] =>
  shippingEntries(job).map((entry) => ({
    id: entry.sourceFulfillmentId,
    reported: entry.shipmentStatus !== undefined,
    firstScanAt: entry.firstScanAt ?? null,
    scanDueAt: scanDueAtOf(calendar, new Date(shippedTimeOf(entry))).toISOString(),
  }));

/** The supplier's zone as its store says now (UTC when it has no promise left, or is gone). */
export const supplierZoneOf = async (sourceStoreId: string) => (await supplierCalendarOf(sourceStoreId)).timeZone;

/** The supplier's day (in its zone) a due time falls on: the scorecard's day. */
export const dueDayOf = (dueAt: string, timeZone: string) => localDateOf(new Date(dueAt), timeZone);

/**
 * A supplier's own cancellation of a job with a due time, on its scorecard day (CONTRACT.md §16.3): a
 * job the sweep counted late becomes cancelled by the supplier; one it has not counted yet (its
 * cancellation took it off its due hour) is counted here. One ADD after the move: a crash between the
 * two loses this count, never doubles it (the move is not taken twice).
 */
export const countSourceCancellation = async (job: SyncJob, lines: Parameters<typeof shippedAtOf>[1]) => {
  if (!job.dueAt || job.status !== 'completed') return;
  const add = emptyDay();
  if (job.lateAt) add.late = -1;
  else if (Date.parse(job.dueAt) > Date.now() || shippedAtOf(job, lines) === null) add.due = 1;
  else return;
  add.sourceCancelled = 1;
  const { Update } = dayAddition(job.sourceStoreId, dueDayOf(job.dueAt, await supplierZoneOf(job.sourceStoreId)), add);
  await updateIf(Update);
};

// ---------- late now (CONTRACT.md §16.3, `lateNow`)

const lateNowLeft = (job: SyncJob) => {
  const add = emptyDay();
  add.lateNow = -1;
  return dayAddition(job.sourceStoreId, job.lateNowDay ?? '', add);
};

/**
 * The write that takes a late job off its day's `lateNow` (−1), once: conditional on its `ln` still
 * naming that day, in one transaction with the day's ADD. `index`: a job that shipped also leaves its
 * late lists and is filed under `scanHour` (GSI5), where the sweep checks its parcels' carrier scans as
 * for any shipped job (a late job's late lists held its GSI5 entry).
 */
const leaveLateNow = async (job: SyncJob, scanHour?: string) => {
  const update = new UpdateBuilder();
  const ln = update.name(LATE_NOW);
  update.when(`${ln} = ${update.value('day', job.lateNowDay)}`);
  update.remove(ln);
  if (scanHour) {
    const pk = update.name(INDEX_KEYS.stateLists.pk);
    update.when(`${pk} = ${update.value('lateList', lists.syncJobsIn(job.ownerId, LATE_LIST).of(job.id))}`);
    update.set(pk, 'scanHour', lists.jobsDueIn(scanHour).of(job.id));
    update.remove(update.name(INDEX_KEYS.storeStateLists.pk));
  }
  const { ConditionExpression = '', ...parts } = update.build(syncJobKey(job.id));
  return (
    (await transactIf([{ Update: { TableName: TABLE(), ...parts, ConditionExpression } }, lateNowLeft(job)])) === true
  );
};

/** A cancelled job that was late now leaves the count (its move dropped its late lists already). */
export const countLateCancellation = async (job: SyncJob) => {
  if (job.lateNowDay) await leaveLateNow(job);
};

/**
 * After a parcel of a job is accepted: a late job that has now shipped (CONTRACT.md §16.2) is no longer
 * late now, and its parcels get their scan check, filed under the hour their last window closes (or
 * the current hour, which the sweep has not read yet). Read only for a job that was late now.
 */
export const settleLateShipment = async (jobId: string) => {
  const job = await loadJob(jobId, true);
  if (!job?.lateNowDay || job.status !== 'completed') return;
  if (shippedAtOf(job, (await jobLines(job)) ?? []) === null) return;
  const closes = scanParcelsOf(job, await supplierCalendarOf(job.sourceStoreId))
    .map((parcel) => parcel.scanDueAt)
    .sort()
    .at(-1);
  const hour = [dueHourOf(new Date()), closes ? dueHourOf(new Date(closes)) : ''].sort().at(-1) ?? '';
  // A job whose GSI5 entry is no longer its late list (another list took it) only leaves the count.
  if (!(await leaveLateNow(job, hour))) await leaveLateNow(job);
};
