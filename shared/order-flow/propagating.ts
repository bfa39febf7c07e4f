import { config } from '../core/config.js';
import { now } from '../core/ids.js';
import { logger } from '../core/telemetry.js';
import type { CarrierReport } from '../domain/shipping.js';
import {
  deleteKept,
  type KeptFulfillment,
  keepCarrierReport,
  keepUnlessOlder,
  keptCarrierReports,
  keptFor,
  keptFulfillmentKey,
  readKept,
  type SourceFulfillment,
} from '../entities/kept-fulfillment.js';
import { canonicalOrderId, orderIdSpellings } from '../platforms/port.js';
import { acceptEntry } from './order-entries.js';
import { NO_ENTRY, recordCarrierReport } from './order-parcel-scans.js';
import { jobIdsUnderSupplierOrder } from './order-repository.js';
import type { SyncJob } from './order-sync-job.js';
import { type RecheckMessage, sendFulfillmentMessage } from './propagating-queue.js';

/**
 * Propagation (SPEC 4.8, CONTRACT.md §5, docs/propagation.md): a source store's
 * `fulfillments/create` carries its tracking to the reseller order of the sync job that placed
 * the supplier order. The state of each propagation lives on that job, in `fulfillments`, a map
 * keyed by the source fulfillment id, so every parcel of a split shipment keeps its own state.
 * A fulfillment whose job has not recorded `sourceOrderId` yet is kept (with a TTL) and released
 * when the job completes.
 */

/** The platform's idempotency key: one per source fulfillment, and source stores never share ids. */
export const fulfillmentIdempotencyKey = (sourceStoreId: string, sourceFulfillmentId: string) =>
  `ful:${sourceStoreId}:${sourceFulfillmentId}`;

/** How long a fulfillment is kept waiting for the job that placed its supplier order. */
export const KEEP_SECONDS = 7 * 24 * 3600;
const expiresAt = () => Math.floor(Date.now() / 1000) + KEEP_SECONDS;

// ---------- propagation

/**
 * The state first, then the message: a message always finds its entry, and a failed send fails
 * the webhook, which the platform redelivers.
 */
const propagate = async (
  sourceStoreId: string,
  jobId: string,
  fulfillment: SourceFulfillment,
  receivedAt: string,
  requestId?: string,
) => {
  const { sourceFulfillmentId, tracking } = fulfillment;
  if (!(await acceptEntry(jobId, fulfillment, receivedAt))) {
    logger.info('nothing to send for this fulfillment (delivered as it is, ignored, older, or its job is gone)', {
      jobId,
      sourceFulfillmentId,
    });
    return;
  }
  await applyKeptReports(sourceStoreId, jobId, fulfillment);
  await sendFulfillmentMessage({ jobId, sourceFulfillmentId, tracking, requestId });
};

/** A carrier's reports kept for this parcel before the job had its entry (`keepReport`), applied to it now. */
const applyKeptReports = async (sourceStoreId: string, jobId: string, fulfillment: SourceFulfillment) => {
  const { sourceOrderId, sourceFulfillmentId } = fulfillment;
  const reports = await keptCarrierReports(sourceStoreId, canonicalOrderId(sourceOrderId), sourceFulfillmentId);
  for (const report of reports) await recordCarrierReport(jobId, sourceFulfillmentId, report);
  if (reports.length)
    logger.info('kept carrier reports applied', { jobId, sourceFulfillmentId, count: reports.length });
};

/** Jobs of a source store that placed this supplier order (GSI2, written on completion), under any id spelling. */
export const jobIdsBySupplierOrder = (sourceStoreId: string, sourceOrderId: string) =>
  jobIdsUnderSupplierOrder(sourceStoreId, orderIdSpellings(sourceOrderId));

/**
 * Keeps a fulfillment that matches no job yet: the job's worker releases it when it records the
 * supplier order. One case is left: the job completed just before this was kept, while the lookup
 * index (GSI2) did not show it yet, and its worker read the kept fulfillments before this write.
 * A delayed recheck covers it: by then GSI2 shows any completion from before the keep. So the
 * cost of the race falls on kept fulfillments, not on every order.
 */
const keepFulfillment = async (sourceStoreId: string, fulfillment: SourceFulfillment, receivedAt: string) => {
  const { sourceOrderId, sourceFulfillmentId } = fulfillment;
  const orderId = canonicalOrderId(sourceOrderId);
  const kept: KeptFulfillment = {
    ...fulfillment,
    sourceStoreId,
    sourceOrderId: orderId,
    receivedAt,
    expiresAt: expiresAt(),
  };
  // An update kept before its job is known replaces the version kept, unless it is older.
  if (!(await keepUnlessOlder(kept))) {
    logger.info('an older version of a kept fulfillment changes nothing', { sourceFulfillmentId });
    return;
  }
  await sendFulfillmentMessage(
    { recheck: { sourceStoreId, sourceOrderId: orderId, sourceFulfillmentId } },
    config.keptRecheckSeconds(),
  );
  logger.info('fulfillment kept until its job records the supplier order', {
    sourceStoreId,
    sourceOrderId,
    sourceFulfillmentId,
  });
};

/** The delayed second look at a kept fulfillment (see keepFulfillment). */
export const recheckKeptFulfillment = async ({ recheck }: RecheckMessage) => {
  const key = keptFulfillmentKey(recheck);
  const kept = await readKept(key);
  if (!kept) return; // released meanwhile
  const jobIds = await jobIdsBySupplierOrder(recheck.sourceStoreId, recheck.sourceOrderId);
  if (!jobIds.length) return; // still no job: its worker will release it
  for (const jobId of jobIds) await propagate(recheck.sourceStoreId, jobId, kept, kept.receivedAt);
  await deleteKept(key);
};

/**
 * `fulfillments/create` from verified source stores (every store under the shop domain whose
 * secret verified: resellers may share a supplier). Each store whose job placed that order gets
 * its own propagation; if none has one yet, the fulfillment is kept for each of them.
 */
export const routeFulfillment = async (
  sourceStores: { id: string }[],
  fulfillment: SourceFulfillment,
  requestId?: string,
) => {
  const { sourceOrderId } = fulfillment;
  const receivedAt = now();
  const matches = await Promise.all(
    sourceStores.map(async (store) => ({ store, jobIds: await jobIdsBySupplierOrder(store.id, sourceOrderId) })),
  );

  if (matches.some((match) => match.jobIds.length)) {
    for (const { store, jobIds } of matches) {
      for (const jobId of jobIds) await propagate(store.id, jobId, fulfillment, receivedAt, requestId);
    }
    return;
  }
  for (const { store } of matches) await keepFulfillment(store.id, fulfillment, receivedAt);
};

/**
 * A carrier's report on a supplier's parcel (`fulfillment_events/create`, CONTRACT.md §16.2): its
 * status and first scan on the parcel's entry, in every job of the stores that placed the order.
 * A report of a parcel no job has an entry for yet (the event came before the parcel's own webhook,
 * or before its job recorded the supplier order) is kept, as early fulfillments are, for
 * `KEEP_SECONDS`: the parcel's acceptance applies it (`applyKeptReports`). After keeping it, the
 * job is tried once more, so a parcel accepted between the first try and the keep still gets it.
 */
export const routeCarrierReport = async (
  sourceStores: { id: string }[],
  parcel: { sourceOrderId: string; sourceFulfillmentId: string },
  report: CarrierReport,
) => {
  const record = async (storeId: string) => {
    const jobIds = await jobIdsBySupplierOrder(storeId, parcel.sourceOrderId);
    const answers = [];
    for (const jobId of jobIds) answers.push(await recordCarrierReport(jobId, parcel.sourceFulfillmentId, report));
    return { storeId, known: jobIds.length > 0, taken: answers.filter((a) => a === true).length, answers };
  };
  const tries = await Promise.all(sourceStores.map((store) => record(store.id)));
  // As for fulfillments: kept under every store when none knows the order, else where a job lacks the parcel.
  const anyKnown = tries.some((one) => one.known);
  const unknown = tries.filter((one) => (anyKnown ? one.answers.includes(NO_ENTRY) : true));
  let recorded = tries.reduce((sum, one) => sum + one.taken, 0);
  for (const { storeId } of unknown) {
    const sourceOrderId = canonicalOrderId(parcel.sourceOrderId);
    await keepCarrierReport({ ...parcel, sourceStoreId: storeId, sourceOrderId }, report, KEEP_SECONDS);
    recorded += (await record(storeId)).taken;
    logger.info('carrier report kept until its parcel is known', { sourceFulfillmentId: parcel.sourceFulfillmentId });
  }
  logger.info('carrier report taken', { sourceFulfillmentId: parcel.sourceFulfillmentId, recorded });
};

/**
 * Called by the sync worker right after a job records its `sourceOrderId`: sends the fulfillments
 * kept for that supplier order to the job's reseller order and deletes them. Never throws: the order
 * is placed and the job completed whatever happens here; a kept fulfillment that could not be
 * released stays kept, its recheck or a redelivery of its webhook finds the job through GSI2
 * (docs/propagation.md).
 */
export const releaseKeptFulfillments = async (job: Pick<SyncJob, 'id' | 'sourceStoreId' | 'sourceOrderId'>) => {
  if (!job.sourceOrderId) return;
  try {
    const kept = await keptFor(job.sourceStoreId, canonicalOrderId(job.sourceOrderId));
    for (const item of kept) {
      await propagate(job.sourceStoreId, job.id, item, item.receivedAt);
      await deleteKept(keptFulfillmentKey(item));
    }
    if (kept.length) logger.info('kept fulfillments released', { jobId: job.id, count: kept.length });
  } catch (error) {
    logger.error('releasing kept fulfillments failed; they stay kept', { jobId: job.id, error: (error as Error).name });
  }
};
