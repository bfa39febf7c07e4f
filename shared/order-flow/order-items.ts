import { bodyPartNumberOf, isSyncJobKey, isUnroutedOrderMarkKey, jobIdOfPartition } from '../dynamo/keys.js';
import { attributes, type Item, keyOf } from '../dynamo/table.js';
import { type OrderCancellation, orderCancellationFrom } from './order-cancellation.js';
import { type KeptAfterSale, keptAfterSaleFrom } from './order-early-after-sale.js';
import { ENTITY_TAG, ENTITY_TAGS, type OrderItemKind } from './order-item-kind.js';
import { type SyncJob, syncJobFrom } from './order-sync-job.js';
import { type UnroutedOrder, unroutedOrderFrom } from './order-unrouted.js';

/**
 * Every kind of item an order's partition (its first job's key) holds, as one union, and the one function that
 * tells them apart. At the partition's `SJ` key: a sync job (the order's first, or another order's
 * job's own item), the record of an order none of whose items routes, or a cancellation that came
 * before its order; beside it, the parts of a large order's body and the mark of an order with
 * unrouted items. Attempts and fulfillment entries live inside the job item.
 */
export type OrderItem =
  | { kind: 'job'; job: SyncJob }
  | { kind: 'unroutedOrder'; order: UnroutedOrder }
  | { kind: 'orderCancellation'; cancellation: OrderCancellation }
  | { kind: 'earlyAfterSale'; kept: KeptAfterSale }
  | { kind: 'bodyPart'; firstJobId: string; n: number; body: Uint8Array }
  | { kind: 'unroutedMark'; firstJobId: string };

/** Whether an item is at a job's key: a job, or an order's record kept at its first job's key. */
export const isAtOrderRecordKey = (item: Item) => isSyncJobKey(item);

/** What can be at an order's first job key: its record, or the cancellation (or refunds) kept for it. */
export type OrderRecord = Extract<
  OrderItem,
  { kind: 'job' | 'unroutedOrder' | 'orderCancellation' | 'earlyAfterSale' }
>;

const KIND_OF_ENTITY_TAG = new Map<unknown, OrderItemKind>(
  Object.entries(ENTITY_TAGS).map(([kind, tag]) => [tag, kind as OrderItemKind]),
);

/**
 * The kind of an item: its entity tag, or, for an item written before items carried one, what tells it
 * apart (its sort key; at the `SJ` key, the attribute only that kind has). The one place that
 * infers it: `npm run backfill-indexes` writes the entity tag such an item lacks.
 */
export const orderItemKindOf = (item: Item): OrderItemKind => {
  const kind = KIND_OF_ENTITY_TAG.get(item[ENTITY_TAG]);
  if (kind) return kind;
  if (isUnroutedOrderMarkKey(keyOf(item))) return 'unroutedMark';
  if (bodyPartNumberOf(keyOf(item)) !== undefined) return 'bodyPart';
  if (typeof item.unroutedOrderAt === 'string') return 'unroutedOrder';
  if (typeof item.orderCancelledAt === 'string') return 'orderCancellation';
  return 'job';
};

/** Whether the item carries its entity tag (the backfill writes it on those that do not). */
export const hasEntityTag = (item: Item) => KIND_OF_ENTITY_TAG.has(item[ENTITY_TAG]);

/** An item of an order's partition, as the member of the union its kind is. */
export const orderItemFrom = (item: Item): OrderItem => {
  const key = keyOf(item);
  const firstJobId = jobIdOfPartition(key);
  switch (orderItemKindOf(item)) {
    case 'job':
      return { kind: 'job', job: syncJobFrom(item) };
    case 'unroutedOrder':
      return { kind: 'unroutedOrder', order: unroutedOrderFrom(firstJobId, item) };
    case 'orderCancellation':
      return { kind: 'orderCancellation', cancellation: orderCancellationFrom(firstJobId, item) };
    case 'earlyAfterSale':
      return { kind: 'earlyAfterSale', kept: keptAfterSaleFrom(firstJobId, item) };
    case 'bodyPart': {
      const body = item.body;
      if (!(body instanceof Uint8Array)) throw new Error(`order body part ${key.SK} of ${firstJobId} is missing`);
      return { kind: 'bodyPart', firstJobId, n: bodyPartNumberOf(key) ?? 0, body };
    }
    case 'unroutedMark':
      return { kind: 'unroutedMark', firstJobId };
  }
};

/**
 * The job at a job's key, or undefined for another item kind kept at a first job's key: the order
 * cancellation that came before its order, the record of an order none of whose items routes.
 */
export const syncJobOrNothing = (item: Item): SyncJob | undefined => {
  const parsed = orderItemFrom(item);
  return parsed.kind === 'job' ? parsed.job : undefined;
};

/** The item at a first job's key, as a record (a body part or a mark is never there). */
export const orderRecordFrom = (item: Item): OrderRecord => {
  const parsed = orderItemFrom(item);
  if (parsed.kind === 'bodyPart' || parsed.kind === 'unroutedMark')
    throw new Error(`corrupt order record: a ${parsed.kind} at ${attributes(item, 'order').string('PK')}`);
  return parsed;
};
