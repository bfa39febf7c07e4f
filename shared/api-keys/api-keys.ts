import { createHash, randomBytes } from 'node:crypto';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../dynamo/client.js';
import { newId, now } from '../core/ids.js';
import { keys } from '../dynamo/keys.js';
import { getItem, TABLE } from '../dynamo/table.js';

/** Keys are stored only as SHA-256 hashes; the key itself is shown once, when issued. */
export const hashKey = (key: string) => createHash('sha256').update(key, 'utf8').digest('hex');

export const generateKey = (prefix: string) => `${prefix}${randomBytes(32).toString('base64url')}`;

export interface ApiKeyRecord {
  keyId: string;
  ownerId: string;
}

/** Stores the hash of `key` for `ownerId` (idempotent for the same key and owner). */
export const registerKey = async (key: string, ownerId: string): Promise<ApiKeyRecord> => {
  const hash = hashKey(key);
  const existing = await getItem<ApiKeyRecord>(keys.apiKey(hash), true);
  if (existing) {
    if (existing.ownerId !== ownerId) throw new Error('that key is already registered to another owner');
    return existing;
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
  const item = await getItem<ApiKeyRecord & { revokedAt?: string }>(keys.apiKey(hashKey(key)));
  if (!item || item.revokedAt) return undefined;
  return { keyId: item.keyId, ownerId: item.ownerId };
};
