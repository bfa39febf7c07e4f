import type { ServiceLevel } from '../domain/business-days.js';
import type { PricingConfig } from '../domain/money.js';
import { keys, lists, vendorTagOf } from '../dynamo/keys.js';
import { attributes, getItem, type Item, keyOf, listPage, queryPartition, TABLE, transactIf } from '../dynamo/table.js';
import { DELISTED, type StoreFields, storeAttributes, storeFrom, storeIndexEntries, storeKey } from './store.js';

/**
 * The source store entity (a supplier's store, `sst_…`) and its vendor-tag item, which makes "one
 * active source store per tag" a key constraint: the only place that knows their items.
 */
export const PRICING_MODES = ['percentage', 'field_rules'] as const;
export type PricingMode = (typeof PRICING_MODES)[number];

export interface SourceStore extends StoreFields {
  resellerStoreId: string;
  vendorTag: string;
  pricingMode: PricingMode;
  pricingConfig: PricingConfig;
  /** The supplier's promise (CONTRACT.md §16.1), its zone resolved; null: no promise, no due times. */
  serviceLevel?: ServiceLevel | null;
}

export const sourceStoreKey = (id: string) => storeKey('source', id);

/** The key of the vendor-tag item of `vendorTag` under a reseller store. */
export const vendorTagKey = (resellerStoreId: string, vendorTag: string) => keys.vendorTag(resellerStoreId, vendorTag);

/** Every vendor-tag item of a reseller store: one partition, one sort-key prefix. */
export const vendorTagsOf = (resellerStoreId: string) => keys.vendorTagPrefix(resellerStoreId);

/** A new source store's item: in its reseller store's list (GSI1) and under its shop domain (GSI2). */
export const sourceStoreItem = (store: SourceStore): Item => ({
  ...sourceStoreKey(store.id),
  ...storeIndexEntries('source', store, lists.sourceStores(store.resellerStoreId)),
  ...storeAttributes(store),
  resellerStoreId: store.resellerStoreId,
  vendorTag: store.vendorTag,
  pricingMode: store.pricingMode,
  pricingConfig: store.pricingConfig,
  ...(store.serviceLevel ? { serviceLevel: store.serviceLevel } : {}),
});

/**
 * The vendor-tag item: it makes "one active source store per tag" a key constraint, and routing
 * reads every active tag of a reseller store with one Query.
 */
export const vendorTagItem = (store: SourceStore): Item => ({
  ...vendorTagKey(store.resellerStoreId, store.vendorTag),
  sourceStoreId: store.id,
  createdAt: store.createdAt,
});

export const sourceStoreFrom = (item: Item): SourceStore => {
  const read = attributes(item, 'source store');
  return {
    ...storeFrom(item, 'source store'),
    resellerStoreId: read.string('resellerStoreId'),
    vendorTag: read.string('vendorTag'),
    pricingMode: read.oneOf('pricingMode', PRICING_MODES),
    pricingConfig: read.object<PricingConfig>('pricingConfig'),
    serviceLevel: read.optionalObject<ServiceLevel>('serviceLevel') ?? null,
  };
};

/** A vendor-tag item: which source store holds the tag. */
export const vendorTagFrom = (item: Item) => ({
  vendorTag: vendorTagOf(keyOf(item)),
  sourceStoreId: attributes(item, 'vendor tag').string('sourceStoreId'),
});

/** The new vendor tag's item, put only where no store holds the tag ("one active store per tag"). */
const claimVendorTag = (store: SourceStore) => ({
  Put: { TableName: TABLE(), Item: vendorTagItem(store), ConditionExpression: 'attribute_not_exists(PK)' },
});

/**
 * Frees a store's vendor tag for another store, as a transaction's Delete; the condition keeps a
 * racing delete or retag from freeing a successor's tag.
 */
const releaseVendorTag = (resellerStoreId: string, vendorTag: string, id: string) => ({
  Delete: {
    TableName: TABLE(),
    Key: vendorTagKey(resellerStoreId, vendorTag),
    ConditionExpression: 'sourceStoreId = :id',
    ExpressionAttributeValues: { ':id': id },
  },
});

/**
 * Puts a new source store's item with its vendor tag's, in one transaction: `vendor_tag_taken` when
 * another active store holds the tag.
 */
export const putSourceStore = async (store: SourceStore): Promise<'created' | 'vendor_tag_taken'> => {
  const written = await transactIf([
    { Put: { TableName: TABLE(), Item: sourceStoreItem(store), ConditionExpression: 'attribute_not_exists(PK)' } },
    claimVendorTag(store),
  ]);
  if (written === true) return 'created';
  if (written.failed[1]) return 'vendor_tag_taken';
  // The store's own id was taken, or the transaction was cancelled otherwise: a fault, not an outcome.
  throw new Error(`source store ${store.id} was not created: its transaction was cancelled`);
};

/** Soft-deletes a store read active and frees its tag, in one transaction; false when it was deleted meanwhile. */
export const deleteSourceStoreItems = async (store: SourceStore, at: string) =>
  (await transactIf([
    {
      Update: {
        TableName: TABLE(),
        Key: sourceStoreKey(store.id),
        UpdateExpression: `SET deletedAt = :at, updatedAt = :at REMOVE ${DELISTED.join(', ')}`,
        ConditionExpression: 'deletedAt = :null',
        ExpressionAttributeValues: { ':at': at, ':null': null },
      },
    },
    releaseVendorTag(store.resellerStoreId, store.vendorTag, store.id),
  ])) === true;

/** The store's new values, conditional on the store as read: a racing change or delete fails it, never undone. */
const sourceStoreUpdate = (store: SourceStore, updated: SourceStore) => ({
  Update: {
    TableName: TABLE(),
    Key: sourceStoreKey(store.id),
    UpdateExpression:
      'SET #name = :name, vendorTag = :vendorTag, pricingMode = :pricingMode, pricingConfig = :pricingConfig, ' +
      'serviceLevel = :serviceLevel, updatedAt = :at',
    ConditionExpression: 'deletedAt = :null AND vendorTag = :readTag AND updatedAt = :readAt',
    ExpressionAttributeNames: { '#name': 'name' },
    ExpressionAttributeValues: {
      ':name': updated.name,
      ':vendorTag': updated.vendorTag,
      ':pricingMode': updated.pricingMode,
      ':pricingConfig': updated.pricingConfig,
      ':serviceLevel': updated.serviceLevel ?? null,
      ':at': updated.updatedAt,
      ':null': null,
      ':readTag': store.vendorTag,
      ':readAt': store.updatedAt,
    },
  },
});

/**
 * Writes a store's changes over the store as read; a new vendor tag moves the tag item in the same
 * transaction. `vendor_tag_taken` when another store holds the new tag, `changed` when the store
 * was changed or deleted meanwhile.
 */
export const updateSourceStoreItems = async (
  store: SourceStore,
  updated: SourceStore,
): Promise<'updated' | 'vendor_tag_taken' | 'changed'> => {
  const retag = updated.vendorTag !== store.vendorTag;
  const written = await transactIf([
    sourceStoreUpdate(store, updated),
    ...(retag ? [claimVendorTag(updated), releaseVendorTag(store.resellerStoreId, store.vendorTag, store.id)] : []),
  ]);
  if (written === true) return 'updated';
  return retag && written.failed[1] ? 'vendor_tag_taken' : 'changed';
};

/** The active source stores of a reseller store by vendor tag: one Query over its vendor-tag items. */
export const activeVendorTagsOf = async (resellerStoreId: string) => {
  const prefix = vendorTagsOf(resellerStoreId);
  const items = await queryPartition(prefix.PK, prefix.SKPrefix, false);
  return new Map(items.map(vendorTagFrom).map(({ vendorTag, sourceStoreId }) => [vendorTag, sourceStoreId]));
};

/** A source store by id, of any owner, deleted or not; `consistent`: a read after a lost race. */
export const findSourceStoreById = (id: string, consistent = false) =>
  getItem(sourceStoreKey(id), sourceStoreFrom, consistent);

/** A page of a reseller store's source stores (its list, GSI1), below `cursor` when given. */
export const findSourceStorePage = (
  ownerId: string,
  resellerStoreId: string,
  limit: number,
  startingAfter: string | undefined,
  cursor: SourceStore | undefined,
) =>
  listPage({
    source: { index: 'lists', partitions: [lists.sourceStores(resellerStoreId)], exact: true },
    ownerId,
    from: sourceStoreFrom,
    limit,
    startingAfter,
    cursorItem: async () => cursor,
  });
