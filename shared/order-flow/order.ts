import type { UnroutedLine } from '../domain/routing.js';
import type { Item } from '../dynamo/table.js';
import type { OrderRefund } from './order-after-sale.js';
import { type OrderRecord, orderRecordFrom } from './order-items.js';
import type { ReceivedVia, StoredOrder, SyncJob } from './order-sync-job.js';
import type { UnroutedOrder } from './order-unrouted.js';

/**
 * A reseller order as the service saw it (CONTRACT.md §10.8), read from its record at its first
 * job's key: the first job (whose order attributes are the order's: `orderJobIds`, `receivedVia`,
 * `unroutedLines`), or, for an order none of whose items routes, the unrouted order record
 * (order-unrouted.ts). Not an item of its own: nothing more is written per order than those.
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
  /** Where the order's body is: what the unrouted lines' details are read from (order-body.ts). */
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
