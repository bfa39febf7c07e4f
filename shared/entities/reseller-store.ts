import { lists } from '../dynamo/keys.js';
import type { Item } from '../dynamo/table.js';
import { type StoreFields, storeAttributes, storeFrom, storeIndexEntries, storeKey } from './store.js';

/**
 * The reseller store entity: a merchant's store that resells (SPEC: `rst_…`). Its fields are the
 * stores' common ones (store.ts); the only place that knows its item.
 */
export type ResellerStore = StoreFields;

export const resellerStoreKey = (id: string) => storeKey('reseller', id);

/** A new reseller store's item: in its owner's list (GSI1) and under its shop domain (GSI2). */
export const resellerStoreItem = (store: ResellerStore): Item => ({
  ...resellerStoreKey(store.id),
  ...storeIndexEntries('reseller', store, lists.resellerStores(store.ownerId)),
  ...storeAttributes(store),
});

export const resellerStoreFrom = (item: Item): ResellerStore => storeFrom(item, 'reseller store');
