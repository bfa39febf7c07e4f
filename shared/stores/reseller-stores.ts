import type { Deps } from '../aws/deps.js';
import { ResourceMissingError } from '../core/errors.js';
import { isId, newId, now } from '../core/ids.js';
import type { Owner } from '../domain/owner.js';
import { DEFAULT_ROUTING_POLICY, type RoutingPolicy } from '../domain/routing.js';
import {
  changeResellerStoreItem,
  deleteResellerStoreItem,
  findResellerStoreById,
  findResellerStorePage,
  putResellerStore,
  type ResellerStore,
  type ResellerStoreChanges,
} from '../entities/reseller-store.js';
import { CONNECTED } from '../entities/store.js';
import type { Platform } from '../platforms/port.js';
import { encryptSecrets, type PlainSecrets, tokenLifeOf } from './secrets.js';

/** Reseller stores: creation with encrypted secrets, owner-scoped reads, rename, soft delete. */

export interface NewResellerStore extends PlainSecrets {
  name: string;
  platform: Platform;
  shopDomain: string;
}

export const createResellerStore = async (
  deps: Pick<Deps, 'cipher'>,
  owner: Owner,
  input: NewResellerStore & { routingPolicy?: Partial<RoutingPolicy> },
): Promise<ResellerStore> => {
  const id = newId('rst');
  const createdAt = now();
  const store: ResellerStore = {
    id,
    ownerId: owner.ownerId,
    name: input.name,
    platform: input.platform,
    shopDomain: input.shopDomain,
    secrets: await encryptSecrets(deps.cipher, id, input),
    previousWebhookSecret: null,
    tokenLife: tokenLifeOf(input, createdAt),
    connection: CONNECTED,
    webhooks: null,
    createdAt,
    updatedAt: createdAt,
    deletedAt: null,
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
