import { bodyPartNumberOf, isSyncJobKey, isUnroutedOrderMarkKey, jobIdOfPartition, keys } from '../dynamo/keys.js';
import { attributes, type Item, keyOf } from '../dynamo/table.js';
import type { ApprovedReturn, Refund } from './order-after-sale.js';
import {
  ENTITY_TAG,
  ENTITY_TAGS,
  entityTagOf,
  type OrderItemKind,
  type SyncJob,
  syncJobFrom,
  type UnroutedOrder,
  unroutedOrderFrom,
} from './order-sync-job.js';

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
const CANCELLED_MARK = 'orderCancelledAt';

export const orderCancellationItem = (cancellation: OrderCancellation): Item => ({
  ...keys.syncJob(cancellation.firstJobId),
  ...entityTagOf('orderCancellation'),
  [CANCELLED_MARK]: cancellation.cancelledAt,
  ...(cancellation.reason === null ? {} : { cancelReason: cancellation.reason }),
  expiresAt: cancellation.expiresAt,
});

export const orderCancellationFrom = (firstJobId: string, item: Item): OrderCancellation => {
  const read = attributes(item, 'order cancellation');
  return {
    firstJobId,
    reason: read.stringOrNull('cancelReason'),
    cancelledAt: read.string(CANCELLED_MARK),
    expiresAt: read.number('expiresAt'),
  };
};

/** The condition of the write that replaces it with the order's first job. */
export const REPLACES_ORDER_CANCELLATION = `attribute_exists(${CANCELLED_MARK})`;

/**
 * Refunds and returns that arrived before their order (CONTRACT.md §15, "kept when early", as §10
 * keeps an early `orders/cancelled`: order-items.ts): kept 7 days (the table's TTL) at the key
 * the order's first job will have, each appended once (by its id). The order's create collides with
 * it (its first write is conditional on that key being free: the happy path pays nothing), writes
 * the order's jobs in its place and then takes each kept one as if it came then. A cancellation that
 * also came first takes the key (nothing is placed, nothing is left to refund). Ids, quantities and
 * reasons only: no personal data.
 */
export type EarlyAfterSale = { refund: Refund } | { approved: ApprovedReturn };

export interface KeptAfterSale {
  firstJobId: string;
  kept: EarlyAfterSale[];
}

/** How long one is kept: as a cancellation that came first (7 days, the table's TTL). */
export const EARLY_KEEP_SECONDS = 7 * 24 * 3600;

/** The kept list; only this kind of item has it. */
const KEPT_MARK = 'earlyAfterSale';

const idOf = (entry: EarlyAfterSale) =>
  'refund' in entry ? `refund:${entry.refund.id}` : `return:${entry.approved.id}`;

/** The update that keeps one more (once by its id), on condition that the key is free or holds such a list. */
export const keepEarlyAfterSaleUpdate = (firstJobId: string, entry: EarlyAfterSale, expiresAt: number) => ({
  Key: keys.syncJob(firstJobId),
  UpdateExpression:
    'SET #tag = :tag, #mark = list_append(if_not_exists(#mark, :none), :entry), expiresAt = :expiresAt ADD #ids :id',
  ConditionExpression: '(attribute_not_exists(PK) OR attribute_exists(#mark)) AND NOT contains(#ids, :idText)',
  ExpressionAttributeNames: {
    '#tag': Object.keys(entityTagOf('earlyAfterSale'))[0],
    '#mark': KEPT_MARK,
    '#ids': 'earlyIds',
  },
  ExpressionAttributeValues: {
    ':tag': Object.values(entityTagOf('earlyAfterSale'))[0],
    ':none': [],
    ':entry': [entry],
    ':expiresAt': expiresAt,
    ':id': new Set([idOf(entry)]),
    ':idText': idOf(entry),
  },
});

export const keptAfterSaleFrom = (firstJobId: string, item: Item): KeptAfterSale => {
  const read = attributes(item, 'early refunds and returns');
  return { firstJobId, kept: read.object<EarlyAfterSale[]>(KEPT_MARK) };
};

/** Whether the item is such a list (an item written before tags never was). */
export const isKeptAfterSale = (item: Item) => Array.isArray(item[KEPT_MARK]);

/** The condition of the write that replaces it with the order's first job, or with a cancellation. */
export const REPLACES_KEPT_AFTER_SALE = `attribute_exists(${KEPT_MARK})`;

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
