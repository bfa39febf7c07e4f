import { withRereads } from '../core/concurrency.js';
import { type CarrierProgress, type CarrierReport, progressAfter } from '../domain/shipping.js';
import type { FulfillmentEntry } from './order-fulfillment-entry.js';
import { loadJob, updateJob } from './order-repository.js';
import { JobUpdate } from './order-transitions.js';

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
