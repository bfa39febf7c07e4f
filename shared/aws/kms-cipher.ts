import { DecryptCommand, EncryptCommand, type KMSClient } from '@aws-sdk/client-kms';

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

const CACHE_TTL_MS = 5 * 60_000;
const CACHE_MAX = 1_000;

/** How long a decrypted secret is kept in an environment, and how many are. */
export interface CacheOptions {
  ttlMs: number;
  max: number;
}

/**
 * Store secrets encrypted directly with the customer-managed key (they are far below KMS's 4 KiB
 * limit, so no data key is needed). Decrypted values are cached per container, by default for five
 * minutes: every webhook and every job needs one, and a KMS call costs more than the rest of the
 * order. The poller keeps them longer (functions/store-poller.ts): a store is polled every interval.
 */
export const kmsCipher = (
  client: KMSClient,
  keyId: () => string,
  { ttlMs, max }: CacheOptions = { ttlMs: CACHE_TTL_MS, max: CACHE_MAX },
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
      if (hit && hit.expiresAt > Date.now()) return hit.value;
      const value = decryptWithKms(ciphertext, context);
      if (cache.size >= max) cache.delete(cache.keys().next().value!);
      cache.set(key, { value, expiresAt: Date.now() + ttlMs });
      // A failed call is not remembered: the next caller asks KMS again.
      value.catch(() => cache.delete(key));
      return value;
    },
  };
};
