import { keys } from '../dynamo/keys.js';
import { attributes, type Item } from '../dynamo/table.js';
import { entityTagOf } from './order-item-kind.js';

/**
 * The order cancellation entity (CONTRACT.md §10.4): an `orders/cancelled` that arrived before its
 * `orders/create`, kept 7 days (the table's TTL) at the key the order's first job will have. The
 * order's create then collides with it (its first write is conditional on that key being free, so
 * the happy path pays nothing to look for it) and writes the order's jobs `cancelled` from the
 * start, in place of it: nothing is placed.
 */
export interface OrderCancellation {
  firstJobId: string;
  reason: string | null;
  cancelledAt: string;
  /** Epoch seconds: the table's TTL attribute. */
  expiresAt: number;
}

/** When the order was cancelled (items written before the entity tag also told this kind apart by it). */
const MARK = 'orderCancelledAt';

export const orderCancellationItem = (cancellation: OrderCancellation): Item => ({
  ...keys.syncJob(cancellation.firstJobId),
  ...entityTagOf('orderCancellation'),
  [MARK]: cancellation.cancelledAt,
  ...(cancellation.reason === null ? {} : { cancelReason: cancellation.reason }),
  expiresAt: cancellation.expiresAt,
});

export const orderCancellationFrom = (firstJobId: string, item: Item): OrderCancellation => {
  const read = attributes(item, 'order cancellation');
  return {
    firstJobId,
    reason: read.stringOrNull('cancelReason'),
    cancelledAt: read.string(MARK),
    expiresAt: read.number('expiresAt'),
  };
};

/** The condition of the write that replaces it with the order's first job. */
export const REPLACES_ORDER_CANCELLATION = `attribute_exists(${MARK})`;
