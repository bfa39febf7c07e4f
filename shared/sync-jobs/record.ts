import { syncJobId } from '../core/ids.js';
import { SYNC_JOB_STATUSES, type SyncJobStatus } from '../domain/sync-job-status.js';
import { attributes } from '../dynamo/attributes.js';
import { keys, listSortKey, lists } from '../dynamo/keys.js';
import type { Item } from '../dynamo/table.js';
import { type FulfillmentEntry, fulfillmentEntriesFrom } from '../fulfillments/record.js';
import { type Attempt, attemptsFrom, type StoredAttempt, storedAttempts } from './attempts.js';
import { indexChanges } from './indexes.js';

/** A sync job as a record, and its conversions to and from the job's item: the only place that knows its attributes. */
export interface SyncJob {
  id: string;
  ownerId: string;
  resellerStoreId: string;
  sourceStoreId: string;
  status: SyncJobStatus;
  attempts: number;
  generation: number;
  /** The reseller order's id on the reseller's platform. */
  externalOrderId: string;
  /** Part of the supplier order's `source_identifier`; '' when the reseller's domain was not known. */
  resellerShopDomain: string;
  /**
   * Where the reseller order is kept (shared/orders/stored-order.ts): its compressed raw body inline,
   * or in `parts` items beside the order's first job; `legacy` is the map older code wrote. Null for
   * an item written without one (never by this service): the worker makes such a job dead.
   */
  order: StoredOrder | null;
  /** The order's line items this job places: those whose `vendor` is this tag. Null (legacy items): all. */
  vendorTag: string | null;
  /** On the first job of an order only: every job id of the order (the order's dedup record). */
  orderJobIds: string[] | null;
  /**
   * On the first job of an order written in several chunks only (more jobs than one transaction
   * holds): each position's source store and vendor tag, compressed, so that a redelivery or the
   * first job's worker can write the jobs a crash left unwritten exactly as planned.
   */
  orderRouting: Uint8Array | null;
  /** The supplier order's id, once placed. */
  sourceOrderId: string | null;
  errorMessage: string | null;
  completedAt: string | null;
  failedAt: string | null;
  deadAt: string | null;
  createdAt: string;
  updatedAt: string;
  /** Reverse sync: one entry per source fulfillment of the supplier order (shared/fulfillments). */
  fulfillments: Record<string, FulfillmentEntry>;
  /** Messages the reconciler has sent since the job last made progress (CONTRACT.md §6). */
  resends: number;
  /**
   * Until when the job waits on purpose, with no message expected before (a deferral's due time,
   * the backoff after a failure): the reconciler's lease runs from here. Null when not waiting.
   */
  waitUntil: string | null;
  /** When the job's current run of throttled (429) attempts began; null when the last attempt was not throttled. */
  throttledSince: string | null;
  /** The attempt history, oldest first (attempts.ts). */
  attemptLog: Attempt[];
}

export type StoredOrder = { body: Uint8Array } | { parts: number } | { legacy: Record<string, unknown> };

/** The attributes that have a value: an absent one reads as null, and costs no bytes. */
const present = (attributes: Record<string, string | null>) =>
  Object.fromEntries(Object.entries(attributes).filter(([, value]) => value !== null));

/**
 * A job's item: in its owner's list (GSI1) and in the indexes `indexChanges` gives a job created
 * in its state (a new job's: its store's list and the open jobs of GSI3; a seeded one's, those of
 * its state). The lookup keys (GSI2) come with the completion. Attributes without a
 * value (the null timestamps and error, `resends`, `waitUntil`, the history…) are not written: every
 * byte of the item is paid again by each of its writes (docs/performance.md).
 */
export const syncJobItem = (job: SyncJob): Item => ({
  ...keys.syncJob(job.id),
  GSI1PK: lists.syncJobs(job.ownerId),
  GSI1SK: listSortKey(job.createdAt, job.id),
  ...indexChanges({ ...job, status: null }, job.status).set,
  id: job.id,
  ownerId: job.ownerId,
  resellerStoreId: job.resellerStoreId,
  sourceStoreId: job.sourceStoreId,
  status: job.status,
  attempts: job.attempts,
  generation: job.generation,
  externalOrderId: job.externalOrderId,
  resellerShopDomain: job.resellerShopDomain,
  ...storedOrderAttributes(job.order),
  ...(job.vendorTag !== null ? { vendorTag: job.vendorTag } : {}),
  // The ids follow from the count (shared/core/ids.ts syncJobId), so the dedup record stays small.
  ...(job.orderJobIds ? { orderJobCount: job.orderJobIds.length } : {}),
  ...(job.orderRouting ? { orderRouting: job.orderRouting } : {}),
  ...present({
    sourceOrderId: job.sourceOrderId,
    errorMessage: job.errorMessage,
    completedAt: job.completedAt,
    failedAt: job.failedAt,
    deadAt: job.deadAt,
  }),
  createdAt: job.createdAt,
  updatedAt: job.updatedAt,
  ...(Object.keys(job.fulfillments).length ? { fulfillments: job.fulfillments } : {}),
  ...(job.resends ? { resends: job.resends } : {}),
  ...(job.waitUntil ? { waitUntil: job.waitUntil } : {}),
  ...(job.throttledSince ? { throttledSince: job.throttledSince } : {}),
  ...(job.attemptLog.length ? { attemptLog: storedAttempts(job.attemptLog) } : {}),
});

export const syncJobFrom = (item: Item): SyncJob => {
  const read = attributes(item, 'sync job');
  return {
    id: read.string('id'),
    ownerId: read.string('ownerId'),
    resellerStoreId: read.string('resellerStoreId'),
    sourceStoreId: read.string('sourceStoreId'),
    status: read.oneOf('status', SYNC_JOB_STATUSES),
    attempts: read.number('attempts'),
    generation: read.number('generation'),
    externalOrderId: read.string('externalOrderId'),
    resellerShopDomain: read.stringOrNull('resellerShopDomain') ?? '',
    order: storedOrderFrom(item),
    vendorTag: read.stringOrNull('vendorTag'),
    orderJobIds: orderJobIdsFrom(item),
    orderRouting: item.orderRouting instanceof Uint8Array ? item.orderRouting : null,
    sourceOrderId: read.stringOrNull('sourceOrderId'),
    errorMessage: read.stringOrNull('errorMessage'),
    completedAt: read.stringOrNull('completedAt'),
    failedAt: read.stringOrNull('failedAt'),
    deadAt: read.stringOrNull('deadAt'),
    createdAt: read.string('createdAt'),
    updatedAt: read.string('updatedAt'),
    fulfillments: fulfillmentEntriesFrom(item),
    resends: item.resends === undefined ? 0 : read.number('resends'),
    waitUntil: read.stringOrNull('waitUntil'),
    throttledSince: read.stringOrNull('throttledSince'),
    attemptLog: attemptsFrom(read.optionalObject<StoredAttempt[]>('attemptLog')),
  };
};

/** The job id an index entry (GSI2 carries `id`) names. */
export const syncJobIdFrom = (item: Item) => attributes(item, 'sync job lookup').string('id');

const storedOrderAttributes = (order: StoredOrder | null): Item => {
  if (!order) return {};
  if ('body' in order) return { orderBody: order.body };
  if ('parts' in order) return { orderBodyParts: order.parts };
  return { order: order.legacy };
};

const storedOrderFrom = (item: Item): StoredOrder | null => {
  const read = attributes(item, 'sync job');
  if (item.orderBody instanceof Uint8Array) return { body: item.orderBody };
  if (item.orderBodyParts !== undefined) return { parts: read.number('orderBodyParts') };
  const legacy = read.optionalObject<Record<string, unknown>>('order');
  return legacy ? { legacy } : null;
};

/** Every job id of the order, on its first job: derived from the count, or as older code listed them. */
const orderJobIdsFrom = (item: Item): string[] | null => {
  const read = attributes(item, 'sync job');
  if (item.orderJobCount !== undefined) {
    const [resellerStoreId, externalOrderId] = [read.string('resellerStoreId'), read.string('externalOrderId')];
    return Array.from({ length: read.number('orderJobCount') }, (_, n) =>
      syncJobId(resellerStoreId, externalOrderId, n),
    );
  }
  return read.optionalObject<string[]>('orderJobIds') ?? null;
};
