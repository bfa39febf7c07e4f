import { now, syncJobId } from '../core/ids.js';
import { BUSINESS_METRICS, countMetric, logger } from '../core/telemetry.js';
import type { Hold, UnroutedLine } from '../domain/routing.js';
import type { EarlyAfterSale, OrderCancellation } from './order-items.js';
import {
  bodyPartItems,
  bodyStorage,
  compressBody,
  decompressBody,
  INLINE_ITEM_BUDGET,
  itemSize,
  loadJobs,
  MOVES,
  putJobIfNew,
  writeOrderRecord,
} from './order-repository.js';
import {
  type ReceivedVia,
  type StoredOrder,
  type SyncJob,
  syncJobItem,
  unroutedOrderMarkItem,
} from './order-sync-job.js';

/**
 * Writing an order's jobs exactly once (docs/hostile-input.md, "Any number of suppliers").
 *
 * Job ids follow from (reseller store, order id, position), so the first job doubles as the order's
 * dedup record. It is always written first, in the first transaction, with the order's body parts
 * and as many other jobs as one transaction holds (100 items): up to that size an order is written
 * all or nothing, as before. The jobs past the first transaction are written after it, each with a
 * conditional put that an existing item makes a no-op. A crash between those writes leaves the
 * first job, which records each position's source store and tag (`orderRouting`): a redelivery, or
 * the first job's worker, writes the missing jobs from it exactly as planned, never from a routing
 * that has changed since. Nothing is ever enqueued before every job exists.
 */

export interface OrderGroup {
  sourceStoreId: string;
  vendorTag: string;
}

export interface NewOrder {
  ownerId: string;
  resellerStoreId: string;
  resellerShopDomain: string;
  externalOrderId: string;
  /** The webhook body exactly as signed. */
  rawBody: Buffer;
  /** One per supplier, in position order (shared/domain/routing.ts). */
  groups: OrderGroup[];
  /** How the order reached the service (default: its webhook); the first job keeps it (the order's record). */
  receivedVia?: ReceivedVia;
  /** The order's items that go to no supplier; the first job keeps them, and the order gets a mark. */
  unroutedLines?: UnroutedLine[];
  /** What holds the order as it arrives (CONTRACT.md §11): every job of it is created with it. Absent: none. */
  hold?: Hold | null;
}

/** Items per DynamoDB transaction. */
const TRANSACTION_ITEMS = 100;
/** Conditional puts in flight at once for the jobs past the first transaction. */
const PUT_CONCURRENCY = 16;

/** What `orderJobCount` (the dedup record's count) adds to the first job: 13 name bytes and a number. */
const ORDER_JOB_COUNT_BYTES = itemSize({ orderJobCount: 1 });

/** A new sync job: pending, under its first generation, at `position` among its order's suppliers. */
export const newSyncJob = (
  input: Omit<NewOrder, 'rawBody' | 'groups' | 'unroutedLines' | 'hold'>,
  group: OrderGroup,
  position: number,
  order: StoredOrder,
  createdAt: string,
): SyncJob => ({
  id: syncJobId(input.resellerStoreId, input.externalOrderId, position),
  ownerId: input.ownerId,
  resellerStoreId: input.resellerStoreId,
  sourceStoreId: group.sourceStoreId,
  status: MOVES.create.to,
  attempts: 0,
  generation: 1,
  externalOrderId: input.externalOrderId,
  resellerShopDomain: input.resellerShopDomain,
  order,
  vendorTag: group.vendorTag,
  orderJobIds: null,
  orderRouting: null,
  receivedVia: input.receivedVia ?? 'webhook',
  unroutedLines: null,
  sourceOrderId: null,
  sourceLines: null,
  errorMessage: null,
  completedAt: null,
  failedAt: null,
  deadAt: null,
  cancelledAt: null,
  cancellation: null,
  attention: null,
  orderEdits: null,
  createdAt,
  updatedAt: createdAt,
  fulfillments: {},
  resends: 0,
  waitUntil: null,
  throttledSince: null,
  attemptLog: [],
  hold: null,
});

const encodeRouting = (groups: OrderGroup[]) =>
  compressBody(Buffer.from(JSON.stringify(groups.map((g) => [g.sourceStoreId, g.vendorTag]))));

const decodeRouting = (routing: Uint8Array): OrderGroup[] =>
  (JSON.parse(decompressBody(routing)) as [string, string][]).map(([sourceStoreId, vendorTag]) => ({
    sourceStoreId,
    vendorTag,
  }));

/** The plan of an order's writes: its jobs and body parts, and which go in the first transaction. */
const plan = (input: NewOrder) => {
  const createdAt = input.hold?.since ?? now();
  const compressed = compressBody(input.rawBody);
  const firstId = syncJobId(input.resellerStoreId, input.externalOrderId, 0);
  const unroutedLines = input.unroutedLines?.length ? input.unroutedLines : null;
  const hold = input.hold ?? null;
  const inline = newSyncJob(input, input.groups[0], 0, { body: compressed }, createdAt);
  // Measured as any job, without the first job's order attributes (its list entry, unrouted lines):
  // the same bodies stay inline as before orders were listed (docs/performance.md, "Orders, visible").
  // Nor its hold, which its release removes: a held order keeps its body inline as an unheld one does.
  const { order, parts } = bodyStorage(
    compressed,
    INLINE_ITEM_BUDGET,
    () => itemSize(syncJobItem(inline)) + ORDER_JOB_COUNT_BYTES,
  );
  const jobs = input.groups.map((group, position) => ({
    ...newSyncJob(input, group, position, order, createdAt),
    hold,
  }));
  // The order's mark, when some of its items route nowhere, goes with its first job (order-sync-job.ts).
  const partItems = [
    ...bodyPartItems(firstId, parts),
    ...(unroutedLines ? [unroutedOrderMarkItem({ firstJobId: firstId, ...input, receivedAt: createdAt })] : []),
  ];
  const firstTransaction = TRANSACTION_ITEMS - partItems.length;
  const chunked = jobs.length > firstTransaction;
  jobs[0] = {
    ...jobs[0],
    orderJobIds: jobs.map((job) => job.id),
    orderRouting: chunked ? encodeRouting(input.groups) : null,
    unroutedLines,
  };
  return { jobs, partItems, firstTransaction };
};

/**
 * A conditional put of each job; one that exists already (a concurrent or earlier attempt's) is left
 * as it is. Each job is counted created by the write that made it, whichever that is.
 */
const putEach = async (jobs: SyncJob[]) => {
  for (let at = 0; at < jobs.length; at += PUT_CONCURRENCY) {
    await Promise.all(
      jobs.slice(at, at + PUT_CONCURRENCY).map(async (job) => {
        if (await putJobIfNew(job)) countMetric(BUSINESS_METRICS.jobsCreated);
      }),
    );
  }
};

export interface OrderJobsResult {
  /** False for a redelivery (the first job existed): nothing new was planned. */
  created: boolean;
  jobIds: string[];
  /** The jobs this call wrote, to enqueue: all of a new order, or those a redelivery completed. */
  written: SyncJob[];
  /** Refunds and returns that came before the order (order-items.ts): the caller takes them now. */
  kept?: EarlyAfterSale[];
}

/**
 * Writes one pending job per group (see above). For a redelivery (the first job exists), answers the
 * ids recorded on it, having written any job a crash had left unwritten.
 */
export const createJobsForOrder = async (
  input: NewOrder,
  hooks: { afterWrite?: (written: number) => Promise<void> } = {},
): Promise<OrderJobsResult> => {
  const { jobs, partItems, firstTransaction } = plan(input);
  const first = (over?: 'kept') =>
    writeOrderRecord(syncJobItem(jobs[0]), [...partItems, ...jobs.slice(1, firstTransaction).map(syncJobItem)], over);
  const written = await first();
  if (written !== true) {
    if (written.met?.kind === 'earlyAfterSale') {
      // Refunds or returns came first: the order takes their key, then the caller takes them.
      if ((await first('kept')) !== true) throw new Error("the order's kept refunds changed under its create");
      return { ...(await writeRest(jobs, firstTransaction, hooks)), kept: written.met.kept.kept };
    }
    // What holds the first job's key (as the failed write met it): the first job, or a cancellation that came first.
    const found = written.met;
    if (found?.kind === 'orderCancellation') return createCancelled(jobs, partItems, found.cancellation);
    // The order came first with no item routed (a supplier was added since): its first routing
    // stands, as for any order (shared/order-flow/README.md, "Orders, visible"): a redelivery changes nothing.
    if (found?.kind === 'unroutedOrder') return { created: false, jobIds: [], written: [] };
    const existing = found?.kind === 'job' ? found.job : undefined;
    // A cancelled transaction with no first job is a conflict, not a redelivery: let it surface.
    if (!existing?.orderJobIds) throw new Error("the order's first write was cancelled with no order at its key");
    return { created: false, jobIds: existing.orderJobIds, written: await completeOrderJobs(existing) };
  }
  return writeRest(jobs, firstTransaction, hooks);
};

/** Once the order's first write is in: the jobs it could not carry, each chunk after the last. */
const writeRest = async (
  jobs: SyncJob[],
  firstTransaction: number,
  hooks: { afterWrite?: (written: number) => Promise<void> },
): Promise<OrderJobsResult> => {
  countMetric(BUSINESS_METRICS.jobsCreated, Math.min(jobs.length, firstTransaction));
  await hooks.afterWrite?.(Math.min(jobs.length, firstTransaction));
  const rest = jobs.slice(firstTransaction);
  for (let at = 0; at < rest.length; at += TRANSACTION_ITEMS) {
    await putEach(rest.slice(at, at + TRANSACTION_ITEMS));
    await hooks.afterWrite?.(firstTransaction + Math.min(rest.length, at + TRANSACTION_ITEMS));
  }
  return { created: true, jobIds: jobs.map((job) => job.id), written: jobs };
};

/**
 * An order whose cancellation arrived first (shared/order-flow/order-items.ts): its jobs are
 * written `cancelled` from the start, the first in place of the cancellation kept at its key, and
 * nothing is enqueued: no supplier call is ever made for them (CONTRACT.md §10.4).
 */
const createCancelled = async (
  planned: SyncJob[],
  partItems: ReturnType<typeof bodyPartItems>,
  kept: OrderCancellation,
): Promise<OrderJobsResult> => {
  const at = now();
  const cancellation = {
    requestedBy: 'reseller' as const,
    status: 'done' as const,
    reason: kept.reason,
    requestedAt: kept.cancelledAt,
    endedAt: at,
  };
  const jobs = planned.map((job): SyncJob => ({ ...job, status: 'cancelled', cancelledAt: at, cancellation }));
  const [first, ...others] = jobs;
  const inFirst = others.slice(0, TRANSACTION_ITEMS - 1 - partItems.length).map(syncJobItem);
  if ((await writeOrderRecord(syncJobItem(first), [...partItems, ...inFirst], 'cancellation')) !== true) {
    throw new Error("the order's cancellation changed under its create"); // the platform redelivers
  }
  await putEach(others.slice(TRANSACTION_ITEMS - 1 - partItems.length));
  countMetric(BUSINESS_METRICS.jobsCancelled, jobs.length);
  logger.info('order cancelled before it arrived: its jobs are cancelled from the start');
  return { created: true, jobIds: jobs.map((job) => job.id), written: [] };
};

/**
 * The jobs of a chunked order that a crash left unwritten, written now from what its first job
 * recorded (positions, stores, tags, where the body is). Answers the jobs it wrote; none for an
 * order written in one transaction, which is always complete.
 */
export const completeOrderJobs = async (firstJob: SyncJob): Promise<SyncJob[]> => {
  if (!firstJob.orderRouting || !firstJob.orderJobIds || !firstJob.order) return [];
  const groups = decodeRouting(firstJob.orderRouting);
  const present = new Set((await loadJobs(firstJob.orderJobIds)).map((j) => j.id));
  const missing = groups
    // Held as the order is: a job a crash left unwritten is held as its first job (and as its siblings were written).
    .map((group, position) => ({
      ...newSyncJob(firstJob, group, position, firstJob.order!, firstJob.createdAt),
      hold: firstJob.hold,
    }))
    .filter((job) => !present.has(job.id));
  await putEach(missing);
  return missing;
};
