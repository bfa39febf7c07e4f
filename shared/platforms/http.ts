import { AsyncLocalStorage } from 'node:async_hooks';
import { parseWithExactIntegers, stringifyExact } from '../domain/orders.js';
import type { ApiVersionNotice, Platform, RefreshedToken, RefreshGrant, ShopConnection } from './port.js';

/**
 * Shopify's Admin API version (storeplatform_b), in one place: the path, and the schema the tests load
 * to validate the documents (storeplatform-b-documents.ts).
 */
export const SHOPIFY_API_VERSION = '2026-10';

/** storeplatform_a's REST Admin API version (its paths: `/admin/api/<version>/…`). */
export const STOREPLATFORM_A_API_VERSION = '2025-07';

/** The version each platform is asked for; custom is the supplier's own endpoint and names none. */
export const PLATFORM_API_VERSIONS: Record<Platform, string | null> = {
  storeplatform_a: STOREPLATFORM_A_API_VERSION,
  storeplatform_b: SHOPIFY_API_VERSION,
  custom: null,
};

const VERSIONED_PATH = /^\/admin\/api\/([^/]+)\//;

interface Headers {
  get(name: string): string | null;
}

/**
 * What one answer said of the API version; null when it said nothing (no version header, no
 * deprecation), so a platform that sends neither is never reported.
 */
export function apiVersionNotice(
  platform: Platform,
  shopDomain: string,
  path: string,
  headers: Headers,
): ApiVersionNotice | null {
  const served = headers.get('x-shopify-api-version');
  const deprecatedReason = headers.get('x-shopify-api-deprecated-reason');
  if (served === null && deprecatedReason === null) return null;
  const requested = VERSIONED_PATH.exec(path)?.[1] ?? null;
  const deprecated = deprecatedReason !== null || (served !== null && requested !== null && served !== requested);
  return { platform, shopDomain, requested, served, deprecatedReason, deprecated };
}

/**
 * Hands the notice of an answer to the caller's `onApiVersion`, if any. An observer that throws must not
 * turn a call the platform answered into a failure: its error is dropped.
 */
export function reportApiVersion(platform: Platform, shop: ShopConnection, path: string, headers: Headers): void {
  if (!shop.onApiVersion) return;
  const notice = apiVersionNotice(platform, shop.shopDomain, path, headers);
  if (notice === null) return;
  try {
    shop.onApiVersion(notice);
  } catch {
    // the caller's counting failed; the call itself did not
  }
}

/**
 * A platform call that did not succeed. The message is meant for an integrator (a sync job's
 * `errorMessage`): the platform's own reason, never a token, a secret or a request header.
 */
export class PlatformError extends Error {
  override readonly name = 'PlatformError';
  readonly platform: Platform;
  /** The platform's HTTP status; 0 when it could not be reached or did not answer in time. */
  readonly status: number;
  /** Whether the same call may succeed later; 401, 404, 422 and GraphQL userErrors never heal. */
  readonly retryable: boolean;
  /** From `Retry-After`, when the platform asked to wait (429). */
  readonly retryAfterSeconds?: number;
  /**
   * With a 429: the calls a second the platform says the shop allows (Shopify's `restoreRate` over
   * the call's cost, a `RateLimit-Policy` header), when it says so.
   */
  readonly ratePerSecond?: number;
  /**
   * The request left, but no usable answer came back (a timeout, a connection lost mid-call, a
   * 2xx without the created id): the platform may have acted on it.
   */
  readonly outcomeUnknown: boolean;

  constructor(options: {
    platform: Platform;
    status: number;
    retryable: boolean;
    message: string;
    retryAfterSeconds?: number;
    ratePerSecond?: number;
    outcomeUnknown?: boolean;
  }) {
    super(options.message);
    this.platform = options.platform;
    this.status = options.status;
    this.retryable = options.retryable;
    this.outcomeUnknown = options.outcomeUnknown ?? false;
    if (options.retryAfterSeconds !== undefined) this.retryAfterSeconds = options.retryAfterSeconds;
    if (options.ratePerSecond !== undefined) this.ratePerSecond = options.ratePerSecond;
  }
}

/** What an adapter answers itself when the platform says no: a refusal (as a 422) or a 404, never retried. */
export const answeredBy = (platform: Platform, status: 404 | 422, message: string) =>
  new PlatformError({ platform, status, retryable: false, message: `${platform} answered ${status}: ${message}` });

/** A refusal of the shop's (a 422, as GraphQL userErrors are read): what a lookup may show to be already done. */
export const isRefusal = (error: unknown) => error instanceof PlatformError && error.status === 422;

/** 408, 409 (a call still in flight under the same key), 429 and 5xx may heal; every other 4xx will not. */
export function isRetryableStatus(status: number): boolean {
  return status === 0 || status === 408 || status === 409 || status === 429 || status >= 500;
}

const MAX_REASON_CHARS = 300;

/** The reason text of an error body: REST `errors` (string, field map or list), GraphQL `errors`/`userErrors`. */
export function reasonFromBody(body: unknown): string | undefined {
  if (typeof body === 'string') return clean(body);
  if (!isObject(body)) return undefined;
  const errors = body.errors ?? body.error ?? body.message;
  return reasonFromErrors(errors);
}

function reasonFromErrors(errors: unknown): string | undefined {
  if (typeof errors === 'string') return clean(errors);
  if (Array.isArray(errors)) {
    const parts = errors.map((entry) => (isObject(entry) ? userErrorText(entry) : reasonFromErrors(entry)));
    return clean(parts.filter(Boolean).join('; '));
  }
  if (isObject(errors)) {
    if (typeof errors.message === 'string') return clean(errors.message);
    // Rails-style field map: {"line_items": ["can't be blank"]} reads "line_items can't be blank".
    const parts = Object.entries(errors).flatMap(([field, messages]) =>
      (Array.isArray(messages) ? messages : [messages]).map((message) => `${field} ${String(message)}`),
    );
    return clean(parts.join('; '));
  }
  return undefined;
}

/** GraphQL `{field: ["order", "lineItems"], message}` reads "order.lineItems: message". */
export function userErrorText(entry: Record<string, unknown>): string {
  const message = typeof entry.message === 'string' ? entry.message : JSON.stringify(entry);
  const field = Array.isArray(entry.field) ? entry.field.join('.') : typeof entry.field === 'string' ? entry.field : '';
  return field ? `${field}: ${message}` : message;
}

function clean(text: string): string | undefined {
  const collapsed = text.replace(/\s+/g, ' ').trim();
  if (!collapsed) return undefined;
  return collapsed.length > MAX_REASON_CHARS ? `${collapsed.slice(0, MAX_REASON_CHARS)}…` : collapsed;
}

/** Removes every occurrence of the given secrets; a platform that echoes a token must not leak it. */
export function redact(text: string, secrets: Array<string | undefined>): string {
  let result = text;
  for (const secret of secrets) {
    if (secret) result = result.split(secret).join('[redacted]');
  }
  return result;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const DEFAULT_BASE_URL = 'https://{shopDomain}';
const DEFAULT_TIMEOUT_MS = 10_000;

/** `PLATFORM_API_URL` with `{shopDomain}` replaced, read per call: tests and the local runtime point it anywhere. */
export function platformBaseUrl(shopDomain: string): string {
  const template = process.env.PLATFORM_API_URL || DEFAULT_BASE_URL;
  return template.split('{shopDomain}').join(encodeURIComponent(shopDomain)).replace(/\/+$/, '');
}

export function platformTimeoutMs(): number {
  const configured = Number(process.env.PLATFORM_TIMEOUT_MS);
  return Number.isFinite(configured) && configured > 0 ? configured : DEFAULT_TIMEOUT_MS;
}

/** The signal of the caller's budget, when one runs the calls (`withinPlatformBudget`). */
const budgets = new AsyncLocalStorage<AbortSignal>();

/**
 * Runs `work` with every platform call made in it cancelled once `signal` aborts: a caller with a
 * budget shorter than the calls' own timeout (creating a store, shared/stores/subscriptions.ts).
 */
export const withPlatformSignal = <T>(signal: AbortSignal, work: () => Promise<T>) => budgets.run(signal, work);

export interface PlatformCall {
  platform: Platform;
  shop: ShopConnection;
  method: 'GET' | 'POST' | 'PUT' | 'PATCH';
  /** Path below the shop's base URL, starting with '/'. */
  path: string;
  headers?: Record<string, string>;
  /** A value to send as JSON; kept reseller values (`JsonText`) are written verbatim. */
  json?: unknown;
  /** Exact bytes to send instead of `json`, for a body that is signed. */
  rawBody?: Buffer;
}

export interface PlatformAnswer {
  status: number;
  body: unknown;
}

/** Calls the platform; any non-2xx, network failure or timeout becomes a PlatformError. */
export async function callPlatform(call: PlatformCall): Promise<PlatformAnswer> {
  const { platform, shop } = call;
  const secrets = [shop.accessToken, shop.webhookSecret];
  const timeoutMs = platformTimeoutMs();
  const callerSignal = budgets.getStore();
  const body = call.rawBody ?? (call.json === undefined ? undefined : Buffer.from(stringifyExact(call.json), 'utf8'));
  const headers: Record<string, string> = { Accept: 'application/json', ...call.headers };
  if (body) headers['Content-Type'] = 'application/json';

  let status: number;
  let text: string;
  let retryAfter: string | null;
  let ratePolicy: string | null = null;
  try {
    // The signal also bounds reading the body, so a platform that stalls mid-answer times out too.
    const response = await fetch(`${platformBaseUrl(shop.shopDomain)}${call.path}`, {
      method: call.method,
      headers,
      body,
      // A platform API has no reason to redirect, and following one would carry the token elsewhere.
      redirect: 'manual',
      signal: callerSignal
        ? AbortSignal.any([AbortSignal.timeout(timeoutMs), callerSignal])
        : AbortSignal.timeout(timeoutMs),
    });
    status = response.status;
    reportApiVersion(platform, shop, call.path, response.headers);
    retryAfter = response.headers.get('retry-after');
    if (status === 429) ratePolicy = response.headers.get('ratelimit-policy');
    text = await response.text();
  } catch (error) {
    throw networkError(platform, error, timeoutMs, secrets);
  }

  const parsed = parseJson(text);
  if (status >= 200 && status < 300) {
    if (parsed === undefined && text.trim() !== '') {
      throw unexpectedAnswer(platform, status, 'a body that is not JSON');
    }
    return { status, body: parsed };
  }

  // An HTML error page from a proxy says nothing an integrator can use.
  const readable = parsed ?? (/^\s*</.test(text) ? undefined : text);
  const reason = reasonFromBody(readable) ?? `HTTP ${status}`;
  const retryAfterSeconds = isRetryableStatus(status) ? parseRetryAfter(retryAfter) : undefined;
  throw new PlatformError({
    platform,
    status,
    retryable: isRetryableStatus(status),
    retryAfterSeconds,
    ratePerSecond: parseRatePolicy(ratePolicy),
    message: redact(`${platform} answered ${status}: ${reason}`, secrets),
  });
}

/**
 * A 2xx whose body the adapter cannot use. The platform has likely acted (its outcome is unknown
 * to us); retrying is safe (the idempotency key makes the platform answer with what it already
 * created), so it counts as retryable.
 */
export function unexpectedAnswer(platform: Platform, status: number, what: string): PlatformError {
  return new PlatformError({
    platform,
    status,
    retryable: true,
    outcomeUnknown: true,
    message: `${platform} answered ${status} with ${what}`,
  });
}

/**
 * Connection failures that happen before the request is sent (no address, no route, no
 * connection): the platform cannot have acted. Any other failure may come after the request left,
 * so its outcome is unknown (the safe side: the reconciler looks such an order up).
 */
const NOT_SENT = /^(ECONNREFUSED|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH|UND_ERR_CONNECT_TIMEOUT)$/;

function networkError(platform: Platform, error: unknown, timeoutMs: number, secrets: string[]): PlatformError {
  const name = (error as { name?: unknown } | null)?.name;
  if (name === 'TimeoutError') {
    return new PlatformError({
      platform,
      status: 0,
      retryable: true,
      outcomeUnknown: true,
      message: `${platform} did not answer within ${timeoutMs} ms`,
    });
  }
  // Only the system error code (ECONNREFUSED, ENOTFOUND…) is shown: messages may carry the URL or headers.
  const cause = (error as { cause?: { code?: unknown } } | null)?.cause;
  const code = typeof cause?.code === 'string' ? cause.code : 'network error';
  return new PlatformError({
    platform,
    status: 0,
    retryable: true,
    outcomeUnknown: !NOT_SENT.test(code),
    message: redact(`${platform} could not be reached: ${code}`, secrets),
  });
}

/** Integers past 2^53 (ids) become the string of their digits, so no id is rounded into another. */
function parseJson(text: string): unknown {
  if (!text.trim()) return undefined;
  try {
    return parseWithExactIntegers(text);
  } catch {
    return undefined;
  }
}

/** `Retry-After` as seconds (delta-seconds or an HTTP date); undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null, now: number = Date.now()): number | undefined {
  if (value === null) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, Math.ceil((date - now) / 1000));
}

/**
 * The calls a second a `RateLimit-Policy` header states (the IETF draft's `<quota>;w=<window seconds>`,
 * the first policy when several are listed, `"name";q=<quota>;w=<window>` too); undefined when absent
 * or unreadable.
 */
export function parseRatePolicy(value: string | null): number | undefined {
  if (value === null) return undefined;
  const first = value.split(',')[0];
  const quota = /(?:^|;)\s*(?:q=)?(\d+(?:\.\d+)?)\s*(?:;|$)/.exec(first.replace(/^\s*"[^"]*"\s*/, ''));
  const window = /;\s*w=(\d+(?:\.\d+)?)/.exec(first);
  const rate = quota && window ? Number(quota[1]) / Number(window[1]) : Number.NaN;
  return Number.isFinite(rate) && rate > 0 ? rate : undefined;
}

/**
 * A refresh the platform refused (400 `invalid_grant`: spent, expired or revoked; or 401): no retry can
 * heal it, the store needs its merchant again (`reauthorization_required`). A PlatformError that never
 * retries, so the one failure policy (port.ts) classifies it `permanent` as any other.
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
