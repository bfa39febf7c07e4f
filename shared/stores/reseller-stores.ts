import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Deps } from '../aws/deps.js';
import { ResourceMissingError } from '../core/errors.js';
import { isId, newId, now } from '../core/ids.js';
import type { Owner } from '../domain/owner.js';
import { dynamo } from '../dynamo/client.js';
import { lists } from '../dynamo/keys.js';
import { listPage } from '../dynamo/pagination.js';
import { getItem, isConditionFailure, TABLE } from '../dynamo/table.js';
import {
  type ResellerStore,
  resellerStoreFrom,
  resellerStoreItem,
  resellerStoreKey,
} from '../entities/reseller-store.js';
import { DELISTED } from '../entities/store.js';
import type { Platform } from '../platforms/port.js';
import { encryptSecrets, type PlainSecrets } from './secrets.js';

/** Reseller stores: creation with encrypted secrets, owner-scoped reads, rename, soft delete. */

export interface NewResellerStore extends PlainSecrets {
  name: string;
  platform: Platform;
  shopDomain: string;
}

export const createResellerStore = async (
  deps: Pick<Deps, 'cipher'>,
  owner: Owner,
  input: NewResellerStore,
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
    createdAt,
    updatedAt: createdAt,
    deletedAt: null,
  };
  await dynamo.send(
    new PutCommand({
      TableName: TABLE(),
      Item: resellerStoreItem(store),
      ConditionExpression: 'attribute_not_exists(PK)',
    }),
  );
  return store;
};

/** The caller's reseller store, deleted or not, or undefined: another owner's is as missing as an unknown id. */
const ownedResellerStore = async (owner: Owner, id: string, consistent = false) => {
  const store = isId('rst', id) ? await getItem(resellerStoreKey(id), resellerStoreFrom, consistent) : undefined;
  return store?.ownerId === owner.ownerId ? store : undefined;
};

/** The caller's reseller store, or 404 (`param` names the id); `consistent`: a read after a lost race. */
export const findResellerStore = async (owner: Owner, id: string, param = 'id', consistent = false) => {
  const store = await ownedResellerStore(owner, id, consistent);
  if (!store) throw new ResourceMissingError('reseller_store', id, param);
  return store;
};

/** A reseller store of any owner, deleted or not (the fulfillment worker's: its job names it). */
export const loadResellerStore = (id: string) => getItem(resellerStoreKey(id), resellerStoreFrom);

export const listResellerStores = (owner: Owner, limit: number, startingAfter?: string) =>
  listPage({
    source: { index: 'lists', partition: lists.resellerStores(owner.ownerId), exact: true },
    ownerId: owner.ownerId,
    from: resellerStoreFrom,
    limit,
    startingAfter,
    cursorItem: (id) => ownedResellerStore(owner, id),
  });

const ownedAndActive = 'ownerId = :owner AND deletedAt = :null';

export const renameResellerStore = async (owner: Owner, id: string, name: string | undefined) => {
  if (!isId('rst', id)) throw new ResourceMissingError('reseller_store', id);
  try {
    const out = await dynamo.send(
      new UpdateCommand({
        TableName: TABLE(),
        Key: resellerStoreKey(id),
        // An empty PATCH still answers the current store, and still 404s for a missing one.
        UpdateExpression: name === undefined ? 'SET updatedAt = updatedAt' : 'SET #name = :name, updatedAt = :now',
        ConditionExpression: ownedAndActive,
        ExpressionAttributeNames: name === undefined ? undefined : { '#name': 'name' },
        ExpressionAttributeValues: {
          ':owner': owner.ownerId,
          ':null': null,
          ...(name === undefined ? {} : { ':name': name, ':now': now() }),
        },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return resellerStoreFrom(out.Attributes ?? {});
  } catch (error) {
    if (isConditionFailure(error)) throw new ResourceMissingError('reseller_store', id);
    throw error;
  }
};

export const deleteResellerStore = async (owner: Owner, id: string) => {
  if (!isId('rst', id)) throw new ResourceMissingError('reseller_store', id);
  const at = now();
  try {
    // Dropping the list keys takes the store out of its list; its shop lookup stays, so webhooks
    // of a deleted store still verify and answer 200 with no jobs (CONTRACT.md §3, §5).
    await dynamo.send(
      new UpdateCommand({
        TableName: TABLE(),
        Key: resellerStoreKey(id),
        UpdateExpression: `SET deletedAt = :at, updatedAt = :at REMOVE ${DELISTED.join(', ')}`,
        ConditionExpression: ownedAndActive,
        ExpressionAttributeValues: { ':owner': owner.ownerId, ':null': null, ':at': at },
      }),
    );
  } catch (error) {
    if (isConditionFailure(error)) throw new ResourceMissingError('reseller_store', id);
    throw error;
  }
};
