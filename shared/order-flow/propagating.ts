import { config } from '../core/config.js';
import { now } from '../core/ids.js';
import { logger } from '../core/telemetry.js';
import type { CarrierReport } from '../domain/shipment.js';
import { lookups } from '../dynamo/keys.js';
import { getItem, queryIndex } from '../dynamo/table.js';
import {
  deleteKept,
  type KeptFulfillment,
  keepUnlessOlder,
  keptFor,
  keptFulfillmentFrom,
  keptFulfillmentKey,
  type SourceFulfillment,
} from '../entities/kept-fulfillment.js';
import { canonicalOrderId, orderIdSpellings } from '../platforms/port.js';
import { acceptEntry } from './order-entries.js';
import { recordCarrierReport } from './order-parcel-scans.js';
import { type SyncJob, syncJobIdOf } from './order-sync-job.js';
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
const propagate = async (jobId: string, fulfillment: SourceFulfillment, receivedAt: string, requestId?: string) => {
  const { sourceFulfillmentId, tracking } = fulfillment;
  if (!(await acceptEntry(jobId, fulfillment, receivedAt))) {
    logger.info('nothing to send for this fulfillment (delivered as it is, ignored, older, or its job is gone)', {
      jobId,
      sourceFulfillmentId,
    });
    return;
  }
  await sendFulfillmentMessage({ jobId, sourceFulfillmentId, tracking, requestId });
};

/** Jobs of a source store that placed this supplier order (GSI2, written on completion), under any id spelling. */
export const jobIdsBySupplierOrder = async (sourceStoreId: string, sourceOrderId: string) => {
  const pages = await Promise.all(
    orderIdSpellings(sourceOrderId).map((form) =>
      queryIndex({
        index: 'lookups',
        partition: lookups.sourceOrder(sourceStoreId, form),
        prefix: lookups.sourceOrderJobs,
        forward: true,
      }),
    ),
  );
  return [...new Set(pages.flatMap((entries) => (entries ?? []).map(syncJobIdOf)))];
};

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
  const kept = await getItem(key, keptFulfillmentFrom, true);
  if (!kept) return; // released meanwhile
  const jobIds = await jobIdsBySupplierOrder(recheck.sourceStoreId, recheck.sourceOrderId);
  if (!jobIds.length) return; // still no job: its worker will release it
  for (const jobId of jobIds) await propagate(jobId, kept, kept.receivedAt);
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
    for (const { jobIds } of matches) {
      for (const jobId of jobIds) await propagate(jobId, fulfillment, receivedAt, requestId);
    }
    return;
  }
  for (const { store } of matches) await keepFulfillment(store.id, fulfillment, receivedAt);
};

/**
 * A carrier's report on a supplier's parcel (`fulfillment_events/create`, CONTRACT.md §16.2): its
 * status and first scan on the parcel's entry, in every job of the stores that placed the order.
 * A report of a parcel not known yet is not kept: the parcel's own payload carries its status.
 */
export const routeCarrierReport = async (
  sourceStores: { id: string }[],
  parcel: { sourceOrderId: string; sourceFulfillmentId: string },
  report: CarrierReport,
) => {
  let recorded = 0;
  for (const store of sourceStores) {
    for (const jobId of await jobIdsBySupplierOrder(store.id, parcel.sourceOrderId)) {
      if (await recordCarrierReport(jobId, parcel.sourceFulfillmentId, report)) recorded += 1;
    }
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
      await propagate(job.id, item, item.receivedAt);
      await deleteKept(keptFulfillmentKey(item));
    }
    if (kept.length) logger.info('kept fulfillments released', { jobId: job.id, count: kept.length });
  } catch (error) {
    logger.error('releasing kept fulfillments failed; they stay kept', { jobId: job.id, error: (error as Error).name });
  }
};
