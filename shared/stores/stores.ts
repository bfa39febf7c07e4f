import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../dynamo/client.js';
import { ResourceMissingError, VendorTagConflictError } from '../core/errors.js';
import { newId, now } from '../core/ids.js';
import { listPage } from '../dynamo/pagination.js';
import type { CreateResellerStoreInput, CreateSourceStoreInput } from '../http/schemas.js';
import type { Platform, PlatformStore } from '../platforms/types.js';
import type { SecretCipher } from '../aws/kms-cipher.js';
import { INDEX, keys, listSortKey, lists, lookups } from '../dynamo/keys.js';
import { getItem, isConditionFailure, TABLE, transactWrite, type Item } from '../dynamo/table.js';

/** Reseller and source stores: creation with encrypted secrets, owner-scoped reads, soft deletes. */

export interface Owner {
  ownerId: string;
}

const encryptSecrets = async (
  cipher: SecretCipher,
  storeId: string,
  input: { accessToken: string; webhookSecret: string },
) => {
  const [accessToken, webhookSecret] = await Promise.all([
    cipher.encrypt(input.accessToken, { storeId, field: 'accessToken' }),
    cipher.encrypt(input.webhookSecret, { storeId, field: 'webhookSecret' }),
  ]);
  return { accessToken, webhookSecret };
};

// ---------- reseller stores

export const createResellerStore = async (cipher: SecretCipher, owner: Owner, input: CreateResellerStoreInput) => {
  const id = newId('rst');
  const createdAt = now();
  const item = {
    ...keys.resellerStore(id),
    GSI1PK: lists.resellerStores(owner.ownerId),
    GSI1SK: listSortKey(createdAt, id),
    GSI2PK: lookups.shop(input.shopDomain),
    GSI2SK: lookups.shopResellerStore(id),
    id,
    ownerId: owner.ownerId,
    name: input.name,
    platform: input.platform,
    shopDomain: input.shopDomain,
    ...(await encryptSecrets(cipher, id, input)),
    createdAt,
    updatedAt: createdAt,
    deletedAt: null,
  };
  await dynamo.send(
    new PutCommand({ TableName: TABLE(), Item: item, ConditionExpression: 'attribute_not_exists(PK)' }),
  );
  return item;
};

/** The caller's reseller store, deleted or not, or undefined: another owner's is as missing as an unknown id. */
const ownedResellerStore = async (owner: Owner, id: string) => {
  const item = id.startsWith('rst_') ? await getItem(keys.resellerStore(id)) : undefined;
  return item?.ownerId === owner.ownerId ? item : undefined;
};

export const findResellerStore = async (owner: Owner, id: string, param = 'id') => {
  const item = await ownedResellerStore(owner, id);
  if (!item) throw new ResourceMissingError('reseller_store', id, param);
  return item;
};

export const listResellerStores = (owner: Owner, limit: number, startingAfter?: string) =>
  listPage({
    partition: lists.resellerStores(owner.ownerId),
    limit,
    startingAfter,
    cursorItem: (id) => ownedResellerStore(owner, id),
  });

const ownedAndActive = 'ownerId = :owner AND deletedAt = :null';

export const renameResellerStore = async (owner: Owner, id: string, name: string | undefined) => {
  try {
    const out = await dynamo.send(
      new UpdateCommand({
        TableName: TABLE(),
        Key: keys.resellerStore(id),
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
    return out.Attributes as Item;
  } catch (error) {
    if (isConditionFailure(error)) throw new ResourceMissingError('reseller_store', id);
    throw error;
  }
};

export const deleteResellerStore = async (owner: Owner, id: string) => {
  const at = now();
  try {
    // Dropping the GSI1 keys takes the store out of its list; its shop lookup stays, so webhooks
    // of a deleted store still verify and answer 200 with no jobs (CONTRACT.md §3, §5).
    await dynamo.send(
      new UpdateCommand({
        TableName: TABLE(),
        Key: keys.resellerStore(id),
        UpdateExpression: 'SET deletedAt = :at, updatedAt = :at REMOVE GSI1PK, GSI1SK',
        ConditionExpression: ownedAndActive,
        ExpressionAttributeValues: { ':owner': owner.ownerId, ':null': null, ':at': at },
      }),
    );
  } catch (error) {
    if (isConditionFailure(error)) throw new ResourceMissingError('reseller_store', id);
    throw error;
  }
};

// ---------- source stores

export const createSourceStore = async (
  cipher: SecretCipher,
  owner: Owner,
  resellerStoreId: string,
  input: CreateSourceStoreInput,
) => {
  const reseller = await findResellerStore(owner, resellerStoreId, 'rst_id');
  if (reseller.deletedAt) throw new ResourceMissingError('reseller_store', resellerStoreId, 'rst_id');
  const id = newId('sst');
  const createdAt = now();
  const item = {
    ...keys.sourceStore(id),
    GSI1PK: lists.sourceStores(resellerStoreId),
    GSI1SK: listSortKey(createdAt, id),
    GSI2PK: lookups.shop(input.shopDomain),
    GSI2SK: lookups.shopSourceStore(id),
    id,
    ownerId: owner.ownerId,
    resellerStoreId,
    name: input.name,
    platform: input.platform,
    shopDomain: input.shopDomain,
    vendorTag: input.vendorTag,
    pricingMode: input.pricingMode,
    pricingConfig: input.pricingConfig,
    ...(await encryptSecrets(cipher, id, input)),
    createdAt,
    updatedAt: createdAt,
    deletedAt: null,
  };
  try {
    // The vendor-tag item makes "one active store per tag" a key constraint, and routing reads
    // every active tag of a reseller store in one Query.
    await transactWrite([
      { Put: { TableName: TABLE(), Item: item, ConditionExpression: 'attribute_not_exists(PK)' } },
      {
        Put: {
          TableName: TABLE(),
          Item: { ...keys.vendorTag(resellerStoreId, input.vendorTag), sourceStoreId: id, createdAt },
          ConditionExpression: 'attribute_not_exists(PK)',
        },
      },
    ]);
  } catch (error) {
    if (
      error instanceof TransactionCanceledException &&
      error.CancellationReasons?.[1]?.Code === 'ConditionalCheckFailed'
    ) {
      throw new VendorTagConflictError(input.vendorTag);
    }
    throw error;
  }
  return item;
};

/** A source store of the caller's reseller store, deleted or not, or undefined. */
const ownedSourceStore = async (owner: Owner, resellerStoreId: string, id: string) => {
  const item = id.startsWith('sst_') ? await getItem(keys.sourceStore(id)) : undefined;
  return item?.ownerId === owner.ownerId && item.resellerStoreId === resellerStoreId ? item : undefined;
};

export const findSourceStore = async (owner: Owner, resellerStoreId: string, id: string) => {
  const item = await ownedSourceStore(owner, resellerStoreId, id);
  if (!item) throw new ResourceMissingError('source_store', id);
  return item;
};

export const listSourceStores = async (
  owner: Owner,
  resellerStoreId: string,
  limit: number,
  startingAfter?: string,
) => {
  await findResellerStore(owner, resellerStoreId, 'rst_id');
  return listPage({
    partition: lists.sourceStores(resellerStoreId),
    limit,
    startingAfter,
    cursorItem: (id) => ownedSourceStore(owner, resellerStoreId, id),
  });
};

export const deleteSourceStore = async (owner: Owner, resellerStoreId: string, id: string) => {
  const store = await findSourceStore(owner, resellerStoreId, id);
  if (store.deletedAt) throw new ResourceMissingError('source_store', id);
  const at = now();
  try {
    await transactWrite([
      {
        Update: {
          TableName: TABLE(),
          Key: keys.sourceStore(id),
          UpdateExpression: 'SET deletedAt = :at, updatedAt = :at REMOVE GSI1PK, GSI1SK',
          ConditionExpression: 'deletedAt = :null',
          ExpressionAttributeValues: { ':at': at, ':null': null },
        },
      },
      // Frees the tag for a new store; the condition keeps a racing delete from freeing a successor's tag.
      {
        Delete: {
          TableName: TABLE(),
          Key: keys.vendorTag(resellerStoreId, store.vendorTag as string),
          ConditionExpression: 'sourceStoreId = :id',
          ExpressionAttributeValues: { ':id': id },
        },
      },
    ]);
  } catch (error) {
    if (error instanceof TransactionCanceledException) throw new ResourceMissingError('source_store', id);
    throw error;
  }
};

/** The active source stores of a reseller store by vendor tag: one Query over the vendor-tag items. */
export const activeVendorTags = async (resellerStoreId: string) => {
  const prefix = keys.vendorTagPrefix(resellerStoreId);
  const tags = new Map<string, string>();
  let startKey: Item | undefined;
  do {
    const out = await dynamo.send(
      new QueryCommand({
        TableName: TABLE(),
        KeyConditionExpression: 'PK = :pk AND begins_with(SK, :prefix)',
        ExpressionAttributeValues: { ':pk': prefix.PK, ':prefix': prefix.SKPrefix },
        ExclusiveStartKey: startKey,
      }),
    );
    for (const item of out.Items ?? [])
      tags.set((item.SK as string).slice(prefix.SKPrefix.length), item.sourceStoreId as string);
    startKey = out.LastEvaluatedKey;
  } while (startKey);
  return tags;
};

/** Every store registered under a shop domain (GSI2 carries what verifying a signature needs). */
export const storesByShopDomain = async (shopDomain: string, kind: 'RST' | 'SST') => {
  const out = await dynamo.send(
    new QueryCommand({
      TableName: TABLE(),
      IndexName: INDEX.lookups,
      KeyConditionExpression: 'GSI2PK = :pk AND begins_with(GSI2SK, :kind)',
      ExpressionAttributeValues: { ':pk': lookups.shop(shopDomain), ':kind': `${kind}#` },
    }),
  );
  return (out.Items ?? []) as Item[];
};

/** What a platform adapter needs of a store (either kind), with its secrets decrypted under their own context. */
export const platformStoreOf = async (cipher: SecretCipher, store: Item): Promise<PlatformStore> => {
  const context = (field: 'accessToken' | 'webhookSecret') => ({ storeId: store.id as string, field });
  const [accessToken, webhookSecret] = await Promise.all([
    cipher.decrypt(store.accessToken as string, context('accessToken')),
    cipher.decrypt(store.webhookSecret as string, context('webhookSecret')),
  ]);
  return { platform: store.platform as Platform, shopDomain: store.shopDomain as string, accessToken, webhookSecret };
};
