import type { SyncJobStatus } from '../domain/orders.js';
import type { Owner } from '../domain/owner.js';
import type { UnroutedLine } from '../domain/routing.js';
import { inFlight, jobIdOfPartition, type Key, listSortKey, lists, orderRecordKeyOf } from '../dynamo/keys.js';
import { batchGet, type Item, type ListSource, listPage, queryKeys, type ReadMeter } from '../dynamo/table.js';
import type { OrderRefund } from './order-after-sale.js';
import { LATE_LIST } from './order-entries.js';
import { type OrderRecord, orderRecordFrom } from './order-items.js';
import {
  CREDIT_DUE_LIST,
  HELD_LIST,
  isListedState,
  type ReceivedVia,
  type StoredOrder,
  type SyncJob,
  syncJobFrom,
  type UnroutedOrder,
} from './order-sync-job.js';

/**
 * A reseller order as the service saw it (CONTRACT.md §10.8), read from its record at its first
 * job's key: the first job (whose order attributes are the order's: `orderJobIds`, `receivedVia`,
 * `unroutedLines`), or, for an order none of whose items routes, the unrouted order record
 * (order-sync-job.ts). Not an item of its own: nothing more is written per order than those.
 */
export interface Order {
  /** The first job's id: where the order's record is, and its place in its store's list (the API's `id`). */
  firstJobId: string;
  ownerId: string;
  resellerStoreId: string;
  externalOrderId: string;
  /** When the order first arrived (webhook or poll) and was recorded: the list's order. */
  createdAt: string;
  receivedVia: ReceivedVia;
  syncJobIds: string[];
  unroutedLines: UnroutedLine[];
  /** When the reseller cancelled the order; null when it did not (or before its order arrived: see below). */
  cancelledAt: string | null;
  /** Where the order's body is: what the unrouted lines' details are read from (order-repository.ts). */
  stored: StoredOrder | null;
  /** When the shopper's personal data was erased from the order (CONTRACT.md §13); null: not erased. */
  redactedAt: string | null;
  /** Every refund of the order (CONTRACT.md §15.3), money-only ones too; kept on its first job. */
  refunds: OrderRefund[];
}

/**
 * The order of its first job. It was cancelled by the reseller when that job carries the reseller's
 * cancellation (every job of the order gets it, the first one included; one that arrived before the
 * order too): its `requestedAt` is when the order's cancellation came.
 */
export const orderOfJob = (job: SyncJob): Order => ({
  firstJobId: job.id,
  ownerId: job.ownerId,
  resellerStoreId: job.resellerStoreId,
  externalOrderId: job.externalOrderId,
  createdAt: job.createdAt,
  receivedVia: job.receivedVia,
  syncJobIds: job.orderJobIds ?? [job.id],
  unroutedLines: job.unroutedLines ?? [],
  cancelledAt: job.cancellation?.requestedBy === 'reseller' ? job.cancellation.requestedAt : null,
  stored: job.order,
  redactedAt: job.redactedAt ?? null,
  refunds: job.afterSale?.orderRefunds ?? [],
});

export const orderOfUnrouted = (order: UnroutedOrder): Order => ({
  firstJobId: order.firstJobId,
  ownerId: order.ownerId,
  resellerStoreId: order.resellerStoreId,
  externalOrderId: order.externalOrderId,
  createdAt: order.receivedAt,
  receivedVia: order.receivedVia,
  syncJobIds: [],
  unroutedLines: order.unroutedLines,
  cancelledAt: order.cancelledAt,
  stored: order.order,
  redactedAt: order.redactedAt ?? null,
  refunds: [],
});

/**
 * The order an item at a first job's key records, or undefined: an order cancellation kept for an
 * order that has not arrived, or a job that is not an order's first (it is not an order's record).
 */
export const orderOrNothing = (item: Item): Order | undefined => orderOfRecord(orderRecordFrom(item));

/** The order a record at a first job's key is, or undefined (a cancellation kept, a job not its order's first). */
export const orderOfRecord = (record: OrderRecord): Order | undefined => {
  if (record.kind === 'unroutedOrder') return orderOfUnrouted(record.order);
  if (record.kind === 'orderCancellation' || record.kind === 'earlyAfterSale') return undefined;
  return record.job.orderJobIds ? orderOfJob(record.job) : undefined;
};

/** The order of an item of a list of orders, whose entries are all order records. */
export const orderFrom = (item: Item): Order => {
  const order = orderOrNothing(item);
  if (!order) throw new Error(`the item at ${String(item.PK)} records no order`);
  return order;
};

/**
 * The lists of an owner's jobs and of a store's orders: read page by page, oldest first, for the
 * walks over every order (the retention sweep, a shop's erasure), each list's shards and a page of
 * one shard read by key (a walk goes on from the Query's own start key, kept as it came); and the
 * jobs and orders as the API lists them (`findSyncJobPage`, `findOrderPage`).
 */

/** A page's start key (DynamoDB's `LastEvaluatedKey`), kept as it came: where the next page goes on. */
export type ListStart = Record<string, unknown>;

/** The shards of an owner's list of jobs (GSI1). */
export const jobListShards = (ownerId: string) => lists.syncJobs(ownerId).all();

/** The shards of a reseller store's list of orders (GSI7: their first jobs or unrouted records). */
export const storeOrderListShards = (resellerStoreId: string) => lists.storeOrders(resellerStoreId).all();

/** The shards of a reseller store's list of orders with unrouted items (GSI7: their marks). */
export const unroutedOrderListShards = (resellerStoreId: string) => lists.storeUnroutedOrders(resellerStoreId).all();

/** A page's bounds: after a sort key (exclusive, a mark) and up to entries created before `until`. */
export interface ListPageRequest {
  shard: string;
  limit: number;
  /** A list sort key (`<createdAt>#<id>`): the page starts past it. */
  after?: string;
  /** Entries created at or before this time only. */
  until?: string;
  start?: ListStart;
}

const pageOf = (index: 'lists' | 'resourceLists', request: ListPageRequest) => {
  const before = request.until === undefined ? undefined : listSortKey(request.until, '~');
  return queryKeys({
    index,
    pk: request.shard,
    ...(request.after && before !== undefined ? { after: request.after, before } : { before }),
    limit: request.limit,
    forward: true,
    exclusiveStartKey: request.start,
  });
};

/** A page of one shard of an owner's jobs, oldest first: each job with its list sort key. */
export const findListedJobsPage = async (request: ListPageRequest) => {
  const page = await pageOf('lists', request);
  const jobs = await batchGet(page.keys, syncJobFrom);
  const listed = jobs.map((job: SyncJob) => ({ job, sortKey: listSortKey(job.createdAt, job.id) }));
  return { listed, lastKey: page.lastKey as ListStart | undefined };
};

/** A page of one shard of a store's orders (or unrouted orders), oldest first: each order's first job id. */
export const findListedOrdersPage = async (request: ListPageRequest) => {
  const page = await pageOf('resourceLists', request);
  const orders = page.keys.map((key, n) => ({ firstJobId: jobIdOfPartition(key), sortKey: page.sortKeys[n] }));
  return { orders, lastKey: page.lastKey as ListStart | undefined };
};

/** A store's orders (GSI7), or those with unrouted items: their marks' entries name the orders' records. */
export const orderListSource = (resellerStoreId: string, unrouted: boolean): ListSource =>
  unrouted
    ? {
        index: 'resourceLists',
        partitions: lists.storeUnroutedOrders(resellerStoreId).all(),
        exact: true,
        recordKeyOf: orderRecordKeyOf,
      }
    : { index: 'resourceLists', partitions: lists.storeOrders(resellerStoreId).all(), exact: true };

/**
 * A page of a reseller store's orders (or those with unrouted items), newest first, below `cursor`
 * (an order of the caller under this store, already read) when given.
 */
export const findOrderPage = (
  list: { ownerId: string; resellerStoreId: string; unrouted: boolean },
  limit: number,
  startingAfter: string | undefined,
  cursor: Order | undefined,
) =>
  listPage({
    source: orderListSource(list.resellerStoreId, list.unrouted),
    ownerId: list.ownerId,
    from: orderFrom,
    idOf: (order) => order.firstJobId,
    limit,
    startingAfter,
    cursorItem: async () => cursor,
  });

export interface SyncJobFilters {
  status?: SyncJobStatus;
  resellerStoreId?: string;
  /** true: only held jobs (CONTRACT.md §11), read from their own lists; false: only jobs not held. */
  held?: boolean;
  /** true: only jobs owed credit (CONTRACT.md §15.3), read from their own lists; false: only jobs not owed any. */
  creditDue?: boolean;
  /** true: only late jobs (CONTRACT.md §16.2), read from their own lists (order-entries.ts). */
  late?: true;
}

/**
 * Where a filtered list of jobs is read (docs/design.md, "Lists"). A failed or dead job is in a
 * list of its state (per owner, per store), so those filters read only matches. The other states
 * have no list of their own (it would cost every order index writes): `pending` and `processing`
 * read the owner's open jobs (GSI3, the reconciler's), which are few, and keep those in the state
 * (and store) asked for; `completed` reads its owner's or store's list, most of which it is.
 */
export const syncJobListSource = ({ ownerId }: Owner, filters: SyncJobFilters): ListSource => {
  const { status, resellerStoreId: store } = filters;
  // Jobs owed credit are in lists of their own (order-sync-job.ts creditDueEntries): a page reads only matches.
  if (filters.creditDue === true) {
    return store === undefined
      ? { index: 'stateLists', partitions: lists.syncJobsIn(ownerId, CREDIT_DUE_LIST).all(), exact: false }
      : { index: 'storeStateLists', partitions: lists.storeSyncJobsIn(store, CREDIT_DUE_LIST).all(), exact: false };
  }
  // Late jobs too (the late sweep's lists).
  if (filters.late) {
    return store === undefined
      ? { index: 'stateLists', partitions: lists.syncJobsIn(ownerId, LATE_LIST).all(), exact: false }
      : { index: 'storeStateLists', partitions: lists.storeSyncJobsIn(store, LATE_LIST).all(), exact: false };
  }
  // Held jobs are in lists of their own (order-sync-job.ts heldEntries): a page reads only matches.
  if (filters.held === true) {
    return store === undefined
      ? { index: 'stateLists', partitions: lists.syncJobsIn(ownerId, HELD_LIST).all(), exact: status === undefined }
      : {
          index: 'storeStateLists',
          partitions: lists.storeSyncJobsIn(store, HELD_LIST).all(),
          exact: status === undefined,
        };
  }
  if (status !== undefined && isListedState(status)) {
    return store === undefined
      ? { index: 'stateLists', partitions: lists.syncJobsIn(ownerId, status).all(), exact: true }
      : { index: 'storeStateLists', partitions: lists.storeSyncJobsIn(store, status).all(), exact: true };
  }
  if (status === 'pending' || status === 'processing') {
    const partitions = inFlight.open.allPartitions();
    return { index: 'inFlight', partitions, prefix: inFlight.ownerPrefix(ownerId), exact: false, small: true };
  }
  const exact = status === undefined;
  return store === undefined
    ? { index: 'lists', partitions: lists.syncJobs(ownerId).all(), exact }
    : { index: 'storeLists', partitions: lists.storeSyncJobs(store).all(), exact };
};

/** A page of the owner's jobs from `list` (`syncJobListSource`), newest first, of those that `matches`. */
export const findSyncJobPage = (request: {
  list: ListSource;
  ownerId: string;
  limit: number;
  startingAfter: string | undefined;
  cursorItem: (id: string) => Promise<SyncJob | undefined>;
  matches: (job: SyncJob) => boolean;
}) =>
  listPage({
    source: request.list,
    ownerId: request.ownerId,
    from: syncJobFrom,
    limit: request.limit,
    startingAfter: request.startingAfter,
    cursorItem: request.cursorItem,
    matches: request.matches,
  });

/** GSI3's in-flight shards: open and failed jobs', and those of completed jobs with work on its way. */
export const inFlightShards = () => ({
  open: [...inFlight.open.allPartitions(), ...inFlight.failed.allPartitions()],
  propagating: inFlight.propagating.allPartitions(),
});

/** A page of one in-flight shard's job keys, oldest first, from `start` (a page's start key), read units counted. */
export const findInFlightPage = (shard: string, limit: number, start: ListStart | undefined, meter: ReadMeter) =>
  queryKeys({ index: 'inFlight', pk: shard, limit, forward: true, exclusiveStartKey: start, meter });

/** The jobs at some keys (an in-flight page's, at most 100), read units counted; a missing one is skipped. */
export const findJobsAt = (keys: Key[], meter: ReadMeter) => batchGet(keys, syncJobFrom, meter);
