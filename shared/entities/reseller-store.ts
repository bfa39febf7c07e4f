import {
  DEFAULT_ROUTING_POLICY,
  PAYMENT_POLICIES,
  RISK_POLICIES,
  type RoutingPolicy,
  TEST_ORDER_POLICIES,
} from '../domain/routing.js';
import { indexPartitionName, keys, lists, storeOfKey } from '../dynamo/keys.js';
import {
  attributes,
  ConditionFailed,
  getItem,
  type Item,
  listPage,
  putIf,
  queryKeys,
  queryPartition,
  updateIf,
} from '../dynamo/table.js';
import { vendorTagFrom } from './source-store.js';
import {
  OWNED_AND_ACTIVE,
  type StoreFields,
  storeAttributes,
  storeFrom,
  storeIndexEntries,
  storeKey,
} from './store.js';

/**
 * The reseller store entity: a merchant's store that resells (SPEC: `rst_…`). Its fields are the
 * stores' common ones (store.ts) and its routing policy (CONTRACT.md §11); the only place that knows its item.
 */
export type ResellerStore = StoreFields & { routingPolicy: RoutingPolicy };

/**
 * The routing policy's attributes: one per field, so a PATCH of some fields is one UpdateItem that keeps
 * the others; a field never set is absent, and reads as its default (no byte for a store that keeps them).
 */
const POLICY_ATTRIBUTES: Record<keyof RoutingPolicy, string> = {
  holdSeconds: 'policyHoldSeconds',
  payment: 'policyPayment',
  risk: 'policyRisk',
  testOrders: 'policyTestOrders',
};

const policyAttributes = (policy: Partial<RoutingPolicy>) =>
  Object.fromEntries(
    Object.entries(policy)
      .filter(([field, value]) => value !== undefined && field in POLICY_ATTRIBUTES)
      .map(([field, value]) => [POLICY_ATTRIBUTES[field as keyof RoutingPolicy], value]),
  );

/** The routing policy a store item holds (defaults for the fields it does not). */
export const routingPolicyFrom = (item: Item): RoutingPolicy => {
  const read = attributes(item, 'reseller store');
  const has = (field: keyof RoutingPolicy) => item[POLICY_ATTRIBUTES[field]] !== undefined;
  return {
    holdSeconds: has('holdSeconds') ? read.number(POLICY_ATTRIBUTES.holdSeconds) : DEFAULT_ROUTING_POLICY.holdSeconds,
    payment: has('payment') ? read.oneOf(POLICY_ATTRIBUTES.payment, PAYMENT_POLICIES) : DEFAULT_ROUTING_POLICY.payment,
    risk: has('risk') ? read.oneOf(POLICY_ATTRIBUTES.risk, RISK_POLICIES) : DEFAULT_ROUTING_POLICY.risk,
    testOrders: has('testOrders')
      ? read.oneOf(POLICY_ATTRIBUTES.testOrders, TEST_ORDER_POLICIES)
      : DEFAULT_ROUTING_POLICY.testOrders,
  };
};

export const resellerStoreKey = (id: string) => storeKey('reseller', id);

/**
 * A reseller store's item: in its owner's list (GSI1), or its list of deleted stores once deleted, and
 * under its shop domain (GSI2).
 */
export const resellerStoreItem = (store: ResellerStore): Item => ({
  ...resellerStoreKey(store.id),
  ...storeIndexEntries(
    'reseller',
    store,
    lists.resellerStores(store.ownerId),
    lists.deletedResellerStores(store.ownerId),
  ),
  ...storeAttributes(store),
  ...policyAttributes(changedFields(store.routingPolicy)),
});

/** The fields of a policy that differ from the defaults: all a new store's item needs to write. */
const changedFields = (policy: RoutingPolicy): Partial<RoutingPolicy> =>
  Object.fromEntries(
    Object.entries(policy).filter(([field, value]) => DEFAULT_ROUTING_POLICY[field as keyof RoutingPolicy] !== value),
  );

export const resellerStoreFrom = (item: Item): ResellerStore => ({
  ...storeFrom(item, 'reseller store'),
  routingPolicy: routingPolicyFrom(item),
});

/**
 * What the orders webhook routes an order with, in one Query of the store's partition: its routing
 * policy (the store's own item) and its active source stores by vendor tag (its vendor-tag items).
 * The store's item shares the read's 4 KB units with the tags, so the policy costs no read of its own.
 */
export const routingOf = async (resellerStoreId: string) => {
  const items = await queryPartition(keys.resellerStore(resellerStoreId).PK, undefined, false);
  const storeItem = items.find((item) => item.SK === keys.resellerStore(resellerStoreId).SK);
  const prefix = keys.vendorTagPrefix(resellerStoreId).SKPrefix;
  const tags = items.filter((item) => typeof item.SK === 'string' && item.SK.startsWith(prefix));
  return {
    routingPolicy: storeItem ? routingPolicyFrom(storeItem) : DEFAULT_ROUTING_POLICY,
    vendorTags: new Map(tags.map(vendorTagFrom).map(({ vendorTag, sourceStoreId }) => [vendorTag, sourceStoreId])),
  };
};

/** Puts a new reseller store's item; its id is new, so an item met there is a fault. */
export const putResellerStore = async (store: ResellerStore) => {
  if ((await putIf(resellerStoreItem(store))) !== true) throw new Error(`reseller store ${store.id} exists already`);
};

/** What a PATCH of a reseller store changes (SPEC 4.2, CONTRACT.md §11): any of them, or none. */
export interface ResellerStoreChanges {
  name?: string;
  routingPolicy?: Partial<RoutingPolicy>;
}

/**
 * Changes an active store of `ownerId`: its name and any fields of its routing policy (nothing given:
 * changes nothing, still answers it); the store as written, or undefined when there is no such store
 * (unknown, deleted or another owner's).
 */
export const changeResellerStoreItem = async (
  ownerId: string,
  id: string,
  changes: ResellerStoreChanges,
  at: string,
): Promise<ResellerStore | undefined> => {
  const set: Record<string, unknown> = {
    ...(changes.name === undefined ? {} : { name: changes.name }),
    ...policyAttributes(changes.routingPolicy ?? {}),
  };
  const names = Object.keys(set);
  const written = await updateIf(
    {
      Key: resellerStoreKey(id),
      UpdateExpression: names.length
        ? `SET ${names.map((_, i) => `#a${i} = :a${i}`).join(', ')}, updatedAt = :now`
        : 'SET updatedAt = updatedAt',
      ConditionExpression: OWNED_AND_ACTIVE,
      ExpressionAttributeNames: names.length ? Object.fromEntries(names.map((name, i) => [`#a${i}`, name])) : undefined,
      ExpressionAttributeValues: {
        ':owner': ownerId,
        ':null': null,
        ...(names.length ? { ':now': at, ...Object.fromEntries(names.map((name, i) => [`:a${i}`, set[name]])) } : {}),
      },
    },
    true,
  );
  return written instanceof ConditionFailed ? undefined : resellerStoreFrom(written ?? {});
};

/**
 * Soft-deletes an active store of `ownerId`: out of the active stores, its shop lookup kept, and its
 * list entry moved (same sort key) from its owner's list to the owner's deleted reseller stores,
 * which the retention sweep reads for the store's unrouted orders (docs/design.md, "Customer data");
 * false when there is no such store.
 */
export const deleteResellerStoreItem = async (ownerId: string, id: string, at: string) =>
  !(
    (await updateIf({
      Key: resellerStoreKey(id),
      UpdateExpression: 'SET deletedAt = :at, updatedAt = :at, #list = :deleted REMOVE #active',
      ConditionExpression: OWNED_AND_ACTIVE,
      ExpressionAttributeNames: { '#list': indexPartitionName('lists'), '#active': indexPartitionName('stateLists') },
      ExpressionAttributeValues: {
        ':owner': ownerId,
        ':null': null,
        ':at': at,
        ':deleted': lists.deletedResellerStores(ownerId),
      },
    })) instanceof ConditionFailed
  );

/**
 * The ids of the owner's reseller stores, soft-deleted ones included (its list and its list of deleted
 * stores), read by key a page of 100 at a time: the retention sweep's, whose orders were received all the same.
 */
export const findResellerStoreIdsOf = async (ownerId: string) => {
  const ids: string[] = [];
  for (const pk of [lists.resellerStores(ownerId), lists.deletedResellerStores(ownerId)]) {
    let startKey: Item | undefined;
    do {
      const page = await queryKeys({ index: 'lists', pk, limit: 100, exclusiveStartKey: startKey });
      for (const key of page.keys) {
        const store = storeOfKey(key);
        if (store?.kind === 'reseller') ids.push(store.id);
      }
      startKey = page.lastKey;
    } while (startKey);
  }
  return ids;
};

/** A reseller store by id, of any owner, deleted or not; `consistent`: a read after a lost race. */
export const findResellerStoreById = (id: string, consistent = false) =>
  getItem(resellerStoreKey(id), resellerStoreFrom, consistent);

/** A page of the owner's reseller stores (its list, GSI1), below the store `cursorItem` finds. */
export const findResellerStorePage = (
  ownerId: string,
  limit: number,
  startingAfter: string | undefined,
  cursorItem: (id: string) => Promise<ResellerStore | undefined>,
) =>
  listPage({
    source: { index: 'lists', partitions: [lists.resellerStores(ownerId)], exact: true },
    ownerId,
    from: resellerStoreFrom,
    limit,
    startingAfter,
    cursorItem,
  });
