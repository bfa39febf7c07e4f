import { randomUUID } from 'node:crypto';
import type { Deps } from '../aws/deps.js';
import type { SecretCipher, SecretContext } from '../aws/kms-cipher.js';
import { now } from '../core/ids.js';
import { BUSINESS_METRICS, countMetric, logger } from '../core/telemetry.js';
import {
  disconnectedReason,
  type EncryptedRefreshGrant,
  type EncryptedSecrets,
  type ResellerStore,
  readStoreToken,
  recordApiVersion,
  recordRefreshedToken,
  refuseRefresh,
  releaseRefreshLease,
  type SourceStore,
  type StoreApiVersion,
  type StoreFields,
  type StoreKind,
  type StoreToken,
  type TokenLife,
  takeRefreshLease,
} from '../entities/store.js';
import { isRefreshRefused, PlatformError } from '../platforms/http.js';
import type { ApiVersionNotice, Platform, ShopConnection, TokenKeeper } from '../platforms/port.js';

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

/**
 * Expiring access tokens (CONTRACT.md §12.3): the `TokenKeeper` of a store's connection. A token in the
 * last tenth of its life (at most 5 minutes), or answered 401, is refreshed by one worker at a time per
 * store, whatever Lambda it runs in: the lease is a conditional write on the store's item
 * (shared/entities/store.ts). The others wait for its new token (consistent reads) and use it; a
 * token that another worker refreshed or a rotation replaced is used as found, without a refresh. The
 * new access token, refresh token and expiry are stored in one write. A refused refresh makes the store
 * `reauthorization_required`, and the call fails as a disconnected store's work does (`store_disconnected`).
 */

/** How long a lease holds: past the platform call's timeout (10 s), so it ends before it lapses. */
export const REFRESH_LEASE_MS = 20_000;
/** How often a worker waiting on another's refresh reads the store again. */
export const REFRESH_WAIT_MS = 50;
/** The most of a token's life kept in reserve: Shopify's hour-long tokens are refreshed in their last 5 minutes. */
export const REFRESH_MARGIN_MAX_MS = 5 * 60_000;

/** Whether a token is in the last tenth of its life (at most 5 minutes), or past it; never for one without expiry. */
export const isAboutToExpire = (life: TokenLife, now: number) => {
  if (!life.tokenExpiresAt) return false;
  const expires = Date.parse(life.tokenExpiresAt);
  const issued = life.tokenIssuedAt ? Date.parse(life.tokenIssuedAt) : Number.NaN;
  const lifetime = Number.isNaN(issued) ? REFRESH_MARGIN_MAX_MS * 10 : expires - issued;
  return now >= expires - Math.min(REFRESH_MARGIN_MAX_MS, Math.max(0, lifetime) / 10);
};

/**
 * A refreshed token's life, counted from when the refresh was asked (the platform's clock starts before
 * its answer arrives): its `expires_in` (read at `answered` into `expiresAt`) from `asked`.
 */
const lifeFrom = (expiresAt: string | null, asked: number, answered: number): TokenLife =>
  expiresAt === null
    ? { tokenExpiresAt: null, tokenIssuedAt: null }
    : {
        tokenExpiresAt: new Date(Date.parse(expiresAt) - (answered - asked)).toISOString(),
        tokenIssuedAt: new Date(asked).toISOString(),
      };

/** The token a keeper holds: its plaintext to call with, its ciphertext (what a refresh conditions on), its life. */
interface HeldToken extends TokenLife {
  plain: string;
  ciphertext: string;
}

type KeeperDeps = Pick<Deps, 'cipher' | 'platforms'>;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The keeper of a store's token, or undefined when it does not refresh (no refresh token, or custom:
 * its pushes are signed, not tokened). `accessToken`: the store's token, decrypted.
 */
export const tokenKeeper = (
  deps: KeeperDeps,
  kind: StoreKind,
  store: Pick<StoreFields, 'id' | 'platform' | 'shopDomain' | 'secrets' | 'tokenLife'>,
  accessToken: string,
): TokenKeeper | undefined => {
  if (!store.secrets.refresh || store.platform === 'custom') return undefined;
  const refresher = new Refresher(deps, kind, store);
  let held: HeldToken = {
    plain: accessToken,
    ciphertext: store.secrets.accessToken,
    tokenExpiresAt: store.tokenLife?.tokenExpiresAt ?? null,
    tokenIssuedAt: store.tokenLife?.tokenIssuedAt ?? null,
  };
  return {
    async current() {
      if (isAboutToExpire(held, Date.now())) held = await refresher.renew(held.ciphertext);
      return held.plain;
    },
    async afterUnauthorized(refused) {
      // Another call of this connection renewed it already.
      if (refused !== held.plain) return held.plain;
      held = await refresher.renew(held.ciphertext);
      return held.plain === refused ? null : held.plain;
    },
    isStale: (token) => token !== held.plain || isAboutToExpire(held, Date.now()),
  };
};

/** What renews one store's token: reads, waits, takes the lease, refreshes, writes. */
class Refresher {
  constructor(
    private readonly deps: KeeperDeps,
    private readonly kind: StoreKind,
    private readonly store: Pick<StoreFields, 'id' | 'platform' | 'shopDomain'>,
  ) {}

  private decrypt(ciphertext: string, field: SecretContext['field']) {
    return this.deps.cipher.decrypt(ciphertext, { storeId: this.store.id, field });
  }

  private encrypt(plaintext: string, field: SecretContext['field']) {
    return this.deps.cipher.encrypt(plaintext, { storeId: this.store.id, field });
  }

  /**
   * A newer token than the one whose ciphertext is `used`: the store's, when another worker refreshed it
   * or a rotation replaced it; refreshed by this worker under the lease otherwise. Waits for a lease in
   * force (at most its length, then takes it over); the same token back when the store has no refresh grant.
   */
  async renew(replaced: string): Promise<HeldToken> {
    let used = replaced;
    const giveUpAt = Date.now() + 2 * REFRESH_LEASE_MS;
    for (;;) {
      const token = await readStoreToken(this.kind, this.store.id);
      if (!token || token.deletedAt) throw this.failure(404, `${this.kind} store ${this.store.id} no longer exists`);
      const disconnected = disconnectedReason(this.kind, { id: this.store.id, connection: token.connection });
      if (disconnected) throw this.failure(401, disconnected);
      if (!token.refresh) return this.held(token);
      if (token.accessToken !== used) {
        // Refreshed by another worker, or rotated: used as found, unless it is itself about to expire.
        if (!isAboutToExpire(token, Date.now())) return this.held(token);
        used = token.accessToken;
        continue;
      }
      const now = Date.now();
      if (token.lease && Date.parse(token.lease.until) > now) {
        if (now > giveUpAt) throw this.failure(0, 'the token refresh of another worker did not end in time', true);
        await sleep(REFRESH_WAIT_MS);
        continue;
      }
      const holder = randomUUID();
      const lease = { holder, now: new Date(now).toISOString(), until: new Date(now + REFRESH_LEASE_MS).toISOString() };
      const taken = await takeRefreshLease(this.kind, this.store.id, used, lease);
      if (taken !== true) continue;
      const refreshed = await this.refresh(token, holder);
      if (refreshed) return refreshed;
      // The lease was lost to a rotation (or lapsed): the store's token is read again.
    }
  }

  private async held(token: StoreToken): Promise<HeldToken> {
    return {
      plain: await this.decrypt(token.accessToken, 'accessToken'),
      ciphertext: token.accessToken,
      tokenExpiresAt: token.tokenExpiresAt,
      tokenIssuedAt: token.tokenIssuedAt,
    };
  }

  /** The refresh under the lease `holder`: the new token, or undefined when its write lost the lease. */
  private async refresh(token: StoreToken, holder: string): Promise<HeldToken | undefined> {
    const grant = token.refresh!;
    const [refreshToken, clientId, clientSecret] = await Promise.all([
      this.decrypt(grant.refreshToken, 'refreshToken'),
      this.decrypt(grant.clientId, 'clientId'),
      this.decrypt(grant.clientSecret, 'clientSecret'),
    ]);
    const shop: ShopConnection = {
      platform: this.store.platform,
      shopDomain: this.store.shopDomain,
      accessToken: '',
      webhookSecret: '',
    };
    let refreshed: Awaited<ReturnType<ReturnType<KeeperDeps['platforms']>['refreshAccessToken']>>;
    const asked = Date.now();
    try {
      refreshed = await this.deps.platforms(this.store.platform).refreshAccessToken(shop, {
        refreshToken,
        clientId,
        clientSecret,
      });
    } catch (error) {
      if (isRefreshRefused(error)) return this.refused(grant.refreshToken, holder, error.grantError);
      await releaseRefreshLease(this.kind, this.store.id, holder).catch((failure: Error) =>
        logger.error('the token refresh lease could not be released', failure),
      );
      throw error;
    }
    if (refreshed === 'unsupported') {
      await releaseRefreshLease(this.kind, this.store.id, holder);
      return this.held(token);
    }
    const life = lifeFrom(refreshed.accessTokenExpiresAt, asked, Date.now());
    const [accessCiphertext, refreshCiphertext] = await Promise.all([
      this.encrypt(refreshed.accessToken, 'accessToken'),
      this.encrypt(refreshed.refreshToken, 'refreshToken'),
    ]);
    const written = await recordRefreshedToken(this.kind, this.store.id, holder, grant.refreshToken, {
      accessToken: accessCiphertext,
      refreshToken: refreshCiphertext,
      ...life,
    });
    if (!written) {
      logger.warn('a refreshed token was not kept: new credentials or another refresh came first', {
        storeId: this.store.id,
      });
      return undefined;
    }
    countMetric(BUSINESS_METRICS.tokensRefreshed);
    logger.info('access token refreshed', { storeId: this.store.id, tokenExpiresAt: life.tokenExpiresAt });
    return { plain: refreshed.accessToken, ciphertext: accessCiphertext, ...life };
  }

  /**
   * The platform refused the refresh: the store needs its merchant again, and the call fails as a
   * disconnected store's work. Undefined when new credentials replaced the refresh token meanwhile (they win).
   */
  private async refused(spent: string, holder: string, grantError: string): Promise<undefined> {
    const at = new Date().toISOString();
    const reason = `token refresh refused: ${grantError}`;
    if (!(await refuseRefresh(this.kind, this.store.id, holder, spent, reason, at))) return undefined;
    countMetric(BUSINESS_METRICS.storesDisconnected);
    logger.warn('the token refresh was refused: the store needs reauthorization', { storeId: this.store.id, reason });
    const connection = { state: 'reauthorization_required' as const, since: at, reason };
    throw this.failure(401, disconnectedReason(this.kind, { id: this.store.id, connection }) ?? reason);
  }

  private failure(status: number, message: string, retryable = false) {
    return new PlatformError({ platform: this.store.platform as Platform, status, retryable, message });
  }
}

/** What this environment last recorded per store, so an unchanged answer writes nothing. */
const recorded = new Map<string, string>();
/** At most this many stores remembered; past it the oldest is forgotten (it is written again, once). */
const REMEMBERED = 10_000;

/**
 * The `onApiVersion` of a store's connection (CONTRACT.md §12.4): every answer's version headers,
 * counted when deprecated (`PlatformApiDeprecated`) and shown on the store as `apiVersion`, written
 * only when they change (not once per call). A write that fails is logged: it never fails the call.
 * `written` is told each version it writes, for an answer that shows the store (withSubscriptions).
 */
export const watchApiVersion = (
  kind: StoreKind,
  storeId: string,
  stored?: StoreApiVersion | null,
  written?: (version: StoreApiVersion) => void,
) => {
  // What the store's item already says counts as recorded: an environment's first answer that says the
  // same writes nothing (issue 44: each environment's first write cost every store a write unit).
  if (stored && !recorded.has(`${kind}#${storeId}`))
    recorded.set(
      `${kind}#${storeId}`,
      JSON.stringify([stored.requested, stored.served, stored.deprecations[0] ?? null]),
    );
  return (notice: ApiVersionNotice): Promise<void> | undefined => {
    if (notice.deprecated) {
      countMetric(BUSINESS_METRICS.platformApiDeprecated);
      logger.warn('the platform answered another API version or a deprecation', {
        storeId,
        requested: notice.requested,
        served: notice.served,
        deprecatedReason: notice.deprecatedReason,
      });
    }
    if (notice.requested === null) return undefined;
    const key = `${kind}#${storeId}`;
    const seen = JSON.stringify([notice.requested, notice.served, notice.deprecatedReason]);
    if (recorded.get(key) === seen) return undefined;
    recorded.delete(key);
    recorded.set(key, seen);
    const oldest = recorded.keys().next();
    if (recorded.size > REMEMBERED && !oldest.done) recorded.delete(oldest.value);
    const version = {
      requested: notice.requested,
      served: notice.served,
      deprecations: notice.deprecatedReason ? [notice.deprecatedReason] : [],
      checkedAt: now(),
    };
    written?.(version);
    return recordApiVersion(kind, storeId, version).catch((error: Error) => {
      recorded.delete(key);
      logger.error("the store's API version could not be recorded", error);
    });
  };
};
