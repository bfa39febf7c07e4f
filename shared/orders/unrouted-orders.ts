import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { now, syncJobId } from '../core/ids.js';
import type { UnroutedLine } from '../domain/routing.js';
import { getItem, type Item, isConditionFailure, TABLE, transactWrite } from '../dynamo/table.js';
import { compressBody, orderBodyPartItem, PART_BYTES, splitParts } from '../order/order-body.js';
import {
  isOrderCancellation,
  orderCancellationFrom,
  REPLACES_ORDER_CANCELLATION,
} from '../order/order-cancellation.js';
import { type ReceivedVia, syncJobFrom, syncJobKey } from '../order/sync-job.js';
import {
  isUnroutedOrder,
  type UnroutedOrder,
  unroutedOrderItem,
  unroutedOrderMarkItem,
} from '../order/unrouted-order.js';

export interface NewUnroutedOrder {
  ownerId: string;
  resellerStoreId: string;
  externalOrderId: string;
  rawBody: Buffer;
  receivedVia: ReceivedVia;
  /** Every line of the order, none of which routes. */
  unroutedLines: UnroutedLine[];
}

const NEW_ITEM = 'attribute_not_exists(PK)';

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
  const compressed = compressBody(input.rawBody);
  const parts = compressed.length <= PART_BYTES ? [] : splitParts(compressed);
  const record: UnroutedOrder = {
    firstJobId,
    ownerId: input.ownerId,
    resellerStoreId: input.resellerStoreId,
    externalOrderId: input.externalOrderId,
    receivedAt,
    receivedVia: input.receivedVia,
    unroutedLines: input.unroutedLines,
    cancelledAt: null,
    order: parts.length ? { parts: parts.length } : { body: compressed },
  };
  const others: Item[] = [
    ...parts.map((bytes, n) => orderBodyPartItem(firstJobId, n, bytes)),
    unroutedOrderMarkItem({ firstJobId, resellerStoreId: input.resellerStoreId, receivedAt }),
  ];
  const write = (item: Item, condition = NEW_ITEM) =>
    transactWrite([item, ...others].map((Item, i) => put(Item, i === 0 ? condition : NEW_ITEM)));
  try {
    await write(unroutedOrderItem(record));
    return { created: true, jobIds: [] };
  } catch (error) {
    if (!isConditionFailure(error) && !(error instanceof TransactionCanceledException)) throw error;
    const found = await getItem(syncJobKey(firstJobId), (item) => item, true);
    if (found && isOrderCancellation(found)) {
      const { cancelledAt } = orderCancellationFrom(firstJobId, found);
      await write(unroutedOrderItem({ ...record, cancelledAt }), REPLACES_ORDER_CANCELLATION);
      return { created: true, jobIds: [] };
    }
    if (found && isUnroutedOrder(found)) return { created: false, jobIds: [] };
    const job = found && syncJobFrom(found);
    if (!job?.orderJobIds) throw error;
    return { created: false, jobIds: job.orderJobIds };
  }
};

const put = (Item: Item, ConditionExpression: string) => ({ Put: { TableName: TABLE(), Item, ConditionExpression } });
