/**
 * Token refresh (CONTRACT §12.3, PLATFORM-API.md "Token refresh"), the same for storeplatform_a and
 * storeplatform_b: `POST {base}/admin/oauth/access_token` with the refresh token, answered with a new
 * access token, its lifetime and the next refresh token (the one sent is spent once its successor is used).
 */

import { callPlatform, unexpectedAnswer } from './http.js';
import { PlatformError, redact } from './platform-errors.js';
import type { Platform, RefreshedToken, RefreshGrant, ShopConnection } from './port.js';
import { isObject } from './rest.js';

/**
 * A refresh the platform refused (400 `invalid_grant`: spent, expired or revoked; or 401): no retry can
 * heal it, the store needs its merchant again (`reauthorization_required`). A PlatformError that never
 * retries, so the one failure policy (failure.ts) classifies it `permanent` as any other.
 */
export class RefreshRefusedError extends PlatformError {
  /** The OAuth error the platform named (`invalid_grant`, `invalid_client`…), or `http_<status>`. */
  readonly grantError: string;

  constructor(platform: Platform, status: number, grantError: string) {
    super({ platform, status, retryable: false, message: `${platform} refused the token refresh: ${grantError}` });
    this.grantError = grantError;
  }
}

export const isRefreshRefused = (error: unknown): error is RefreshRefusedError => error instanceof RefreshRefusedError;

const inSeconds = (value: unknown, now: number): string | null =>
  typeof value === 'number' && Number.isFinite(value) && value > 0 ? new Date(now + value * 1000).toISOString() : null;

/** The answer's token pair; undefined unless it carries both tokens. */
function refreshedOf(body: unknown, now: number): RefreshedToken | undefined {
  if (!isObject(body) || typeof body.access_token !== 'string' || typeof body.refresh_token !== 'string') {
    return undefined;
  }
  return {
    accessToken: body.access_token,
    refreshToken: body.refresh_token,
    accessTokenExpiresAt: inSeconds(body.expires_in, now),
    refreshTokenExpiresAt: inSeconds(body.refresh_token_expires_in, now),
    scope: typeof body.scope === 'string' ? body.scope : null,
  };
}

/** The OAuth error of a refused refresh, read from the platform's message (`… answered 400: invalid_grant`). */
const grantErrorOf = (error: PlatformError) =>
  /\b(invalid_grant|invalid_client|invalid_request|unauthorized_client)\b/.exec(error.message)?.[1] ??
  `http_${error.status}`;

/**
 * Refreshes the shop's access token. 400 and 401 throw `RefreshRefusedError`; anything else fails as
 * any platform call does (a 5xx or a lost answer may heal: the refresh token was perhaps not spent).
 * The refresh token and the client secret are redacted from every message.
 */
export async function refreshAccessToken(
  platform: Platform,
  shop: ShopConnection,
  grant: RefreshGrant,
  now: () => number = Date.now,
): Promise<RefreshedToken> {
  const secrets = [grant.refreshToken, grant.clientSecret, grant.clientId];
  const json = {
    client_id: grant.clientId,
    client_secret: grant.clientSecret,
    grant_type: 'refresh_token',
    refresh_token: grant.refreshToken,
  };
  let answer: Awaited<ReturnType<typeof callPlatform>>;
  try {
    answer = await callPlatform({ platform, shop, method: 'POST', path: '/admin/oauth/access_token', json });
  } catch (error) {
    if (!(error instanceof PlatformError)) throw error;
    if (error.status === 400 || error.status === 401)
      throw new RefreshRefusedError(platform, error.status, grantErrorOf(error));
    throw new PlatformError({ ...error, platform, message: redact(error.message, secrets) });
  }
  const refreshed = refreshedOf(answer.body, now());
  if (!refreshed) throw unexpectedAnswer(platform, answer.status, 'no access and refresh token');
  return refreshed;
}
