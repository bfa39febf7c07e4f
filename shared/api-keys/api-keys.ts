import { createHash, randomBytes } from 'node:crypto';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { newId, now } from '../core/ids.js';
import { attributes } from '../dynamo/attributes.js';
import { dynamo } from '../dynamo/client.js';
import { keys } from '../dynamo/keys.js';
import { getItem, TABLE, type Item } from '../dynamo/table.js';

/** Keys are stored only as SHA-256 hashes; the key itself is shown once, when issued. */
export const hashKey = (key: string) => createHash('sha256').update(key, 'utf8').digest('hex');

export const generateKey = (prefix: string) => `${prefix}${randomBytes(32).toString('base64url')}`;

export interface ApiKeyRecord {
  keyId: string;
  ownerId: string;
}

/** The key's item holds its hash (in the key), its id, owner, creation time and, once revoked, `revokedAt`. */
const apiKeyFrom = (item: Item) => {
  const read = attributes(item, 'API key');
  return { keyId: read.string('keyId'), ownerId: read.string('ownerId'), revokedAt: read.stringOrNull('revokedAt') };
};

/** Stores the hash of `key` for `ownerId` (idempotent for the same key and owner). */
export const registerKey = async (key: string, ownerId: string): Promise<ApiKeyRecord> => {
  const hash = hashKey(key);
  const existing = await getItem(keys.apiKey(hash), apiKeyFrom, true);
  if (existing) {
    if (existing.ownerId !== ownerId) throw new Error('that key is already registered to another owner');
    return { keyId: existing.keyId, ownerId: existing.ownerId };
  }
  const record = { keyId: newId('key'), ownerId };
  await dynamo.send(
    new PutCommand({
      TableName: TABLE(),
      Item: { ...keys.apiKey(hash), ...record, createdAt: now() },
      ConditionExpression: 'attribute_not_exists(PK)',
    }),
  );
  return record;
};

/** The owner of a bearer key, or undefined for an unknown or revoked one. */
export const resolveKey = async (key: string): Promise<ApiKeyRecord | undefined> => {
  const found = await getItem(keys.apiKey(hashKey(key)), apiKeyFrom);
  if (!found || found.revokedAt) return undefined;
  return { keyId: found.keyId, ownerId: found.ownerId };
};
