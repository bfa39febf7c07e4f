import type { Deps } from '../aws/deps.js';
import type { SecretCipher } from '../aws/kms-cipher.js';
import { watchApiVersion } from '../connection/api-version.js';
import { tokenKeeper } from '../connection/token-keeper.js';
import type { ResellerStore } from '../entities/reseller-store.js';
import type { SourceStore } from '../entities/source-store.js';
import type { EncryptedSecrets } from '../entities/store.js';
import type { ShopConnection } from '../platforms/port.js';

/** A store's secrets as given by the API (plaintext). */
export interface PlainSecrets {
  accessToken: string;
  webhookSecret: string;
}

/** Encrypts both secrets of a store, each under its own context (`{storeId, field}`). */
export const encryptSecrets = async (
  cipher: SecretCipher,
  storeId: string,
  secrets: PlainSecrets,
): Promise<EncryptedSecrets> => {
  const [accessToken, webhookSecret] = await Promise.all([
    cipher.encrypt(secrets.accessToken, { storeId, field: 'accessToken' }),
    cipher.encrypt(secrets.webhookSecret, { storeId, field: 'webhookSecret' }),
  ]);
  return { accessToken, webhookSecret };
};

/** The webhook secret of a store, decrypted under its own context. */
export const webhookSecretOf = (cipher: SecretCipher, store: { id: string; secrets: { webhookSecret: string } }) =>
  cipher.decrypt(store.secrets.webhookSecret, { storeId: store.id, field: 'webhookSecret' });

/**
 * What a platform adapter needs to call a store's shop (either kind), secrets decrypted; with the keeper
 * of its token when the token expires (CONTRACT.md §12.3), which refreshes it through `deps.platforms`.
 */
export const shopConnection = async (
  deps: Pick<Deps, 'cipher' | 'platforms'>,
  store: ResellerStore | SourceStore,
): Promise<ShopConnection> => {
  const { cipher } = deps;
  const [accessToken, webhookSecret] = await Promise.all([
    cipher.decrypt(store.secrets.accessToken, { storeId: store.id, field: 'accessToken' }),
    webhookSecretOf(cipher, store),
  ]);
  const kind = 'resellerStoreId' in store ? 'source' : 'reseller';
  // Every answer's API version headers counted and shown on the store (CONTRACT.md §12.4).
  const onApiVersion = watchApiVersion(kind, store.id);
  const tokens = tokenKeeper(deps, kind, store, accessToken);
  return {
    platform: store.platform,
    shopDomain: store.shopDomain,
    accessToken,
    webhookSecret,
    onApiVersion,
    ...(tokens ? { tokens } : {}),
  };
};
