import { UNROUTED_REASONS, type UnroutedLine } from '../domain/routing.js';
import { indexEntry, keys, listSortKey, lists } from '../dynamo/keys.js';
import { attributes, type Item } from '../dynamo/table.js';
import { entityTagOf } from './order-item-kind.js';
import { EXPIRES_AT, jobExpiresAt } from './order-sync-job.js';

/**
 * The unrouted order entity (CONTRACT.md §10.8): the record of an order none of whose items routes
 * to a supplier, which has no job to be its record. It is kept where the order's first job would
 * be (that key is the order's dedup record: a redelivery's conditional put finds it), with the
 * order's body as the first job would keep it (inline, or in parts beside it: order-body.ts), and
 * carries the order's entry in its store's list of orders. Also here: the mark of any order with
 * unrouted items (an item of the order's partition), whose entry in its store's list of such orders
 * names the order's record (shared/dynamo/keys.ts `orderRecordKeyOf`).
 */
export interface UnroutedOrder {
  firstJobId: string;
  ownerId: string;
  resellerStoreId: string;
  externalOrderId: string;
  receivedAt: string;
  receivedVia: 'webhook' | 'poll';
  /** Every item of the order, with why it went to no supplier. */
  unroutedLines: UnroutedLine[];
  /** When the reseller cancelled the order (`orders/cancelled`); null: not cancelled. */
  cancelledAt: string | null;
  /** The order's compressed raw body inline, or the number of its parts (order-body.ts). */
  order: { body: Uint8Array } | { parts: number };
  /** When the shopper's personal data was erased from the kept order (order-redaction.ts); null: not. */
  redactedAt?: string | null;
}

/**
 * The record's end (the table's TTL): an order with no job has nothing left to do once received, so it is
 * kept as a job that ended then is, JOB_RETENTION_DAYS (issue 44); its mark and body parts go with it.
 */
export const unroutedOrderExpiresAt = (receivedAt: string) => jobExpiresAt(receivedAt);

/** When the order was received (items written before the entity tag also told this kind apart by it). */
const MARK = 'unroutedOrderAt';

export const unroutedOrderItem = (order: UnroutedOrder): Item => ({
  ...keys.syncJob(order.firstJobId),
  ...entityTagOf('unroutedOrder'),
  ...indexEntry(
    'resourceLists',
    lists.storeOrders(order.resellerStoreId).of(order.firstJobId),
    listSortKey(order.receivedAt, order.firstJobId),
  ),
  [MARK]: order.receivedAt,
  ownerId: order.ownerId,
  resellerStoreId: order.resellerStoreId,
  externalOrderId: order.externalOrderId,
  ...(order.receivedVia === 'webhook' ? {} : { receivedVia: order.receivedVia }),
  unroutedLines: unroutedLinesAttribute(order.unroutedLines),
  ...(order.cancelledAt === null ? {} : { cancelledAt: order.cancelledAt }),
  ...('body' in order.order ? { orderBody: order.order.body } : { orderBodyParts: order.order.parts }),
  ...(order.redactedAt ? { redactedAt: order.redactedAt } : {}),
  [EXPIRES_AT]: unroutedOrderExpiresAt(order.receivedAt),
});

export const unroutedOrderFrom = (firstJobId: string, item: Item): UnroutedOrder => {
  const read = attributes(item, 'unrouted order');
  return {
    firstJobId,
    ownerId: read.string('ownerId'),
    resellerStoreId: read.string('resellerStoreId'),
    externalOrderId: read.string('externalOrderId'),
    receivedAt: read.string(MARK),
    receivedVia: item.receivedVia === undefined ? 'webhook' : read.oneOf('receivedVia', ['webhook', 'poll'] as const),
    unroutedLines: unroutedLinesFrom(read.stringOrNull('unroutedLines')) ?? [],
    cancelledAt: read.stringOrNull('cancelledAt'),
    order: item.orderBody instanceof Uint8Array ? { body: item.orderBody } : { parts: read.number('orderBodyParts') },
    redactedAt: read.stringOrNull('redactedAt'),
  };
};

/** The condition of a write to the record itself (its erasure: order-redaction.ts). */
export const UNROUTED_ORDER_EXISTS = `attribute_exists(${MARK})`;

/** The update that records the order's cancellation at `at`, once: a redelivery keeps the first time. */
export const unroutedOrderCancellation = (at: string) => ({
  UpdateExpression: 'SET cancelledAt = :at',
  ConditionExpression: `attribute_exists(${MARK}) AND attribute_not_exists(cancelledAt)`,
  ExpressionAttributeValues: { ':at': at },
});

/**
 * The mark of an order with unrouted items: its entry in its store's list of those orders, sorted as
 * the order's own entry. Written once with the order's record; its `expiresAt` (the table's TTL) with it
 * for an unrouted order, or by the retention sweep once a routed order's jobs ended (order-redaction.ts).
 */
export const unroutedOrderMarkItem = (mark: {
  firstJobId: string;
  resellerStoreId: string;
  receivedAt: string;
  expiresAt?: number;
}): Item => ({
  ...keys.unroutedOrderMark(mark.firstJobId),
  ...entityTagOf('unroutedMark'),
  ...indexEntry(
    'resourceLists',
    lists.storeUnroutedOrders(mark.resellerStoreId).of(mark.firstJobId),
    listSortKey(mark.receivedAt, mark.firstJobId),
  ),
  ...(mark.expiresAt === undefined ? {} : { [EXPIRES_AT]: mark.expiresAt }),
});

// ---------- unrouted lines, as this record and the first job of an order keep them

/** One letter per reason: every byte of the first job is paid again by each of its writes. */
const REASON_LETTERS = { no_source_store: 's', no_vendor: 'v', gift_card: 'g', test_order: 't' } as const;

/** `<position><letter>,…`: `3s,5g` is line 3 (no source store) and line 5 (a gift card). */
export const unroutedLinesAttribute = (lines: UnroutedLine[]) =>
  lines.map((line) => `${line.position}${REASON_LETTERS[line.reason]}`).join(',');

export const unroutedLinesFrom = (text: string | null): UnroutedLine[] | null => {
  if (!text) return null;
  return text.split(',').map((entry) => {
    const reason = UNROUTED_REASONS.find((r) => REASON_LETTERS[r] === entry.slice(-1));
    const position = Number(entry.slice(0, -1));
    if (!reason || !Number.isInteger(position)) throw new Error(`unreadable unrouted line '${entry}'`);
    return { position, reason };
  });
};
