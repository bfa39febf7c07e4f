import { jobIdOfPartition, listSortKey, lists } from '../dynamo/keys.js';
import { batchGet, queryKeys } from '../dynamo/table.js';
import { type SyncJob, syncJobFrom } from './order-sync-job.js';

/**
 * The lists of an owner's jobs and of a store's orders, read page by page, oldest first, for the
 * walks over every order (the retention sweep, a shop's erasure): each list's shards, and a page of
 * one shard read by key. Where a walk goes on is the Query's own start key, kept as it came.
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
