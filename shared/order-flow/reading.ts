import { InvalidCursorError, ResourceMissingError } from '../core/errors.js';
import { isId, syncJobId } from '../core/ids.js';
import { MAX_ORDER_ID_LENGTH } from '../domain/orders.js';
import type { Owner } from '../domain/owner.js';
import type { UnroutedReason } from '../domain/routing.js';
import { findResellerStore } from '../stores/stores.js';
import {
  findOrderPage,
  findSyncJobPage,
  type Order,
  orderOfRecord,
  type SyncJobFilters,
  syncJobListSource,
} from './order.js';
import { isLateNow } from './order-entries.js';
import { type JobLine, jobLines, loadJob, loadRecord, storedOrderReading, textOf } from './order-repository.js';
import { type Attempt, attemptNumberOf, type SyncJob } from './order-sync-job.js';

/**
 * Orders as the service saw them (CONTRACT.md §10.8): read from their records (shared/order-flow/order.ts),
 * one GetItem for an order, and lists at the page cost of every list (shared/dynamo/table.ts).
 */

/** The caller's order of that store, or undefined: another owner's is as missing as an unknown one. */
const ownedOrder = async ({ ownerId }: Owner, resellerStoreId: string, externalOrderId: string) => {
  if (!isId('rst', resellerStoreId) || !externalOrderId || externalOrderId.length > MAX_ORDER_ID_LENGTH) return;
  const firstJobId = syncJobId(resellerStoreId, externalOrderId, 0);
  const record = await loadRecord(firstJobId);
  const order = record && orderOfRecord(record);
  return order?.ownerId === ownerId && order.resellerStoreId === resellerStoreId ? order : undefined;
};

export const findOrder = async (owner: Owner, resellerStoreId: string, externalOrderId: string) => {
  const order = await ownedOrder(owner, resellerStoreId, externalOrderId);
  if (!order) throw new ResourceMissingError('order', externalOrderId, 'externalOrderId');
  return order;
};

/**
 * A page of a reseller store's orders, newest first; `unrouted`: only those with unrouted items. The
 * cursor is an order's `externalOrderId`: an order of the caller under this store, which proves the
 * store is the caller's, so the store is read only without one (or to tell a 404 from a bad cursor).
 */
export const listOrders = async (
  owner: Owner,
  resellerStoreId: string,
  limit: number,
  startingAfter: string | undefined,
  filters: { unrouted: boolean },
) => {
  const cursor = startingAfter === undefined ? undefined : await ownedOrder(owner, resellerStoreId, startingAfter);
  if (!cursor) await findResellerStore(owner, resellerStoreId, 'rst_id');
  return findOrderPage(
    { ownerId: owner.ownerId, resellerStoreId, unrouted: filters.unrouted },
    limit,
    startingAfter,
    cursor,
  );
};

/** An item of the order that went to no supplier, as a response shows it (CONTRACT.md §10.8). */
export interface UnroutedLineItem {
  resellerLineItemId: string | null;
  sku: string | null;
  title: string | null;
  vendor: string | null;
  quantity: number;
  reason: UnroutedReason;
}

/**
 * The order's unrouted items, their details read from its stored body (inline on its record, so no
 * read; a large order's parts are read); none when that body cannot be read.
 */
export const unroutedLineItems = async (order: Order): Promise<UnroutedLineItem[]> => {
  if (!order.unroutedLines.length) return [];
  const reading = await storedOrderReading(
    order.stored,
    order.firstJobId,
    order.externalOrderId,
    undefined,
    order.redactedAt,
  );
  if (!reading?.ok) return [];
  return order.unroutedLines.flatMap(({ position, reason }) => {
    const line = reading.order.lineItems[position];
    if (!line) return [];
    return [
      {
        resellerLineItemId: line.id,
        sku: textOf(line.sku),
        title: textOf(line.title),
        vendor: line.vendor,
        quantity: line.quantity,
        reason,
      },
    ];
  });
};

/**
 * Sync jobs (SPEC 3.1, CONTRACT.md §6): reads (creation: receiving.ts; the manual retry: placing-retry.ts). The
 * moves of the machinery (worker, DLQ handler, reconciler) are in placing.ts; all of them come from
 * the order aggregate's transition table (shared/order-flow/order-repository.ts).
 */

// ---------- reads

/** The caller's job, or undefined: another owner's is as missing as an unknown id. */
const ownedSyncJob = async ({ ownerId }: Owner, id: string) => {
  const job = isId('sj', id) ? await loadJob(id) : undefined;
  return job?.ownerId === ownerId ? job : undefined;
};

export const findSyncJob = async (owner: Owner, id: string) => {
  const job = await ownedSyncJob(owner, id);
  if (!job) throw new ResourceMissingError('sync_job', id);
  return job;
};

/**
 * A page of the owner's jobs, filtered. A cursor must be a job of the list's owner and reseller
 * store (which never change); its status need not match: jobs change state while someone pages,
 * and a job that left the filtered state still marks its place.
 */
export const listSyncJobs = (
  owner: Owner,
  limit: number,
  startingAfter: string | undefined,
  filters: SyncJobFilters,
) => {
  const { status, resellerStoreId, held, creditDue } = filters;
  const inStore = (job: SyncJob) => resellerStoreId === undefined || job.resellerStoreId === resellerStoreId;
  return findSyncJobPage({
    list: syncJobListSource(owner, filters),
    ownerId: owner.ownerId,
    limit,
    startingAfter,
    cursorItem: async (id) => {
      const job = await ownedSyncJob(owner, id);
      return job && inStore(job) ? job : undefined;
    },
    matches: (job) =>
      (status === undefined || job.status === status) &&
      inStore(job) &&
      (held === undefined || (job.hold !== null) === held) &&
      (creditDue === undefined || (job.afterSale?.creditDue === true) === creditDue) &&
      (!filters.late || isLateNow(job)),
  });
};

/**
 * A page of the job's attempt history, newest first (SPEC 8.1 rules, CONTRACT.md §6). The history
 * is on the job item, so every page is one GetItem. The cursor is an attempt id of this job; one
 * that has since dropped out of the kept 100 still marks its place (the page after it is empty).
 */
export const listAttempts = async (
  owner: Owner,
  id: string,
  limit: number,
  startingAfter: string | undefined,
): Promise<{ job: SyncJob; page: { data: Attempt[]; hasMore: boolean } }> => {
  const job = await findSyncJob(owner, id);
  let newestFirst = [...job.attemptLog].reverse();
  if (startingAfter !== undefined) {
    const after = attemptNumberOf(job.id, startingAfter);
    // Numbers run 1, 2, … without gaps, so one above the last was never issued.
    if (after === undefined || after > (job.attemptLog.at(-1)?.number ?? 0)) throw new InvalidCursorError();
    newestFirst = newestFirst.filter((attempt) => attempt.number < after);
  }
  return { job, page: { data: newestFirst.slice(0, limit), hasMore: newestFirst.length > limit } };
};

/**
 * The reseller line items a job carries, as a response shows them (CONTRACT.md §10.1): derived
 * from its stored order (inline on the job item, so no read; an order kept in parts is read), none
 * when that order cannot be read.
 */
export const linesOf = async (job: SyncJob): Promise<JobLine[]> => (await jobLines(job)) ?? [];
