import type { SecretCipher } from '../aws/kms-cipher.js';
import { findStoresOnShop, readPreviousWebhookSecret, type StoreKind, type StoreOnShop } from '../entities/store.js';

/** Every store of one kind registered under a shop domain, deleted or not (GSI2 carries what verifying needs). */
export const storesOnShop = (shopDomain: string, kind: StoreKind) => findStoresOnShop(shopDomain, kind);

/**
 * The webhook secret a rotation replaced, while it still verifies (CONTRACT.md §10.9: 24 hours), or
 * undefined. Read from the store's own item, and only once its current secret has not verified: the
 * lookup index carries the current secret alone, so the common case costs nothing more.
 */
export const previousWebhookSecretOf = async (
  cipher: SecretCipher,
  store: Pick<StoreOnShop, 'kind' | 'id'>,
  at = Date.now(),
): Promise<string | undefined> => {
  const previous = await readPreviousWebhookSecret(store.kind, store.id);
  if (!previous || Date.parse(previous.until) <= at) return undefined;
  return cipher.decrypt(previous.ciphertext, { storeId: store.id, field: 'webhookSecret' });
};
