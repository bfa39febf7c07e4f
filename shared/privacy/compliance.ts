import { ValidationError } from '../core/errors.js';
import { derivedId, now, syncJobId } from '../core/ids.js';
import { type AuditAction, type AuditedResource, recordAuditEntry, SYSTEM } from '../entities/audit-entry.js';
import { DATA_REQUEST_RETENTION_SECONDS, type DataRequestOrder, putDataRequest } from '../entities/data-request.js';
import {
  deleteResellerStoreItem,
  deleteSourceStoreItems,
  eraseStoreSecrets,
  type StoreOnShop,
} from '../entities/store.js';
import { findListedOrdersPage, type ListStart, storeOrderListShards } from '../order-flow/order.js';
import { loadSourceStore } from '../stores/stores.js';
import { type OrderRedaction, personalFieldsHeld, redactOrder, type SupplierOrderCopy } from './redact.js';

/**
 * The three compliance topics every Shopify app takes (CONTRACT.md §13), as work done after the
 * webhook's 200, through the app-webhook queue (shared/app-webhooks/topics.ts): `complianceWorkOf`
 * reads a verified delivery into the work it asks for, which holds ids only (the shop domain and its
 * verified stores, the customer's and the orders' ids, the request's id: never the customer's email
 * or phone the payload also holds); `doComplianceWork` does it. Each is
 * safe to do twice: the erasures leave what is erased, the audit entry's id follows from the request
 * (a repeat writes none), the data request's record is written again as it stands.
 */

export const COMPLIANCE_TOPICS = ['customers/redact', 'shop/redact', 'customers/data_request'] as const;
export type ComplianceTopic = (typeof COMPLIANCE_TOPICS)[number];

export const isComplianceTopic = (topic: string | undefined): topic is ComplianceTopic =>
  (COMPLIANCE_TOPICS as readonly string[]).includes(topic ?? '');

/** The most orders one request may name: far past Shopify's, and well within one SQS message of ids. */
export const MAX_REQUESTED_ORDERS = 5_000;
const MAX_ID_LENGTH = 100;

/** A store whose secret verified the delivery (the route's lookup): whose data the request is about. */
export type ComplianceStore = Pick<StoreOnShop, 'kind' | 'id' | 'ownerId' | 'resellerStoreId'>;

export type ComplianceWork = (
  | { topic: 'customers/redact'; shopDomain: string; customerId: string | null; orderIds: string[] }
  | {
      topic: 'shop/redact';
      shopDomain: string;
      /** Where the erasure of a large shop's orders goes on: the reseller store and its last order done. */
      resume?: { resellerStoreId: string; partition: string; after: ListStart };
      /** What the runs before this one erased, per reseller store (counts only). */
      counts?: Record<string, ShopCounts>;
    }
  | {
      topic: 'customers/data_request';
      shopDomain: string;
      customerId: string | null;
      orderIds: string[];
      dataRequestId: string;
    }
) & { stores: ComplianceStore[] };

const idText = (value: unknown): string | undefined => {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return String(value);
  if (typeof value === 'string' && value.length > 0 && value.length <= MAX_ID_LENGTH) return value;
  return undefined;
};

const idsOf = (value: unknown, param: string): string[] => {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || value.length > MAX_REQUESTED_ORDERS)
    throw new ValidationError(`${param} must be an array of at most ${MAX_REQUESTED_ORDERS} order ids.`, param);
  return [
    ...new Set(
      value.map((entry, i) => {
        const id = idText(entry);
        if (id === undefined) throw new ValidationError(`${param}[${i}] must be an order id.`, `${param}[${i}]`);
        return id;
      }),
    ),
  ];
};

const customerIdOf = (payload: Record<string, unknown>) => {
  const customer = payload.customer;
  return customer && typeof customer === 'object' ? (idText((customer as { id?: unknown }).id) ?? null) : null;
};

/**
 * The work a verified compliance delivery asks for, its ids only. A body that is not a JSON object,
 * or whose ids are not ids, is a 400 naming the field (nothing is done).
 */
export const complianceWorkOf = (
  topic: ComplianceTopic,
  shopDomain: string,
  stores: ComplianceStore[],
  payload: unknown,
): ComplianceWork => {
  if (!payload || typeof payload !== 'object' || Array.isArray(payload))
    throw new ValidationError('The body must be a JSON object.');
  const body = payload as Record<string, unknown>;
  if (topic === 'shop/redact') return { topic, shopDomain, stores };
  if (topic === 'customers/redact')
    return {
      topic,
      shopDomain,
      stores,
      customerId: customerIdOf(body),
      orderIds: idsOf(body.orders_to_redact, 'orders_to_redact'),
    };
  const request = body.data_request;
  const dataRequestId = request && typeof request === 'object' ? idText((request as { id?: unknown }).id) : undefined;
  if (dataRequestId === undefined) throw new ValidationError('data_request.id must be an id.', 'data_request.id');
  return {
    topic,
    shopDomain,
    stores,
    customerId: customerIdOf(body),
    orderIds: idsOf(body.orders_requested, 'orders_requested'),
    dataRequestId,
  };
};

/** What a shop's erasure came to for one reseller store. */
export interface ShopCounts {
  ordersHeld: number;
  ordersErased: number;
  jobs: number;
  supplierOrders: number;
}

/** The supplier orders listed in one audit entry at most (an item holds 400 KB); `supplierOrdersListed` says. */
export const MAX_LISTED_SUPPLIER_ORDERS = 1_000;

/** What one redaction of a store's orders came to, in counts and ids (never values). */
interface Tally {
  ordersRequested: number;
  ordersHeld: number;
  ordersErased: number;
  jobs: number;
  supplierOrders: SupplierOrderCopy[];
}

const emptyTally = (): Tally => ({ ordersRequested: 0, ordersHeld: 0, ordersErased: 0, jobs: 0, supplierOrders: [] });

const add = (tally: Tally, redaction: OrderRedaction) => {
  tally.ordersRequested++;
  if (redaction.held) tally.ordersHeld++;
  if (redaction.erased) tally.ordersErased++;
  tally.jobs += redaction.jobs;
  tally.supplierOrders.push(...redaction.supplierOrders);
};

/** The audit entry of a request for one store, written at most once (its id follows from the request). */
const audit = async (
  action: AuditAction,
  store: Pick<StoreOnShop, 'kind' | 'id' | 'ownerId' | 'resellerStoreId'>,
  request: string,
  metadata: Record<string, unknown>,
) => {
  const resourceType: AuditedResource = store.kind === 'reseller' ? 'reseller_store' : 'source_store';
  await recordAuditEntry({
    id: derivedId('aud', action, store.id, request),
    action,
    job: { id: store.id, ownerId: store.ownerId, resellerStoreId: store.resellerStoreId ?? store.id },
    resourceType,
    actor: SYSTEM,
    metadata,
  });
};

const resellerStoresOf = (work: ComplianceWork) => work.stores.filter((store) => store.kind === 'reseller');

const redactCustomer = async (work: Extract<ComplianceWork, { topic: 'customers/redact' }>, at: string) => {
  for (const store of resellerStoresOf(work)) {
    const tally = emptyTally();
    for (const orderId of work.orderIds) add(tally, await redactOrder(syncJobId(store.id, orderId, 0), at));
    const request = `${work.customerId ?? ''}\n${[...work.orderIds].sort().join(',')}`;
    await audit('customer.redacted', store, request, {
      ...tally,
      supplierOrders: tally.supplierOrders.slice(0, MAX_LISTED_SUPPLIER_ORDERS),
      supplierOrderCount: tally.supplierOrders.length,
    });
  }
};

/** Orders erased per call of `doComplianceWork` on a shop, before it hands the rest on (`resume`). */
export const SHOP_ORDERS_PER_RUN = 500;

/**
 * The orders of one list partition erased from `after` on, counted, until the budget runs out:
 * where the next run goes on, or undefined once the partition is done.
 */
const redactOrdersOf = async (
  partition: string,
  start: ListStart | undefined,
  count: ShopCounts,
  budget: { left: number },
  at: string,
): Promise<ListStart | undefined> => {
  let after = start;
  do {
    const limit = Math.max(1, Math.min(100, budget.left));
    const page = await findListedOrdersPage({ shard: partition, limit, start: after });
    for (const { firstJobId } of page.orders) {
      const redaction = await redactOrder(firstJobId, at);
      if (redaction.held) count.ordersHeld++;
      if (redaction.erased) count.ordersErased++;
      count.jobs += redaction.jobs;
      count.supplierOrders += redaction.supplierOrders.length;
    }
    budget.left -= page.orders.length;
    after = page.lastKey;
    if (after && budget.left <= 0) return after;
  } while (after);
  return undefined;
};

/**
 * A shop's erasure: every order of each of its reseller stores, then each store (reseller and source)
 * soft-deleted and its secrets erased. A shop with more orders than SHOP_ORDERS_PER_RUN is done in
 * several runs: the work to do next is returned (its `resume`), undefined once all is done.
 */
const redactShop = async (
  work: Extract<ComplianceWork, { topic: 'shop/redact' }>,
  at: string,
): Promise<ComplianceWork | undefined> => {
  const stores = resellerStoresOf(work);
  const counts: Record<string, ShopCounts> = { ...work.counts };
  const budget = { left: SHOP_ORDERS_PER_RUN };
  const orderLists = stores.flatMap((store) =>
    storeOrderListShards(store.id).map((partition) => ({ store, partition })),
  );
  const from = work.resume ? orderLists.findIndex(({ partition }) => partition === work.resume?.partition) : 0;
  for (const { store, partition } of orderLists.slice(Math.max(0, from))) {
    counts[store.id] ??= { ordersHeld: 0, ordersErased: 0, jobs: 0, supplierOrders: 0 };
    const start = partition === work.resume?.partition ? work.resume.after : undefined;
    const after = await redactOrdersOf(partition, start, counts[store.id], budget, at);
    if (after) return { ...work, resume: { resellerStoreId: store.id, partition, after }, counts };
  }
  // Every order erased: the stores go, audited once each with the counts of what they held.
  for (const store of stores) {
    await deleteResellerStoreItem(store.ownerId, store.id, at);
    await eraseStoreSecrets('reseller', store.id, at);
    await audit('shop.redacted', store, 'shop', { ...counts[store.id], storeErased: true });
  }
  for (const store of work.stores.filter((candidate) => candidate.kind === 'source')) {
    const full = await loadSourceStore(store.id);
    if (full && !full.deletedAt) await deleteSourceStoreItems(full, at);
    await eraseStoreSecrets('source', store.id, at);
    await audit('shop.redacted', store, 'shop', { storeErased: true });
  }
  return undefined;
};

const recordDataRequest = async (work: Extract<ComplianceWork, { topic: 'customers/data_request' }>, at: string) => {
  for (const store of resellerStoresOf(work)) {
    const orders: DataRequestOrder[] = [];
    for (const externalOrderId of work.orderIds) {
      const held = await personalFieldsHeld(syncJobId(store.id, externalOrderId, 0));
      orders.push({
        externalOrderId,
        held: held !== undefined,
        syncJobIds: held?.syncJobIds ?? [],
        personalFields: held?.fields ?? [],
        redactedAt: held?.redactedAt ?? null,
      });
    }
    await putDataRequest({
      id: work.dataRequestId,
      ownerId: store.ownerId,
      resellerStoreId: store.id,
      customerId: work.customerId,
      orders,
      receivedAt: at,
      expiresAt: Math.ceil(Date.parse(at) / 1000) + DATA_REQUEST_RETENTION_SECONDS,
    });
    await audit('customer.data_requested', store, work.dataRequestId, {
      dataRequestId: work.dataRequestId,
      ordersRequested: orders.length,
      ordersHeld: orders.filter((order) => order.held).length,
    });
  }
};

/**
 * Does the work a compliance delivery asked for. Undefined when it is done; the work still to do
 * when a large shop's erasure is handed on (the caller enqueues it again).
 */
export const doComplianceWork = async (work: ComplianceWork, at = now()): Promise<ComplianceWork | undefined> => {
  if (work.topic === 'customers/redact') await redactCustomer(work, at);
  else if (work.topic === 'customers/data_request') await recordDataRequest(work, at);
  else return redactShop(work, at);
  return undefined;
};
