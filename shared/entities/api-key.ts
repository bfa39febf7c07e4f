import { INDEX_KEYS, indexEntry, type Key, keys, listSortKey, lists } from '../dynamo/keys.js';
import {
  attributes,
  batchGet,
  ConditionFailed,
  getItem,
  type Item,
  keyOf,
  putIf,
  queryKeys,
  recordShape,
  updateIf,
  updateSet,
} from '../dynamo/table.js';

/**
 * The API key entity. The key itself is stored only as its SHA-256 hash, which is the item's key;
 * the item holds the key's id, owner, creation time and, once revoked, `revokedAt`. Its list entry
 * (`APIKEYS`, `<createdAt>#<keyId>`) lets the keys be listed and revoked by id without a Scan.
 */

export interface ApiKeyRecord {
  keyId: string;
  ownerId: string;
}

/** What `npm run keys -- list` shows of a key: never the key, nor its hash. */
export interface ApiKeySummary extends ApiKeyRecord {
  createdAt: string | null;
  revokedAt: string | null;
}

/** A key's item as read: whether it is in the list (keys issued before keys were listed are not). */
export interface StoredApiKey extends ApiKeySummary {
  listed: boolean;
}

export const apiKeyKey = (hash: string) => keys.apiKey(hash);

/** Its entry in the list of every key. */
export const apiKeyListEntry = (createdAt: string, keyId: string) =>
  indexEntry('lists', lists.apiKeys(), listSortKey(createdAt, keyId));

export const apiKeyItem = (hash: string, key: ApiKeyRecord, createdAt: string): Item => ({
  ...apiKeyKey(hash),
  ...apiKeyListEntry(createdAt, key.keyId),
  keyId: key.keyId,
  ownerId: key.ownerId,
  createdAt,
});

const summary = recordShape<ApiKeySummary>()('API key', {
  strings: ['keyId', 'ownerId'],
  nullableStrings: ['createdAt', 'revokedAt'],
});

export const apiKeyFrom = (item: Item): StoredApiKey => ({
  ...summary.from(item),
  listed: attributes(item, 'API key').stringOrNull(INDEX_KEYS.lists.pk) !== null,
});

/** Puts a new key's item; the item met when its hash was registered meanwhile. */
export const putApiKey = (hash: string, key: ApiKeyRecord, createdAt: string) =>
  putIf(apiKeyItem(hash, key, createdAt));

/** Puts a key issued before keys were listed (a persistent local table) into the list. */
export const listApiKey = async (hash: string, key: StoredApiKey, createdAt: string) => {
  const listed = await updateIf({
    Key: apiKeyKey(hash),
    ...updateSet(apiKeyListEntry(createdAt, key.keyId)),
    ConditionExpression: 'attribute_exists(PK)',
  });
  if (listed instanceof ConditionFailed) throw new Error(`API key ${key.keyId} was deleted while it was listed`);
};

/**
 * Sets `revokedAt` on a key not revoked yet: true, or the key as the failed write met it (undefined
 * when there was none, or the answer carried none: the caller then reads it).
 */
export const revokeApiKey = async (key: Key, revokedAt: string): Promise<true | { met: StoredApiKey | undefined }> => {
  const written = await updateIf({
    Key: key,
    UpdateExpression: 'SET revokedAt = :at',
    ConditionExpression: 'attribute_exists(PK) AND attribute_not_exists(revokedAt)',
    ExpressionAttributeValues: { ':at': revokedAt },
  });
  if (!(written instanceof ConditionFailed)) return true;
  return { met: written.met ? apiKeyFrom(written.met) : undefined };
};

/** The key whose hash is `hash`, read consistently (a key revoked a moment ago reads as revoked). */
export const findApiKey = (hash: string) => getItem(apiKeyKey(hash), apiKeyFrom, true);

/** A listed key again, by the table key `findListedApiKeys` gave it, read consistently. */
export const findApiKeyAt = (tableKey: Key) => getItem(tableKey, apiKeyFrom, true);

/** The table keys of every listed API key, newest first. */
const listedKeys = async () => {
  const found: Key[] = [];
  let exclusiveStartKey: Item | undefined;
  do {
    const page = await queryKeys({ index: 'lists', pk: lists.apiKeys(), limit: 1000, exclusiveStartKey });
    found.push(...page.keys);
    exclusiveStartKey = page.lastKey;
  } while (exclusiveStartKey);
  return found;
};

/** Every listed API key, newest first, each with its table key (for `revokeApiKey`). */
export const findListedApiKeys = async () =>
  batchGet(await listedKeys(), (item) => ({ tableKey: keyOf(item), ...apiKeyFrom(item) }));
