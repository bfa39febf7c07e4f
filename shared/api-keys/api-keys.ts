import { createHash, randomBytes } from 'node:crypto';
import { newId, now } from '../core/ids.js';
import {
  type ApiKeyRecord,
  type ApiKeySummary,
  findApiKey,
  findApiKeyAt,
  findListedApiKeys,
  listApiKey,
  putApiKey,
  revokeApiKey,
} from '../entities/api-key.js';

export type { ApiKeyRecord, ApiKeySummary };

/** Keys are stored only as SHA-256 hashes; the key itself is shown once, when issued. */
export const hashKey = (key: string) => createHash('sha256').update(key, 'utf8').digest('hex');

export const generateKey = (prefix: string) => `${prefix}${randomBytes(32).toString('base64url')}`;

/** Stores the hash of `key` for `ownerId` (idempotent for the same key and owner). */
export const registerKey = async (key: string, ownerId: string): Promise<ApiKeyRecord> => {
  const hash = hashKey(key);
  const existing = await findApiKey(hash);
  if (existing) {
    if (existing.ownerId !== ownerId) throw new Error('that key is already registered to another owner');
    // A key issued before keys were listed (a persistent local table) joins the list when registered again.
    if (!existing.listed) await listApiKey(hash, existing, existing.createdAt ?? now());
    return { keyId: existing.keyId, ownerId: existing.ownerId };
  }
  const record = { keyId: newId('key'), ownerId };
  const createdAt = now();
  // Registered meanwhile (two registrations at once): registering again answers the winner's.
  if ((await putApiKey(hash, record, createdAt)) !== true) return registerKey(key, ownerId);
  return record;
};

/** The owner of a bearer key, or undefined for an unknown or revoked one. */
export const resolveKey = async (key: string): Promise<ApiKeyRecord | undefined> => {
  // Read consistently: a key revoked a moment ago is refused by the next lookup, so on AWS the
  // authorizer cache's TTL alone bounds how long a revoked key still works (docs/design.md).
  const found = await findApiKey(hashKey(key));
  if (!found || found.revokedAt) return undefined;
  return { keyId: found.keyId, ownerId: found.ownerId };
};

/** Every API key, newest first: ids, owners and dates only. */
export const listKeys = async (): Promise<ApiKeySummary[]> =>
  (await findListedApiKeys()).map(({ keyId, ownerId, createdAt, revokedAt }) => ({
    keyId,
    ownerId,
    createdAt,
    revokedAt,
  }));

export type RevokeOutcome =
  | { outcome: 'revoked'; key: ApiKeySummary }
  | { outcome: 'already_revoked'; key: ApiKeySummary }
  | { outcome: 'unknown' };

/** Revokes a key by its id (`key_…`): the authorizer refuses it from the next request on. */
export const revokeKey = async (keyId: string): Promise<RevokeOutcome> => {
  const found = await findListedApiKeys();
  const match = found.find((key) => key.keyId === keyId);
  if (!match) return { outcome: 'unknown' };
  const { tableKey, listed: _, ...summary } = match;
  if (summary.revokedAt) return { outcome: 'already_revoked', key: summary };
  const revokedAt = now();
  const revoked = await revokeApiKey(tableKey, revokedAt);
  if (revoked === true) return { outcome: 'revoked', key: { ...summary, revokedAt } };
  // Revoked meanwhile: the failed write answers the key it met (read only when it did not).
  const again = revoked.met ?? (await findApiKeyAt(tableKey));
  return again
    ? { outcome: 'already_revoked', key: { ...summary, revokedAt: again.revokedAt } }
    : { outcome: 'unknown' };
};
