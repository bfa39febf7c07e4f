import { createHash } from 'node:crypto';
import { withRereads } from '../core/concurrency.js';
import { now } from '../core/ids.js';
import { BUSINESS_METRICS, countMetric, logger } from '../core/telemetry.js';
import {
  type CarrierProgress,
  type CarrierReport,
  coveredQuantities,
  DAY_COUNTERS,
  type DayFigures,
  DEFAULT_WORKING_DAYS,
  emptyDay,
  localDateOf,
  planShipment,
  progressAfter,
  type ShipmentPlan,
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
import type { SourceFulfillment } from '../entities/kept-fulfillment.js';
import { dayAddition } from '../entities/scorecard-day.js';
import { sourceStoreFrom, sourceStoreKey } from '../entities/store.js';
import type { Tracking } from '../platforms/port.js';
import {
  canMoveEntry,
  ENTRY_MOVES,
  type JobLine,
  JobUpdate,
  jobLines,
  type Lost,
  loadJob,
  updateJob,
  whenClaimable,
} from './order-repository.js';
import {
  coverOf,
  DUE_AT,
  type FulfillmentEntry,
  isPropagating,
  LATE_AT,
  LATE_NOW,
  propagationIndex,
  type SyncJob,
  shippedTimeOf,
  supplierOrderChangePending,
  syncJobFrom,
  syncJobKey,
  TAGGED_ATTRIBUTE,
  WAIT_ATTRIBUTES,
} from './order-sync-job.js';

/**
 * A parcel's carrier progress (CONTRACT.md §16.2): `shipmentStatus` and `firstScanAt` on its entry
 * in the job item, as `fulfillments/update`, `fulfillment_events/create` and the poll report them.
 * A report that only moves the carrier's status is one write of the entry's two fields (no message,
 * no tracking sent again: the reseller is not told twice); a status never moves back.
 */

/** The entry's progress now, as a report compares it. */
const progressOf = (entry: FulfillmentEntry): CarrierProgress => ({
  ...(entry.shipmentStatus ? { shipmentStatus: entry.shipmentStatus } : {}),
  ...(entry.firstScanAt ? { firstScanAt: entry.firstScanAt } : {}),
});

/** What a report changes on the entry; undefined when nothing (no report, or nothing new). */
export const progressFrom = (entry: FulfillmentEntry | undefined, report: CarrierReport | null | undefined) =>
  report ? progressAfter(entry ? progressOf(entry) : {}, report) : undefined;

/** The condition that the entry's progress is still what was read (a concurrent report re-reads). */
export const sameProgress = (update: JobUpdate, entry: FulfillmentEntry) =>
  (['shipmentStatus', 'firstScanAt'] as const)
    .map((field) => {
      const read = entry[field];
      return read == null
        ? `attribute_not_exists(${update.field(field)})`
        : `${update.field(field)} = ${update.value(`read_${field}`, read)}`;
    })
    .join(' AND ');

/** The write of a progress already computed against `entry`: the two fields, on condition. */
export const progressUpdate = (sourceFulfillmentId: string, entry: FulfillmentEntry, progress: CarrierProgress) => {
  const update = new JobUpdate(sourceFulfillmentId).setFields({ ...progress });
  update.when(`attribute_exists(${update.path})`);
  update.when(sameProgress(update, entry));
  return update;
};

/** What `recordCarrierReport` answers when the job has no entry for the parcel (or is gone). */
export const NO_ENTRY = 'no entry';

/**
 * A carrier's report on one parcel of the job (a fulfillment event): applied to its entry, unless it
 * changes nothing. Answers whether it was written; `NO_ENTRY` when the job or its entry is not there (an
 * event ahead of its fulfillment: the caller keeps it for the parcel's acceptance, propagating.ts).
 */
export const recordCarrierReport = (jobId: string, sourceFulfillmentId: string, report: CarrierReport) =>
  withRereads(
    () => loadJob(jobId, true),
    async (job) => {
      const entry = job?.fulfillments[sourceFulfillmentId];
      const progress = progressFrom(entry, report);
      if (!entry) return NO_ENTRY;
      if (!progress) return false;
      const written = await updateJob(jobId, progressUpdate(sourceFulfillmentId, entry, progress));
      return written === true ? true : written;
    },
    `carrier progress of job ${jobId}`,
  );

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

/**
 * The state of each propagation, on its job (docs/propagation.md): the `fulfillments` map, one
 * entry per source fulfillment. Every write is conditional on what was read, and re-read when
 * someone else wrote first. While an entry is on its way (`pending`, `failed`) its job is among
 * GSI3's propagating jobs (`propagationIndex`, order-sync-job.ts), so the reconciler finds an entry whose message
 * was lost; the write that ends the last open entry takes it out again.
 */

/** A job with its fulfillment entries, read consistently (every write below is conditional on what was read). */
export const loadJobWithFulfillments = (jobId: string) => loadJob(jobId, true);

/**
 * The job and the entry a fulfillment message names (the worker's and the dead-letter handler's
 * first read); undefined, logged, when there is nothing (left) to propagate.
 */
/** One propagation in hand: its job and its entry, as read. */
export interface Propagation {
  job: SyncJob;
  entry: FulfillmentEntry;
}

export const loadPropagation = async (message: {
  jobId: string;
  sourceFulfillmentId: string;
}): Promise<Propagation | undefined> => {
  const job = await loadJobWithFulfillments(message.jobId);
  const entry: FulfillmentEntry | undefined = job?.fulfillments[message.sourceFulfillmentId];
  if (!job || !entry) {
    logger.warn('fulfillment message without its job entry dropped', {
      jobId: message.jobId,
      sourceFulfillmentId: message.sourceFulfillmentId,
    });
    return undefined;
  }
  // Delivered with a tracking older than the entry's (an update that met the create in flight): applied now.
  const behind = entry.appliedTracking !== undefined && entry.appliedTracking !== trackingKey(trackingOf(entry));
  if (entry.status === 'delivered' && !behind) {
    logger.info('fulfillment already delivered; message dropped', {
      jobId: job.id,
      sourceFulfillmentId: message.sourceFulfillmentId,
    });
    return undefined;
  }
  return { job, entry };
};

/**
 * The create of the reseller's fulfillment claimed by one message, where the platform takes no key
 * (Shopify): two messages of one parcel (its create and its update, met in flight) would each make one.
 * Conditional on the entry having no reseller fulfillment yet, and claimable (`whenClaimable`). True
 * when this message makes it.
 */
export const claimCreate = (jobId: string, sourceFulfillmentId: string, messageId: string, leaseSeconds: number) => {
  const update = new JobUpdate(sourceFulfillmentId).setFields({ createdBy: messageId, createClaimedAt: now() });
  const made = update.field('resellerFulfillmentId');
  update.when(`(attribute_not_exists(${made}) OR attribute_type(${made}, ${update.value('null', 'NULL')}))`);
  const by = update.field('createdBy');
  whenClaimable(update, { claim: by, by, at: update.field('createClaimedAt') }, messageId, leaseSeconds);
  return updated(jobId, update);
};

/** The tracking an entry carries, as a message sends it (for a re-send). */
export const trackingOf = (entry: FulfillmentEntry): Tracking => ({
  company: entry.trackingCompany,
  number: entry.trackingNumber,
  numbers: entry.trackingNumbers,
  url: entry.trackingUrl,
  urls: entry.trackingUrls ?? (entry.trackingUrl ? [entry.trackingUrl] : []),
});

const OUTCOME_MOVES = { delivered: 'deliver', cancelled: 'cancel', failed: 'fail', dead: 'kill' } as const;

/** Runs the update: true, or the race it lost (the job it met, for the next try). */
const tryUpdate = (jobId: string, update: JobUpdate) => updateJob(jobId, update);

/** A write of the job's entries, tried again with the job each lost race met (core/concurrency.ts). */
const withEntryRereads = <T>(
  jobId: string,
  first: SyncJob | undefined,
  write: (job: SyncJob | undefined) => Promise<T | Lost>,
) => withRereads(() => loadJobWithFulfillments(jobId), write, `fulfillment state of job ${jobId}`, first);

/** One try of a write: whether it ran (a lost race leaves it to the reconciler or the next message). */
const updated = async (jobId: string, update: JobUpdate) => (await tryUpdate(jobId, update)) === true;

const trackingFields = (tracking: Tracking) => ({
  trackingCompany: tracking.company,
  trackingNumber: tracking.number ?? tracking.numbers[0] ?? null,
  trackingNumbers: tracking.numbers.length ? tracking.numbers : tracking.number ? [tracking.number] : [],
  trackingUrl: tracking.url ?? tracking.urls[0] ?? null,
  trackingUrls: tracking.urls.length ? tracking.urls : tracking.url ? [tracking.url] : [],
});

/** A completed job is among the propagating jobs while an entry is on its way; never an open one (it has its own). */
const propagating = (job: SyncJob) =>
  job.status === 'completed' ? propagationIndex(job, true) : { set: {}, remove: [] };

// ---------- writes

/** A short fingerprint of a tracking (company, numbers, URLs): the reseller gets one update per distinct one. */
export const trackingKey = (tracking: Tracking) =>
  createHash('sha256')
    .update(
      JSON.stringify([
        tracking.company,
        trackingFields(tracking).trackingNumbers,
        trackingFields(tracking).trackingUrls,
      ]),
    )
    .digest('base64url')
    .slice(0, 16);

/** What a delivered entry's reseller fulfillment has: recorded by each propagation (older entries: what they hold). */
const appliedTracking = (entry: FulfillmentEntry) => entry.appliedTracking ?? trackingKey(trackingOf(entry));

/**
 * Whether an entry's parcel is spoken for on the reseller's order: accepted there, or on its way,
 * and not being cancelled. A new parcel ships only what these leave (CONTRACT.md §10.2).
 */
const holdsItems = (entry: FulfillmentEntry) =>
  !entry.cancelRequested && (entry.status === 'pending' || entry.status === 'failed' || entry.status === 'delivered');

/**
 * What a new parcel of the job ships: the job's lines as the stored order and the placed order say
 * (`lines`, undefined when the order cannot be read), less what the job's other parcels hold.
 */
const planParcel = (job: SyncJob, lines: JobLine[] | undefined, fulfillment: SourceFulfillment): ShipmentPlan => {
  if (!lines) return { kind: 'whole' };
  const others = Object.values(job.fulfillments).filter(
    (entry) => entry.sourceFulfillmentId !== fulfillment.sourceFulfillmentId && holdsItems(entry),
  );
  const held = coveredQuantities(lines, others.map(coverOf));
  const shipment = lines.map((line, i) => ({ ...line, fulfilledQuantity: held[i] }));
  // Named lines map to the job's through the supplier's ids; a job placed without them (an order
  // from before they were kept, a platform that does not answer them) ships the rest of its items.
  const named = lines.some((line) => line.sourceLineItemId !== null) ? fulfillment.lines : null;
  return planShipment(shipment, named);
};

/** Which of two `updated_at` comes later; a version without one is taken as the latest. */
const isOlder = (updatedAt: string | null, than: string | undefined) =>
  updatedAt !== null && than !== undefined && updatedAt < than;

/**
 * Takes a source fulfillment, as its webhook (`fulfillments/create` or `/update`) or a release of
 * a kept one tells it (docs/propagation.md). Answers whether there is work for the worker, which
 * the caller then sends it: a new parcel to create (its lines planned now, against what the job's
 * other parcels hold); a redelivery that re-arms an entry not delivered (a dead one too); an update
 * with new tracking or a cancellation of a parcel the reseller has. Writes nothing, and answers
 * false, for an update older than the version applied, for a parcel with nothing left to ship
 * (recorded once as `ignored`, with the reason), and for a redelivery of what is delivered as it
 * is. The map is created by the first fulfillment of the job.
 */
export const acceptEntry = async (jobId: string, fulfillment: SourceFulfillment, receivedAt: string) => {
  let lines: JobLine[] | undefined | null = null;
  // The job's lines are read once, whatever the number of lost races.
  const linesOf = async (job: SyncJob) => {
    if (lines === null) lines = await jobLines(job);
    return lines;
  };
  let lateNow = false;
  const accepted = await withEntryRereads(jobId, undefined, async (job) => {
    if (!job) return false;
    lateNow = Boolean(job.lateNowDay);
    const current: FulfillmentEntry | undefined = job.fulfillments[fulfillment.sourceFulfillmentId];
    return current
      ? acceptAgain(jobId, job, current, fulfillment)
      : acceptNewParcel(jobId, job, fulfillment, receivedAt, linesOf);
  });
  // A late job this parcel may have shipped (CONTRACT.md §16.2–16.3): no longer late now, its scans checked.
  if (accepted === true && lateNow) await settleLateShipment(jobId);
  return accepted;
};

/** A parcel the job has no entry for: its entry, its lines planned against what the other parcels hold. */
const acceptNewParcel = async (
  jobId: string,
  job: SyncJob,
  fulfillment: SourceFulfillment,
  receivedAt: string,
  linesOf: (job: SyncJob) => Promise<JobLine[] | undefined>,
) => {
  // A parcel voided before it ever reached the service shipped nothing: nothing to pass on.
  if (fulfillment.cancelled) return false;
  const { sourceFulfillmentId } = fulfillment;
  const plan = planParcel(job, await linesOf(job), fulfillment);
  const entry = newEntry(fulfillment, plan, receivedAt);
  const update = new JobUpdate(sourceFulfillmentId);
  if (plan.kind !== 'ignored') update.index(propagating(job));
  if (!Object.keys(job.fulfillments).length) {
    update.set('#fulfillments', 'map', { [sourceFulfillmentId]: entry });
    update.when('attribute_exists(PK) AND attribute_not_exists(#fulfillments)');
  } else {
    update.set(update.path, 'entry', entry);
    update.when(`attribute_exists(#fulfillments) AND attribute_not_exists(${update.path})`);
    // Planned against the parcels read: one added meanwhile may hold the same items, so plan again.
    if (plan.kind !== 'whole') update.when(sameEntryCount(update, Object.keys(job.fulfillments).length));
  }
  const written = await tryUpdate(jobId, update);
  if (written !== true) return written;
  if (plan.kind === 'ignored') logger.info('fulfillment has nothing of the job left to ship', { reason: plan.reason });
  return plan.kind !== 'ignored';
};

/** A new parcel's entry: `pending` with its planned lines, or `ignored` with the reason it ships nothing. */
const newEntry = (fulfillment: SourceFulfillment, plan: ShipmentPlan, receivedAt: string): FulfillmentEntry => ({
  sourceFulfillmentId: fulfillment.sourceFulfillmentId,
  status: plan.kind === 'ignored' ? 'ignored' : ENTRY_MOVES.accept.to,
  ...trackingFields(fulfillment.tracking),
  resellerFulfillmentId: null,
  attempts: 0,
  errorMessage: plan.kind === 'ignored' ? plan.reason : null,
  receivedAt,
  updatedAt: now(),
  deliveredAt: null,
  ...(plan.kind === 'lines'
    ? { lines: plan.lines.map((l) => ({ id: l.resellerLineItemId, quantity: l.quantity })) }
    : {}),
  ...(fulfillment.updatedAt ? { sourceUpdatedAt: fulfillment.updatedAt } : {}),
  ...(fulfillment.createdAt ? { sourceCreatedAt: fulfillment.createdAt } : {}),
  ...progressFrom(undefined, fulfillment.report),
});

/**
 * The same fulfillment again: a redelivery, or an update. One older than the version applied, and
 * one of a parcel that has ended for good (ignored, cancelled), change nothing.
 */
const acceptAgain = async (jobId: string, job: SyncJob, current: FulfillmentEntry, fulfillment: SourceFulfillment) => {
  const { tracking } = fulfillment;
  if (isOlder(fulfillment.updatedAt, current.sourceUpdatedAt)) return false;
  if (!canMoveEntry('accept', current.status)) return false;
  const delivered = current.status === 'delivered';
  const cancel = fulfillment.cancelled || current.cancelRequested === true;
  const progress = progressFrom(current, fulfillment.report);
  // Delivered as it is now: the same tracking, and no cancellation to make. Only the carrier's
  // progress, if it moved, is written: nothing to send (CONTRACT.md §16.2).
  if (delivered && !cancel && appliedTracking(current) === trackingKey(tracking)) {
    if (!progress) return false;
    const written = await tryUpdate(jobId, progressUpdate(fulfillment.sourceFulfillmentId, current, progress));
    return written === true ? false : written;
  }
  const update = new JobUpdate(fulfillment.sourceFulfillmentId);
  // Attempts, receipt time, lines and any reseller id stay: this is the same fulfillment.
  update.index(propagating(job)).setFields({
    status: ENTRY_MOVES.accept.to,
    errorMessage: null,
    updatedAt: now(),
    ...trackingFields(tracking),
    ...(fulfillment.updatedAt ? { sourceUpdatedAt: fulfillment.updatedAt } : {}),
    ...(fulfillment.createdAt && !current.sourceCreatedAt ? { sourceCreatedAt: fulfillment.createdAt } : {}),
    ...(fulfillment.cancelled ? { cancelRequested: true } : {}),
    ...progress,
  });
  if (progress) update.when(sameProgress(update, current));
  update.when(
    delivered
      ? `${update.field('status')} = ${update.value('readStatus', 'delivered')}`
      : `${update.field('status')} <> ${update.value('delivered', 'delivered')}`,
  );
  // The webhook received again: a fresh start for the reconciler and the throttling budget.
  update.remove(...WAIT_ATTRIBUTES.map((field) => update.field(field)));
  return tryUpdate(jobId, update);
};

export type FulfillmentOutcome =
  /** The reseller's fulfillment is as the entry says: made, or its tracking updated (`tracking`: its key). */
  | { status: 'delivered'; resellerFulfillmentId: string; tracking: string }
  /** The reseller's fulfillment is cancelled (or never existed) as the supplier cancelled its parcel. */
  | { status: 'cancelled' }
  | { status: 'failed'; errorMessage: string }
  | { status: 'dead'; errorMessage: string; attempted: boolean };

/**
 * The worker's (the dead-letter handler's, the reconciler's) move of one entry. Never once it is
 * delivered: `delivered` is final, so a late or duplicate message never turns a delivered
 * fulfillment back into a failure. An outcome that ends the last entry on its way also takes the
 * job out of the propagating jobs, on condition that the other entries are still ended. Answers
 * whether the entry moved. `job`: the job as the caller just read it, if it did.
 */
export const moveEntry = (
  jobId: string,
  sourceFulfillmentId: string,
  outcome: FulfillmentOutcome,
  job?: SyncJob,
): Promise<boolean> =>
  withEntryRereads(jobId, job, async (current) => {
    const entry = current?.fulfillments[sourceFulfillmentId];
    const move = OUTCOME_MOVES[outcome.status];
    if (!current || !entry || !canMoveEntry(move, entry.status)) return false;
    const at = now();
    const fields: Partial<FulfillmentEntry> = { status: ENTRY_MOVES[move].to, updatedAt: at };
    if (outcome.status === 'delivered') {
      Object.assign(fields, {
        resellerFulfillmentId: outcome.resellerFulfillmentId,
        deliveredAt: entry.deliveredAt ?? at,
        errorMessage: null,
        appliedTracking: outcome.tracking,
      });
    } else if (outcome.status === 'cancelled') {
      fields.errorMessage = null;
    } else {
      fields.errorMessage = outcome.errorMessage;
    }
    const update = new JobUpdate(sourceFulfillmentId).setFields(fields);
    if (outcome.status !== 'dead' || outcome.attempted) {
      update.set(update.field('attempts'), 'attempts', entry.attempts + 1);
      update.when(`${update.field('attempts')} = ${update.value('readAttempts', entry.attempts)}`);
    }
    // An attempt that reached an outcome is progress; any wait or throttled run is over.
    update.remove(...WAIT_ATTRIBUTES.map((field) => update.field(field)));
    update.when(`${update.field('status')} = ${update.value('readStatus', entry.status)}`);
    const others = Object.values(current.fulfillments).filter((e) => e.sourceFulfillmentId !== sourceFulfillmentId);
    // The last entry on its way ends: the job leaves the propagating set, unless a change of its supplier
    // order is on its way too (the reconciler watches those there as well).
    const last = !others.some(isPropagating) && !supplierOrderChangePending(current);
    if (outcome.status !== 'failed' && current.status === 'completed' && last) {
      update.index(propagationIndex(current, false));
      for (const [i, other] of others.entries()) {
        update.when(`${update.other(other.sourceFulfillmentId)}.#status = ${update.value(`other${i}`, other.status)}`);
      }
      update.when(sameEntryCount(update, others.length + 1));
    }
    // An entry that had ended (dead) and fails again, from a message that was still live: it is on
    // its way again, so the job goes back among the propagating jobs, where the reconciler watches it.
    if (outcome.status === 'failed' && current.status === 'completed' && !isPropagating(entry)) {
      if (!others.some(isPropagating)) update.index(propagationIndex(current, true));
    }
    const written = await tryUpdate(jobId, update);
    if (written !== true) return written;
    if (outcome.status === 'delivered') countMetric(BUSINESS_METRICS.fulfillmentsPropagated);
    if (outcome.status === 'dead') countMetric(BUSINESS_METRICS.fulfillmentsDead);
    return true;
  });

/**
 * A throttled call (429): the entry waits `delaySeconds` for its fresh message (its lease runs from
 * there), and the first throttled call of a run starts the throttling budget. False when the entry
 * moved meanwhile (delivered, say).
 */
export const deferEntry = (job: SyncJob, entry: FulfillmentEntry, delaySeconds: number, startedAt: string) => {
  if (!canMoveEntry('defer', entry.status)) return Promise.resolve(false);
  const update = new JobUpdate(entry.sourceFulfillmentId).setFields({
    waitUntil: new Date(Date.now() + delaySeconds * 1000).toISOString(),
    throttledSince: entry.throttledSince ?? startedAt,
  });
  update.remove(update.field('resends'));
  update.when(`${update.field('status')} = ${update.value('readStatus', entry.status)}`);
  return updated(job.id, update);
};

/**
 * The reconciler's re-send of an entry that stayed past its lease: `pending` again, one more
 * re-send counted, on condition that it has not moved since the reconciler read it.
 */
export const resendEntry = (job: SyncJob, entry: FulfillmentEntry) => {
  if (!canMoveEntry('resend', entry.status)) return Promise.resolve(false);
  const update = new JobUpdate(entry.sourceFulfillmentId).setFields({
    status: ENTRY_MOVES.resend.to,
    updatedAt: now(),
    resends: (entry.resends ?? 0) + 1,
  });
  update.remove(update.field('waitUntil'));
  update.when(`${update.field('updatedAt')} = ${update.value('readUpdatedAt', entry.updatedAt)}`);
  update.when(`${update.field('status')} = ${update.value('readStatus', entry.status)}`);
  return updated(job.id, update);
};

/**
 * A completed job still among the propagating jobs with no entry on its way (left there by a lost
 * race): taken out, on condition that its entries are still as read.
 */
export const leavePropagating = (job: SyncJob) => {
  const entries = Object.values(job.fulfillments);
  const update = JobUpdate.ofEntries().index(propagationIndex(job, false));
  update.name('status');
  for (const [i, entry] of entries.entries()) {
    update.when(`${update.other(entry.sourceFulfillmentId)}.#status = ${update.value(`entry${i}`, entry.status)}`);
  }
  // A job watched for an update of its supplier order has no entry at all (no map until the first).
  update.when(entries.length ? sameEntryCount(update, entries.length) : 'attribute_not_exists(#fulfillments)');
  // Nothing else was put on its way since the read: no cancellation asked for, no edits sent.
  const edits = job.orderEdits?.updatedAt;
  update.when(
    edits === undefined
      ? `attribute_not_exists(${update.name('orderEdits')})`
      : `${update.name('orderEdits')}.${update.name('updatedAt')} = ${update.value('edits', edits)}`,
  );
  update.when(
    `(attribute_not_exists(${update.name('cancellation')}) OR ` +
      `${update.name('cancellation')}.#status <> ${update.value('requested', 'requested')})`,
  );
  return updated(job.id, update);
};

/**
 * No entry was added since the job was read: a fulfillment accepted meanwhile is on its way, so the
 * job must stay among the propagating jobs (the reconciler's safety net for its message).
 */
const sameEntryCount = (update: JobUpdate, count: number) => `size(#fulfillments) = ${update.value('entries', count)}`;

/**
 * The reseller order's routed tag recorded on its job (CONTRACT.md §12.5): `tagged` true once written, false
 * once given up on. Once: a second outcome (a message delivered twice) changes nothing. False when the
 * job is gone or already says.
 */
export const recordTagged = (jobId: string, tagged: boolean) => {
  const update = new JobUpdate().setAttributes({ [TAGGED_ATTRIBUTE]: tagged });
  update.when(`attribute_exists(PK) AND attribute_not_exists(${update.name(TAGGED_ATTRIBUTE)})`);
  return updated(jobId, update);
};
