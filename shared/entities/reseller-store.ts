import { lists } from '../dynamo/keys.js';
import { ConditionFailed, type Item, putIf, updateIf } from '../dynamo/table.js';
import {
  DELISTED,
  OWNED_AND_ACTIVE,
  type StoreFields,
  storeAttributes,
  storeFrom,
  storeIndexEntries,
  storeKey,
} from './store.js';

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

/** Puts a new reseller store's item; its id is new, so an item met there is a fault. */
export const putResellerStore = async (store: ResellerStore) => {
  if ((await putIf(resellerStoreItem(store))) !== true) throw new Error(`reseller store ${store.id} exists already`);
};

/**
 * Renames an active store of `ownerId` (no name: changes nothing, still answers it); the store as
 * written, or undefined when there is no such store (unknown, deleted or another owner's).
 */
export const renameResellerStoreItem = async (
  ownerId: string,
  id: string,
  name: string | undefined,
  at: string,
): Promise<ResellerStore | undefined> => {
  const written = await updateIf(
    {
      Key: resellerStoreKey(id),
      UpdateExpression: name === undefined ? 'SET updatedAt = updatedAt' : 'SET #name = :name, updatedAt = :now',
      ConditionExpression: OWNED_AND_ACTIVE,
      ExpressionAttributeNames: name === undefined ? undefined : { '#name': 'name' },
      ExpressionAttributeValues: {
        ':owner': ownerId,
        ':null': null,
        ...(name === undefined ? {} : { ':name': name, ':now': at }),
      },
    },
    true,
  );
  return written instanceof ConditionFailed ? undefined : resellerStoreFrom(written ?? {});
};

/**
 * Soft-deletes an active store of `ownerId`: out of its lists, its shop lookup kept (store.ts
 * `DELISTED`); false when there is no such store.
 */
export const deleteResellerStoreItem = async (ownerId: string, id: string, at: string) =>
  !(
    (await updateIf({
      Key: resellerStoreKey(id),
      UpdateExpression: `SET deletedAt = :at, updatedAt = :at REMOVE ${DELISTED.join(', ')}`,
      ConditionExpression: OWNED_AND_ACTIVE,
      ExpressionAttributeValues: { ':owner': ownerId, ':null': null, ':at': at },
    })) instanceof ConditionFailed
  );
