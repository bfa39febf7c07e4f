import { DecryptCommand, EncryptCommand, KMSClient } from '@aws-sdk/client-kms';
import { config } from '../core/config.js';

/**
 * Which secret of which store a ciphertext holds; KMS refuses to decrypt it under any other context.
 * A webhook endpoint's signing secret (`endpointSecret`) names its endpoint in `storeId`, the one
 * resource key the IAM condition requires (lib/access.ts).
 */
export interface SecretContext {
  storeId: string;
  field: 'accessToken' | 'webhookSecret' | 'endpointSecret' | 'refreshToken' | 'clientId' | 'clientSecret';
}

export interface SecretCipher {
  encrypt(plaintext: string, context: SecretContext): Promise<string>;
  decrypt(ciphertext: string, context: SecretContext): Promise<string>;
}

/**
 * A decrypted secret is kept for the execution environment's life: its ciphertext never changes
 * meaning (a rotated secret is a new ciphertext, under a new cache key), so asking KMS again for the
 * same bytes buys nothing but a bill (issue 44: about $14 a month at a million orders with a
 * five-minute cache). What a rotation or a revocation takes away is the ciphertext on the store's
 * item, which every caller reads first: a store deleted, erased or rotated never reaches this cache
 * with its old ciphertext. A disabled or scheduled-for-deletion key stops new environments at once
 * and old ones at their end (a deployment replaces them all).
 */
export const ENVIRONMENT_LIFE = Number.POSITIVE_INFINITY;

/** The functions' KMS client (one per environment): what `cipher` and the store poller's cipher call. */
export const kms = new KMSClient({});
const CACHE_MAX = 1_000;

/** How long a decrypted secret is kept in an environment, and how many are (the least recently used go first). */
export interface CacheOptions {
  ttlMs: number;
  max: number;
}

/**
 * Store secrets encrypted directly with the customer-managed key (they are far below KMS's 4 KiB
 * limit, so no data key is needed). Decrypted values are cached per execution environment, keyed by
 * context and ciphertext, by default for the environment's life (`ENVIRONMENT_LIFE`) and at most
 * 1,000 of them: every webhook and every job needs one, and a KMS call costs more than the rest of
 * the order. The poller keeps more (functions/store-poller.ts): a store is polled every interval.
 */
export const kmsCipher = (
  client: KMSClient,
  keyId: () => string,
  { ttlMs, max }: CacheOptions = { ttlMs: ENVIRONMENT_LIFE, max: CACHE_MAX },
): SecretCipher => {
  // Promises, not values: concurrent misses for one secret (a batch of jobs of one supplier on a
  // cold container) share a single KMS call.
  const cache = new Map<string, { value: Promise<string>; expiresAt: number }>();
  const cacheKey = (ciphertext: string, context: SecretContext) => `${context.storeId}|${context.field}|${ciphertext}`;

  const decryptWithKms = async (ciphertext: string, context: SecretContext) => {
    const out = await client.send(
      new DecryptCommand({
        CiphertextBlob: Buffer.from(ciphertext, 'base64'),
        EncryptionContext: { ...context },
      }),
    );
    return Buffer.from(out.Plaintext!).toString('utf8');
  };

  return {
    async encrypt(plaintext, context) {
      const out = await client.send(
        new EncryptCommand({
          KeyId: keyId(),
          Plaintext: Buffer.from(plaintext, 'utf8'),
          EncryptionContext: { ...context },
        }),
      );
      return Buffer.from(out.CiphertextBlob!).toString('base64');
    },

    decrypt(ciphertext, context) {
      const key = cacheKey(ciphertext, context);
      const hit = cache.get(key);
      cache.delete(key);
      // A hit moves to the end: the entry dropped when the cache is full is the least recently used.
      if (hit && hit.expiresAt > Date.now()) return cache.set(key, hit).get(key)!.value;
      const value = decryptWithKms(ciphertext, context);
      if (cache.size >= max) cache.delete(cache.keys().next().value!);
      cache.set(key, { value, expiresAt: Date.now() + ttlMs });
      // A failed call is not remembered: the next caller asks KMS again.
      value.catch(() => cache.delete(key));
      return value;
    },
  };
};

/** The stores' secrets' cipher, under the service's key (read when first used). */
export const cipher = kmsCipher(kms, config.keyId);
