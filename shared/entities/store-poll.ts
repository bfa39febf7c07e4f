import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { lists, storeOfKey } from '../dynamo/keys.js';
import { attributes, dynamo, getItem, type Item, isConditionFailure, queryKeys, TABLE } from '../dynamo/table.js';
import { type StoreFields, type StoreKind, type StoreOnShop, storeFrom, storeKey } from './store.js';

/**
 * What the poller (shared/polling, CONTRACT.md §10.7) keeps of a store, on the store item itself, so
 * a poll reads one item: the watermark, the orders handled at or near it, and its run of failures.
 * Written only by the poller, and only when a poll handled something or failed: a poll with no
 * changes writes nothing.
 */
export interface PollMark {
  /** The latest `updated_at` handled; null until the first (the store's `createdAt` stands for it). */
  watermark: string | null;
  /** `<orderId>@<updated_at>` of the changes handled within the overlap before the watermark. */
  recent: string[];
  /** Polls that failed in a row (0 after one that did not). */
  failures: number;
  /** No platform call before this time (ISO): the shop answered 429 with `Retry-After`. */
  notBefore: string | null;
}

/** The attributes of a `PollMark` on the store item. */
export const POLL_ATTRIBUTES = {
  watermark: 'pollWatermark',
  recent: 'pollRecent',
  failures: 'pollFailures',
  notBefore: 'pollNotBefore',
} as const;

/** A store as the poller reads it: its fields, its reseller store (a source store's), and its mark. */
export interface PolledStore extends StoreFields {
  kind: StoreKind;
  resellerStoreId: string | null;
  mark: PollMark;
}

const strings = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((entry): entry is string => typeof entry === 'string') : [];

export const polledStoreFrom =
  (kind: StoreKind) =>
  (item: Item): PolledStore => {
    const entity = `${kind} store`;
    const read = attributes(item, entity);
    const failures = item[POLL_ATTRIBUTES.failures];
    return {
      ...storeFrom(item, entity),
      kind,
      resellerStoreId: kind === 'source' ? read.string('resellerStoreId') : null,
      mark: {
        watermark: read.stringOrNull(POLL_ATTRIBUTES.watermark),
        recent: strings(item[POLL_ATTRIBUTES.recent]),
        failures: typeof failures === 'number' ? failures : 0,
        notBefore: read.stringOrNull(POLL_ATTRIBUTES.notBefore),
      },
    };
  };

/** The store as a verified webhook's use cases take it (the lookups index's view of it). */
export const storeOnShopOf = (store: PolledStore): StoreOnShop => ({
  kind: store.kind,
  id: store.id,
  ownerId: store.ownerId,
  resellerStoreId: store.resellerStoreId,
  shopDomain: store.shopDomain,
  createdAt: store.createdAt,
  deletedAt: store.deletedAt,
  secrets: { webhookSecret: store.secrets.webhookSecret },
});

// ---------- the poller's writes, on the store item

const names = {
  '#w': POLL_ATTRIBUTES.watermark,
  '#r': POLL_ATTRIBUTES.recent,
  '#f': POLL_ATTRIBUTES.failures,
  '#n': POLL_ATTRIBUTES.notBefore,
};

/** The watermark moved: never back (a poll of the same store that overlapped this one wins); false when it had. */
export const savePollMark = async (store: PolledStore, mark: Pick<PollMark, 'watermark' | 'recent'>) => {
  try {
    await dynamo.send(
      new UpdateCommand({
        TableName: TABLE(),
        Key: storeKey(store.kind, store.id),
        UpdateExpression: 'SET #w = :w, #r = :r REMOVE #f, #n',
        ConditionExpression: 'attribute_exists(PK) AND (attribute_not_exists(#w) OR #w <= :w)',
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: { ':w': mark.watermark, ':r': mark.recent },
      }),
    );
    return true;
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
    return false;
  }
};

/** A poll that went through after failures: their count is reset. */
export const clearFailures = (store: PolledStore) =>
  dynamo.send(
    new UpdateCommand({
      TableName: TABLE(),
      Key: storeKey(store.kind, store.id),
      UpdateExpression: 'REMOVE #f, #n',
      ConditionExpression: 'attribute_exists(PK)',
      ExpressionAttributeNames: { '#f': names['#f'], '#n': names['#n'] },
    }),
  );

/** One more failure in a row, and when to call the shop again after a 429. */
export const saveFailure = async (store: PolledStore, notBefore: string | null) => {
  const out = await dynamo.send(
    new UpdateCommand({
      TableName: TABLE(),
      Key: storeKey(store.kind, store.id),
      UpdateExpression: notBefore ? 'ADD #f :one SET #n = :n' : 'ADD #f :one REMOVE #n',
      ConditionExpression: 'attribute_exists(PK)',
      ExpressionAttributeNames: { '#f': names['#f'], '#n': names['#n'] },
      ExpressionAttributeValues: notBefore ? { ':one': 1, ':n': notBefore } : { ':one': 1 },
      ReturnValues: 'UPDATED_NEW',
    }),
  );
  const failures = out.Attributes?.[POLL_ATTRIBUTES.failures];
  return typeof failures === 'number' ? failures : store.mark.failures + 1;
};

/** A store as the poller reads it, by its kind and id; undefined when there is none. */
export const findPolledStore = (kind: StoreKind, id: string) => getItem(storeKey(kind, id), polledStoreFrom(kind));

/**
 * One page (of up to `limit`) of the active stores, oldest first: each store's kind and id, read from
 * the keys of GSI5 `STORES#ACTIVE` (keys only: never a Scan of a table that grows with orders).
 */
export const findActiveStoresPage = async (limit: number, startKey: Record<string, unknown> | undefined) => {
  const page = await queryKeys({
    index: 'stateLists',
    pk: lists.activeStores(),
    limit,
    exclusiveStartKey: startKey,
    forward: true,
  });
  const stores = page.keys.flatMap((key) => {
    const store = storeOfKey(key);
    return store ? [store] : [];
  });
  return { stores, lastKey: page.lastKey };
};
