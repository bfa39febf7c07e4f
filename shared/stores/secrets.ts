import type { Deps } from '../aws/deps.js';
import type { SecretCipher } from '../aws/kms-cipher.js';
import type { ResellerStore } from '../entities/reseller-store.js';
import type { SourceStore } from '../entities/source-store.js';
import type { EncryptedRefreshGrant, EncryptedSecrets, TokenLife } from '../entities/store.js';
import type { ShopConnection } from '../platforms/port.js';
import { watchApiVersion } from './api-version-watch.js';
import { tokenKeeper } from './token-keeper.js';

/** A store's secrets as given by the API (plaintext), with an expiring token's extras (CONTRACT.md §12.3). */
export interface PlainSecrets extends PlainTokenGrant {
  accessToken: string;
  webhookSecret: string;
}

/** What refreshes an expiring access token, and when it expires, as given by the API: all three secrets or none. */
export interface PlainTokenGrant {
  refreshToken?: string;
  clientId?: string;
  clientSecret?: string;
  /** ISO 8601 (validated by the schema). */
  accessTokenExpiresAt?: string;
}

/** Encrypts the secrets of a store, each under its own context (`{storeId, field}`). */
export const encryptSecrets = async (
  cipher: SecretCipher,
  storeId: string,
  secrets: PlainSecrets,
): Promise<EncryptedSecrets> => {
  const [accessToken, webhookSecret, refresh] = await Promise.all([
    cipher.encrypt(secrets.accessToken, { storeId, field: 'accessToken' }),
    cipher.encrypt(secrets.webhookSecret, { storeId, field: 'webhookSecret' }),
    encryptRefreshGrant(cipher, storeId, secrets),
  ]);
  return { accessToken, webhookSecret, refresh };
};

/** The refresh grant given, encrypted (one KMS call each), or null when none was given. */
export const encryptRefreshGrant = async (
  cipher: SecretCipher,
  storeId: string,
  grant: PlainTokenGrant,
): Promise<EncryptedRefreshGrant | null> => {
  const { refreshToken, clientId, clientSecret } = grant;
  if (refreshToken === undefined || clientId === undefined || clientSecret === undefined) return null;
  const [refresh, client, secret] = await Promise.all([
    cipher.encrypt(refreshToken, { storeId, field: 'refreshToken' }),
    cipher.encrypt(clientId, { storeId, field: 'clientId' }),
    cipher.encrypt(clientSecret, { storeId, field: 'clientSecret' }),
  ]);
  return { refreshToken: refresh, clientId: client, clientSecret: secret };
};

/** A new access token's life: its expiry as given (normalised to UTC), from `at`; nulls for one without. */
export const tokenLifeOf = (grant: PlainTokenGrant, at: string): TokenLife =>
  grant.accessTokenExpiresAt === undefined
    ? { tokenExpiresAt: null, tokenIssuedAt: null }
    : { tokenExpiresAt: new Date(grant.accessTokenExpiresAt).toISOString(), tokenIssuedAt: at };

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
  const onApiVersion = watchApiVersion(kind, store.id, store.apiVersion);
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
