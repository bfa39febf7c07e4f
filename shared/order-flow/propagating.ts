import { MAX_DELAY_SECONDS } from '../aws/batch.js';
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
import { canonicalOrderId, orderIdSpellings, type Tracking } from '../platforms/port.js';
import { type Fields, isText, parseWith, sendWork, type WorkMessage, workFields } from '../work/runner.js';
import { acceptEntry, NO_ENTRY, recordCarrierReport } from './order-entries.js';
import { jobIdsUnderSupplierOrder, jobItems } from './order-repository.js';
import type { SyncJob } from './order-sync-job.js';
import { readTagMessage, type TagMessage } from './tagging.js';

/**
 * What a fulfillment-queue message carries: which job's reseller order gets which source
 * fulfillment, with its tracking. `redrives` counts the times the dead-letter handler has put it
 * back on the queue after a reseller outage outlasted `maxReceiveCount` receives.
 */
export interface FulfillmentMessage extends WorkMessage {
  jobId: string;
  sourceFulfillmentId: string;
  tracking: Tracking;
  redrives?: number;
  /** The `request_id` of the fulfillments webhook that sent it, for the worker's log lines; optional. */
  requestId?: string;
  /** Epoch ms before which it is not to be delivered: a 429's wait longer than one message delay. */
  notBefore?: number;
}

/**
 * A second look at a kept fulfillment, a while after it was kept: if its job completed around the
 * moment it was kept (the job's lookup index lags behind the completion), it is sent now.
 */
export interface RecheckMessage {
  recheck: { sourceStoreId: string; sourceOrderId: string; sourceFulfillmentId: string };
}

/** What a message tells the log lines of its handler, before anything is read. */
export const propagationLogContext = (message: FulfillmentMessage) => ({
  jobId: message.jobId,
  sourceFulfillmentId: message.sourceFulfillmentId,
  request_id: message.requestId,
});

export const sendFulfillmentMessage = (message: FulfillmentMessage | RecheckMessage, delaySeconds = 0) =>
  sendWork(config.fulfillmentQueueUrl(), [message], delaySeconds);

const texts = (value: unknown): value is string[] => Array.isArray(value) && value.every(isText);
const textOrNull = (value: unknown) => value === null || isText(value);

const isTracking = (value: unknown): value is Tracking => {
  const t = value as Record<string, unknown> | null;
  return !!t && textOrNull(t.company) && textOrNull(t.number) && textOrNull(t.url) && texts(t.numbers) && texts(t.urls);
};

const readFulfillmentMessage = (parsed: Fields): FulfillmentMessage | undefined => {
  if (!isText(parsed.jobId) || !isText(parsed.sourceFulfillmentId) || !isTracking(parsed.tracking)) return undefined;
  return {
    jobId: parsed.jobId,
    sourceFulfillmentId: parsed.sourceFulfillmentId,
    tracking: parsed.tracking,
    redrives: Number.isInteger(parsed.redrives) ? Number(parsed.redrives) : 0,
    ...workFields(parsed),
  };
};

export const parseFulfillmentMessage = (body: string) => parseWith(body, readFulfillmentMessage);

const readRecheckMessage = ({ recheck }: Fields): RecheckMessage | undefined => {
  const r = recheck as Fields | null | undefined;
  if (!isText(r?.sourceStoreId) || !isText(r.sourceOrderId) || !isText(r.sourceFulfillmentId)) return undefined;
  return {
    recheck: {
      sourceStoreId: r.sourceStoreId,
      sourceOrderId: r.sourceOrderId,
      sourceFulfillmentId: r.sourceFulfillmentId,
    },
  };
};

/**
 * The fulfillment queue's one message type: a fulfillment to propagate, a kept fulfillment's
 * recheck, or a reseller order's tag (tagging.ts). The body names its kind by its key field
 * (`recheck`, `tagJobId`, else a fulfillment's `jobId`), read once, here, at the queue's door.
 */
export type FulfillmentQueueMessage =
  | { kind: 'propagation'; message: FulfillmentMessage }
  | { kind: 'recheck'; message: RecheckMessage }
  | { kind: 'tag'; message: TagMessage };

const readFulfillmentQueueMessage = (parsed: Fields): FulfillmentQueueMessage | undefined => {
  if ('recheck' in parsed) {
    const message = readRecheckMessage(parsed);
    return message && { kind: 'recheck', message };
  }
  if ('tagJobId' in parsed) {
    const message = readTagMessage(parsed);
    return message && { kind: 'tag', message };
  }
  const message = readFulfillmentMessage(parsed);
  return message && { kind: 'propagation', message };
};

export const parseFulfillmentQueueMessage = (body: string) => parseWith(body, readFulfillmentQueueMessage);

/**
 * The dead-letter handlers' redrive of a fulfillment-queue message (a fulfillment's, a tag's): back
 * on the queue 15 minutes later, up to `redrives` times, as long as the reseller's platform may still
 * recover; false once they are spent.
 */
export const redriveLater =
  <M extends WorkMessage & { redrives?: number }>(redrives: number, what: string) =>
  async (message: M) => {
    const done = message.redrives ?? 0;
    if (done >= redrives) return false;
    await sendWork(config.fulfillmentQueueUrl(), [{ ...message, redrives: done + 1 }], MAX_DELAY_SECONDS);
    logger.warn(`${what} put back on the queue after its receives ran out`, { redrives: done + 1 });
    return true;
  };

/**
 * The reseller's line items a job carries, by their ids on the reseller's order, with their
 * quantities: what a parcel of the job's supplier may ship there, never another supplier's items.
 * Undefined when a line has no id (the order is then fulfilled without line items, as before).
 */
export const jobLineItems = async (job: SyncJob): Promise<Array<{ id: string; quantity: number }> | undefined> => {
  const lines = await jobItems(job);
  if (!lines || lines.length === 0 || lines.some((line) => line.id === null)) return undefined;
  return lines.map((line) => ({ id: line.id!, quantity: line.quantity }));
};

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
