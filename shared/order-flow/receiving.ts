import { ValidationError } from '../core/errors.js';
import { now, syncJobId } from '../core/ids.js';
import { BUSINESS_METRICS, countMetric, logger, withLogContext } from '../core/telemetry.js';
import { readResellerOrder } from '../domain/orders.js';
import { classifyLineItems, holdOnArrival, skipsTestOrder, testOrderLines } from '../domain/routing.js';
import { routingOf, type StoreOnShop } from '../entities/store.js';
import { countHolds, sendRelease } from './holding.js';
import { loadRecord } from './order-repository.js';
import type { SyncJob } from './order-sync-job.js';
import { jobMessage } from './placing-message.js';
import { enqueueJobs } from './placing-queue.js';
import { takeKeptAfterSale } from './refunding-request.js';
import { createJobsForOrder } from './routing-jobs.js';
import { recordUnroutedOrder } from './routing-unrouted.js';

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
 * raw body kept with them (shared/order-flow/routing-jobs.ts), then one queue message per job, carrying
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
