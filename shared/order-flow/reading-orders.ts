import { ResourceMissingError } from '../core/errors.js';
import { isId, syncJobId } from '../core/ids.js';
import { MAX_ORDER_ID_LENGTH } from '../domain/orders.js';
import type { Owner } from '../domain/owner.js';
import type { UnroutedReason } from '../domain/routing.js';
import { findResellerStore } from '../stores/stores.js';
import { findOrderPage, type Order, orderOfRecord } from './order.js';
import { loadRecord, storedOrderReading, textOf } from './order-repository.js';

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
