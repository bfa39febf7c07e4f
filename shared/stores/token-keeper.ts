import { randomUUID } from 'node:crypto';
import type { Deps } from '../aws/deps.js';
import type { SecretContext } from '../aws/kms-cipher.js';
import { BUSINESS_METRICS, countMetric, logger } from '../core/telemetry.js';
import { disconnectedReason, type StoreFields, type StoreKind, type TokenLife } from '../entities/store.js';
import {
  readStoreToken,
  recordRefreshedToken,
  refuseRefresh,
  releaseRefreshLease,
  type StoreToken,
  takeRefreshLease,
} from '../entities/store-token.js';
import { isRefreshRefused, PlatformError } from '../platforms/http.js';
import type { Platform, ShopConnection, TokenKeeper } from '../platforms/port.js';

/**
 * Expiring access tokens (CONTRACT.md §12.3): the `TokenKeeper` of a store's connection. A token in the
 * last tenth of its life (at most 5 minutes), or answered 401, is refreshed by one worker at a time per
 * store, whatever Lambda it runs in: the lease is a conditional write on the store's item
 * (shared/entities/store-token.ts). The others wait for its new token (consistent reads) and use it; a
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
