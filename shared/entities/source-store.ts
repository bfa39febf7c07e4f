import type { PricingConfig } from '../domain/pricing.js';
import { attributes } from '../dynamo/attributes.js';
import { keys, lists, vendorTagOf } from '../dynamo/keys.js';
import { type Item, keyOf } from '../dynamo/table.js';
import { type StoreFields, storeAttributes, storeFrom, storeIndexEntries, storeKey } from './store.js';

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
  };
};

/** A vendor-tag item: which source store holds the tag. */
export const vendorTagFrom = (item: Item) => ({
  vendorTag: vendorTagOf(keyOf(item)),
  sourceStoreId: attributes(item, 'vendor tag').string('sourceStoreId'),
});
