import { ValidationError } from '../core/errors.js';
import { now, syncJobId } from '../core/ids.js';
import { BUSINESS_METRICS, countMetric, logger, withLogContext } from '../core/telemetry.js';
import { readResellerOrder } from '../domain/orders.js';
import {
  classifyLineItems,
  type Hold,
  holdOnArrival,
  skipsTestOrder,
  testOrderLines,
  type UnroutedLine,
} from '../domain/routing.js';
import { routingOf, type StoreOnShop } from '../entities/store.js';
import { countHolds, sendRelease } from './holding.js';
import type { EarlyAfterSale, OrderCancellation } from './order-items.js';
import {
  bodyPartItems,
  bodyStorage,
  compressBody,
  decompressBody,
  INLINE_ITEM_BUDGET,
  itemSize,
  loadJobs,
  loadRecord,
  MOVES,
  putJobIfNew,
  writeOrderRecord,
} from './order-repository.js';
import {
  type ReceivedVia,
  type StoredOrder,
  type SyncJob,
  syncJobItem,
  type UnroutedOrder,
  unroutedOrderExpiresAt,
  unroutedOrderItem,
  unroutedOrderMarkItem,
} from './order-sync-job.js';
import { enqueueJobs, jobMessage } from './placing.js';
import { takeKeptAfterSale } from './refunding-request.js';

export interface NewUnroutedOrder {
  ownerId: string;
  resellerStoreId: string;
  externalOrderId: string;
  rawBody: Buffer;
  receivedVia: ReceivedVia;
  /** Every line of the order, none of which routes. */
  unroutedLines: UnroutedLine[];
}

/**
 * Records an order none of whose items routes (CONTRACT.md §10.8): its record at its first job's key
 * with its body (inline, or in parts when large) and its mark, all or nothing. The key makes it
 * the order's dedup record, as a first job is: a redelivery finds it and changes nothing, whatever
 * the routing is now, and answers the jobs of an order that routed when it first came. An order
 * whose cancellation came first is recorded cancelled, in place of the cancellation kept there.
 */
export const recordUnroutedOrder = async (input: NewUnroutedOrder): Promise<{ created: boolean; jobIds: string[] }> => {
  const firstJobId = syncJobId(input.resellerStoreId, input.externalOrderId, 0);
  const receivedAt = now();
  // A record written once: its body inline while it fits one part (order-repository.ts `bodyStorage`).
  const stored = bodyStorage(compressBody(input.rawBody));
  const record: UnroutedOrder = {
    firstJobId,
    ownerId: input.ownerId,
    resellerStoreId: input.resellerStoreId,
    externalOrderId: input.externalOrderId,
    receivedAt,
    receivedVia: input.receivedVia,
    unroutedLines: input.unroutedLines,
    cancelledAt: null,
    order: stored.order,
  };
  // The record's end is its mark's and its parts' (the table's TTL, JOB_RETENTION_DAYS after its receipt).
  const expiresAt = unroutedOrderExpiresAt(receivedAt);
  const others = [
    ...bodyPartItems(firstJobId, stored.parts, expiresAt),
    unroutedOrderMarkItem({ firstJobId, resellerStoreId: input.resellerStoreId, receivedAt, expiresAt }),
  ];
  const written = await writeOrderRecord(unroutedOrderItem(record), others);
  if (written === true) return { created: true, jobIds: [] };
  const found = written.met;
  if (found?.kind === 'orderCancellation') {
    const { cancelledAt } = found.cancellation;
    const replaced = await writeOrderRecord(unroutedOrderItem({ ...record, cancelledAt }), others, 'cancellation');
    if (replaced !== true) throw new Error("the order's cancellation changed under its create"); // redelivered
    return { created: true, jobIds: [] };
  }
  if (found?.kind === 'earlyAfterSale') {
    // Refunds or returns kept for it change no job: none of its items routed.
    if ((await writeOrderRecord(unroutedOrderItem(record), others, 'kept')) !== true) {
      throw new Error("the order's kept refunds changed under its create"); // redelivered
    }
    return { created: true, jobIds: [] };
  }
  if (found?.kind === 'unroutedOrder') return { created: false, jobIds: [] };
  const job = found?.kind === 'job' ? found.job : undefined;
  if (!job?.orderJobIds) throw new Error("the order's first write was cancelled with no order at its key");
  return { created: false, jobIds: job.orderJobIds };
};

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
const ORDER_JOB_COUNT_BYTES = /* @__PURE__ */ itemSize({ orderJobCount: 1 });

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

/**
 * The order of a verified `orders/create`, read from the raw body: the fields the service reads are
 * checked (CONTRACT.md §5; a 400 names the first one at fault), the rest is kept as sent.
 */
export const readOrder = (rawBody: Buffer) => {
  const reading = readResellerOrder(rawBody.toString('utf8'));
  if (reading.ok) return reading.order;
  const message = reading.param ? `Invalid ${reading.param}: ${reading.message}` : reading.message;
  throw new ValidationError(message, reading.param);
};

/**
 * Whether the service has the order already (its first job, or its unrouted-order record, at the
 * order's first job key): one eventually consistent read, half a read unit. A poll that sees an order
 * again (it changed: shipped, edited) asks this rather than sending its create, whose failed
 * conditional write would cost a write unit and a consistent read each time. A cancellation kept
 * before its order is not the order. The create stays the guard: an order created meanwhile by its
 * webhook makes its conditional write fail, as for any redelivery.
 */
export const orderKnown = async (reseller: Pick<StoreOnShop, 'id'>, rawBody: Buffer) => {
  const order = readOrder(rawBody);
  const found = await loadRecord(syncJobId(reseller.id, order.externalOrderId, 0));
  return found !== undefined && found.kind !== 'orderCancellation' && found.kind !== 'earlyAfterSale';
};

type Routing = Awaited<ReturnType<typeof routingOf>>;

/** A routing read started before the store was known: used only for the store it was read for. */
export interface EarlyRouting {
  storeId: string;
  routing: Promise<Routing>;
}

/**
 * The reseller store each shop domain's orders were last verified for, per environment (bounded: the
 * oldest dropped first). Only a hint: which store an order is for is always the verification's answer.
 */
const storeOfShop = new Map<string, string>();
const STORE_OF_SHOP_MAX = 1_000;

/**
 * The routing read of the store a shop domain's last order was verified for, started now, beside the
 * signature's lookup rather than after it (docs/performance.md, "Intake: three steps, not four"):
 * both are reads made while the request is answered, so the routing is as fresh as when read after.
 * A verification that answers another store (or none) leaves it unused. Undefined for a shop domain
 * this environment has not verified an order of.
 */
export const readRoutingEarly = (shopDomain: string | undefined): EarlyRouting | undefined => {
  const storeId = shopDomain && storeOfShop.get(shopDomain.trim().toLowerCase());
  if (!storeId) return undefined;
  const routing = routingOf(storeId);
  routing.catch(() => undefined); // awaited where used; unused (a refused webhook call), its failure is no one's
  return { storeId, routing };
};

/** Remembers the store a shop domain's order was verified for, for its next order's early routing read. */
const rememberStoreOfShop = (reseller: Pick<StoreOnShop, 'id' | 'shopDomain'>) => {
  const shop = reseller.shopDomain.toLowerCase();
  if (storeOfShop.get(shop) === reseller.id) return;
  storeOfShop.delete(shop);
  if (storeOfShop.size >= STORE_OF_SHOP_MAX) storeOfShop.delete(storeOfShop.keys().next().value!);
  storeOfShop.set(shop, reseller.id);
};

/** How an order reached the service (CONTRACT.md §10.7–10.8): its webhook (the request's id) or a poll. */
export interface OrderArrival {
  requestId?: string;
  via?: 'webhook' | 'poll';
  /** The routing read begun beside the verification (`readRoutingEarly`), if any. */
  early?: EarlyRouting;
}

/**
 * Routes an `orders/create` of a verified reseller store: one pending job per supplier, the order's
 * raw body kept with them (shared/order-flow/receiving.ts), then one queue message per job, carrying
 * the webhook's `requestId` so the worker's lines name it too. The jobs are durable, and among the
 * open jobs the reconciler watches, before the answer: if the enqueue fails, or the function dies
 * before it, the reconciler sends them their message once their lease is up.
 */
export const acceptOrder = async (
  reseller: Pick<StoreOnShop, 'id' | 'ownerId' | 'shopDomain' | 'deletedAt'>,
  rawBody: Buffer,
  arrival: OrderArrival = {},
): Promise<string[]> => {
  const order = readOrder(rawBody);
  countMetric(BUSINESS_METRICS.ordersReceived);
  return withLogContext({ resellerStoreId: reseller.id, externalOrderId: order.externalOrderId }, () =>
    routeOrder(reseller, order, rawBody, arrival),
  );
};

const routeOrder = async (
  reseller: Pick<StoreOnShop, 'id' | 'ownerId' | 'shopDomain' | 'deletedAt'>,
  order: ReturnType<typeof readOrder>,
  rawBody: Buffer,
  { requestId, via = 'webhook', early }: OrderArrival,
): Promise<string[]> => {
  if (reseller.deletedAt) {
    logger.info('order of a deleted reseller store: no jobs');
    return [];
  }
  if (via === 'webhook') rememberStoreOfShop(reseller);

  // The store's policy and its vendor tags, in one Query of its partition: the policy costs no read of its own.
  const { routingPolicy, vendorTags } = await (early?.storeId === reseller.id ? early.routing : routingOf(reseller.id));
  const facts = { financialStatus: order.financialStatus, riskRecommendation: null, test: order.test };
  const classified = classifyLineItems(order.lineItems, vendorTags);
  // A test order under `testOrders: skip` is never routed: every item is unrouted, reason `test_order` (§11).
  const { groups, unrouted } = skipsTestOrder(routingPolicy, facts)
    ? { groups: [], unrouted: testOrderLines(order.lineItems.length) }
    : classified;
  const recorded = { ownerId: reseller.ownerId, resellerStoreId: reseller.id, externalOrderId: order.externalOrderId };
  if (!groups.length) {
    // Recorded all the same (CONTRACT.md §10.8): the merchant sees which suppliers to add.
    const result = await recordUnroutedOrder({ ...recorded, rawBody, receivedVia: via, unroutedLines: unrouted });
    if (result.created) countMetric(BUSINESS_METRICS.ordersWithUnroutedItems);
    logger.info(result.created ? 'order matches no source store: recorded, no jobs' : 'order redelivered', {
      jobIds: result.jobIds,
    });
    return result.jobIds;
  }

  // Held for each reason that applies (CONTRACT.md §11); none, and the jobs go on at once, as before.
  const hold = holdOnArrival(routingPolicy, facts, now());
  const result = await createJobsForOrder({
    ...recorded,
    resellerShopDomain: reseller.shopDomain,
    rawBody,
    groups,
    receivedVia: via,
    unroutedLines: unrouted,
    hold,
  });

  if (result.created) {
    countMetric(BUSINESS_METRICS.ordersRouted);
    if (hold) countHolds(hold, result.written.length);
    if (unrouted.length) countMetric(BUSINESS_METRICS.ordersWithUnroutedItems);
    logger.info('order routed', { jobIds: result.jobIds });
  } else {
    logger.info('order redelivered: no new jobs', { jobIds: result.jobIds, written: result.written.length });
  }
  // Refunds or returns that came first are taken before any job is sent: a placement sees their cuts.
  if (result.kept) await takeKeptAfterSale(reseller, result.kept, requestId);
  await sendMessages(result.written, via, requestId);
  return result.jobIds;
};

/**
 * The messages of the jobs a call wrote. A redelivery sends nothing for the jobs that existed: their
 * messages went out with the first webhook call, and a job whose message was lost is the reconciler's (a
 * second message here would be a second live one). The jobs it wrote itself (a crash had left them
 * unwritten) get theirs now. Held jobs get no message that would place them: a delay gets its order's
 * one release message (shared/order-flow/holding.ts).
 */
const sendMessages = async (written: SyncJob[], via: 'webhook' | 'poll', requestId: string | undefined) => {
  const going = written.filter((job) => !job.hold);
  const delayed = written.find((job) => job.hold?.until);
  if (!delayed && !going.length) return;
  try {
    if (delayed) await sendRelease(delayed, requestId);
    if (going.length) await enqueueJobs(going.map((job) => jobMessage(job, via, requestId)));
  } catch (error) {
    logger.error('enqueue failed; the reconciler will send these jobs their message', {
      jobIds: written.map((j) => j.id),
      error: (error as Error).name,
    });
  }
};
