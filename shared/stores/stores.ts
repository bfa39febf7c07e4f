import type { Deps } from '../aws/deps.js';
import { ResourceMissingError, ValidationError, VendorTagConflictError } from '../core/errors.js';
import { isId, newId, now } from '../core/ids.js';
import type { PricingConfig } from '../domain/money.js';
import type { Owner } from '../domain/owner.js';
import { DEFAULT_ROUTING_POLICY, type RoutingPolicy } from '../domain/routing.js';
import { DEFAULT_CUTOFF, DEFAULT_WORKING_DAYS, type ServiceLevel, type Weekday } from '../domain/shipping.js';
import {
  CONNECTED,
  changeResellerStoreItem,
  deleteResellerStoreItem,
  deleteSourceStoreItems,
  findResellerStoreById,
  findResellerStorePage,
  findSourceStoreById,
  findSourceStorePage,
  type PricingMode,
  putResellerStore,
  putSourceStore,
  type ResellerStore,
  type ResellerStoreChanges,
  type SourceStore,
  updateSourceStoreItems,
} from '../entities/store.js';
import type { Platform } from '../platforms/port.js';
import { encryptSecrets, type PlainSecrets, tokenLifeOf } from './connection.js';

/** Reseller stores: creation with encrypted secrets, owner-scoped reads, rename, soft delete. */

export interface NewResellerStore extends PlainSecrets {
  name: string;
  platform: Platform;
  shopDomain: string;
}

/** What a new store of either kind starts with: its secrets encrypted, connected, created now. */
const newConnection = async (deps: Pick<Deps, 'cipher'>, id: string, input: PlainSecrets) => {
  const createdAt = now();
  return {
    secrets: await encryptSecrets(deps.cipher, id, input),
    previousWebhookSecret: null,
    tokenLife: tokenLifeOf(input, createdAt),
    connection: CONNECTED,
    webhooks: null,
    createdAt,
    updatedAt: createdAt,
    deletedAt: null,
  };
};

export const createResellerStore = async (
  deps: Pick<Deps, 'cipher'>,
  owner: Owner,
  input: NewResellerStore & { routingPolicy?: Partial<RoutingPolicy> },
): Promise<ResellerStore> => {
  const id = newId('rst');
  const store: ResellerStore = {
    id,
    ownerId: owner.ownerId,
    name: input.name,
    platform: input.platform,
    shopDomain: input.shopDomain,
    ...(await newConnection(deps, id, input)),
    routingPolicy: { ...DEFAULT_ROUTING_POLICY, ...input.routingPolicy },
  };
  await putResellerStore(store);
  return store;
};

/** The caller's reseller store, deleted or not, or undefined: another owner's is as missing as an unknown id. */
const ownedResellerStore = async (owner: Owner, id: string, consistent = false) => {
  const store = isId('rst', id) ? await findResellerStoreById(id, consistent) : undefined;
  return store?.ownerId === owner.ownerId ? store : undefined;
};

/** The caller's reseller store, or 404 (`param` names the id); `consistent`: a read after a lost race. */
export const findResellerStore = async (owner: Owner, id: string, param = 'id', consistent = false) => {
  const store = await ownedResellerStore(owner, id, consistent);
  if (!store) throw new ResourceMissingError('reseller_store', id, param);
  return store;
};

/** A reseller store of any owner, deleted or not (the fulfillment worker's: its job names it). */
export const loadResellerStore = (id: string) => findResellerStoreById(id);

export const listResellerStores = (owner: Owner, limit: number, startingAfter?: string) =>
  findResellerStorePage(owner.ownerId, limit, startingAfter, (id) => ownedResellerStore(owner, id));

/** A PATCH (SPEC 4.2, CONTRACT.md §11): the name and any fields of the routing policy; the rest kept. */
export const changeResellerStore = async (owner: Owner, id: string, changes: ResellerStoreChanges) => {
  if (!isId('rst', id)) throw new ResourceMissingError('reseller_store', id);
  // An empty PATCH still answers the current store, and still 404s for a missing one.
  const store = await changeResellerStoreItem(owner.ownerId, id, changes, now());
  if (!store) throw new ResourceMissingError('reseller_store', id);
  return store;
};

export const deleteResellerStore = async (owner: Owner, id: string) => {
  if (!isId('rst', id)) throw new ResourceMissingError('reseller_store', id);
  // Dropping the list keys takes the store out of its list; its shop lookup stays, so webhooks
  // of a deleted store still verify and answer 200 with no jobs (CONTRACT.md §3, §5).
  if (!(await deleteResellerStoreItem(owner.ownerId, id, now()))) throw new ResourceMissingError('reseller_store', id);
};

/** Source stores (suppliers): creation under a reseller store with a unique vendor tag, reads, soft delete. */

/** A promise as the API takes it: everything but the number of days has a default (CONTRACT.md §16.1). */
export interface ServiceLevelRequest {
  shipWithinBusinessDays: number;
  cutoffTime?: string;
  timeZone?: string;
  workingDays?: Weekday[];
  daysOff?: string[];
}

export interface NewSourceStore extends NewResellerStore {
  vendorTag: string;
  pricingMode: PricingMode;
  pricingConfig: PricingConfig;
  serviceLevel?: ServiceLevelRequest | null;
}

/** Reads a shop's own IANA zone from its platform (null: the platform does not say). */
export type ShopTimeZone = (store: SourceStore) => Promise<string | null>;

/**
 * A requested promise with its defaults, its zone the one named or else the shop's own, read from
 * its platform; a 400 on `serviceLevel.timeZone` when neither is known.
 */
const resolveServiceLevel = async (
  request: ServiceLevelRequest | null | undefined,
  store: SourceStore,
  shopTimeZone: ShopTimeZone | undefined,
): Promise<ServiceLevel | null> => {
  if (!request) return null;
  const timeZone =
    request.timeZone ?? (store.platform === 'custom' || !shopTimeZone ? null : await shopTimeZone(store));
  if (!timeZone) throw new ValidationError("The shop's time zone is unknown: name one.", 'serviceLevel.timeZone');
  return {
    shipWithinBusinessDays: request.shipWithinBusinessDays,
    cutoffTime: request.cutoffTime ?? DEFAULT_CUTOFF,
    timeZone,
    workingDays: [...new Set(request.workingDays ?? DEFAULT_WORKING_DAYS)],
    daysOff: [...new Set(request.daysOff ?? [])].sort(),
  };
};

export const createSourceStore = async (
  deps: Pick<Deps, 'cipher'> & { shopTimeZone?: ShopTimeZone },
  owner: Owner,
  resellerStoreId: string,
  input: NewSourceStore,
): Promise<SourceStore> => {
  const reseller = await findResellerStore(owner, resellerStoreId, 'rst_id');
  if (reseller.deletedAt) throw new ResourceMissingError('reseller_store', resellerStoreId, 'rst_id');
  const id = newId('sst');
  const store: SourceStore = {
    id,
    ownerId: owner.ownerId,
    resellerStoreId,
    name: input.name,
    platform: input.platform,
    shopDomain: input.shopDomain,
    vendorTag: input.vendorTag,
    pricingMode: input.pricingMode,
    pricingConfig: input.pricingConfig,
    serviceLevel: null,
    ...(await newConnection(deps, id, input)),
  };
  store.serviceLevel = await resolveServiceLevel(input.serviceLevel, store, deps.shopTimeZone);
  if ((await putSourceStore(store)) === 'vendor_tag_taken') throw new VendorTagConflictError(input.vendorTag);
  return store;
};

/** A source store of the caller's reseller store, deleted or not, or undefined. */
const ownedSourceStore = async (owner: Owner, resellerStoreId: string, id: string, consistent = false) => {
  if (!isId('rst', resellerStoreId) || !isId('sst', id)) return undefined;
  const store = await findSourceStoreById(id, consistent);
  return store?.ownerId === owner.ownerId && store.resellerStoreId === resellerStoreId ? store : undefined;
};

/** The caller's source store under that reseller store, or 404; `consistent`: a read after a lost race. */
export const findSourceStore = async (owner: Owner, resellerStoreId: string, id: string, consistent = false) => {
  const store = await ownedSourceStore(owner, resellerStoreId, id, consistent);
  if (!store) throw new ResourceMissingError('source_store', id);
  return store;
};

/** A source store of any owner, deleted or not (the sync worker's: its job names it). */
export const loadSourceStore = (id: string) => findSourceStoreById(id);

/**
 * A page of a reseller store's source stores: at most three round trips, like every list. A
 * cursor that is a source store of the caller under this reseller store proves the reseller
 * store is the caller's (a source store is created under its owner's store), so the reseller
 * store is read only without one, or to tell a 404 from an invalid cursor.
 */
export const listSourceStores = async (
  owner: Owner,
  resellerStoreId: string,
  limit: number,
  startingAfter?: string,
) => {
  const cursor =
    startingAfter === undefined ? undefined : await ownedSourceStore(owner, resellerStoreId, startingAfter);
  if (!cursor) await findResellerStore(owner, resellerStoreId, 'rst_id');
  return findSourceStorePage(owner.ownerId, resellerStoreId, limit, startingAfter, cursor);
};

export const deleteSourceStore = async (owner: Owner, resellerStoreId: string, id: string) => {
  const store = await findSourceStore(owner, resellerStoreId, id);
  if (store.deletedAt) throw new ResourceMissingError('source_store', id);
  // Deleted meanwhile (a racing delete): as missing as before.
  if (!(await deleteSourceStoreItems(store, now()))) throw new ResourceMissingError('source_store', id);
};

/** What `PATCH …/source_stores/{id}` may change (CONTRACT.md §10.9); the pricing mode with its config. */
export interface SourceStoreChanges {
  name?: string;
  vendorTag?: string;
  pricing?: { pricingMode: PricingMode; pricingConfig: PricingConfig };
  /** The whole promise replaced; null removes it; absent leaves it. */
  serviceLevel?: ServiceLevelRequest | null;
}

/**
 * Changes a source store. Jobs placed afterwards use the new values (the worker reads the store
 * when it places); a placed job keeps what it used. A new vendor tag moves the tag item in the same
 * transaction, so "one active store per tag" stays a key constraint: a tag held by another store is
 * 409 `vendor_tag_conflict`, as on creation.
 */
export const updateSourceStore = async (
  owner: Owner,
  resellerStoreId: string,
  id: string,
  changes: SourceStoreChanges,
  shopTimeZone?: ShopTimeZone,
): Promise<SourceStore> => {
  const store = await findSourceStore(owner, resellerStoreId, id);
  if (store.deletedAt) throw new ResourceMissingError('source_store', id);
  const serviceLevel =
    changes.serviceLevel === undefined
      ? store.serviceLevel
      : await resolveServiceLevel(changes.serviceLevel, store, shopTimeZone);
  const updated: SourceStore = {
    ...store,
    name: changes.name ?? store.name,
    vendorTag: changes.vendorTag ?? store.vendorTag,
    pricingMode: changes.pricing?.pricingMode ?? store.pricingMode,
    pricingConfig: changes.pricing?.pricingConfig ?? store.pricingConfig,
    serviceLevel,
    updatedAt: now(),
  };
  const written = await updateSourceStoreItems(store, updated);
  if (written === 'vendor_tag_taken') throw new VendorTagConflictError(updated.vendorTag);
  if (written === 'changed') throw new ResourceMissingError('source_store', id);
  return updated;
};
