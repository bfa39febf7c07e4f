/** The one place platform adapters touch the network: base URL, timeout, JSON, error mapping. */
import { AsyncLocalStorage } from 'node:async_hooks';
import { parseWithExactIntegers, stringifyExact } from '../domain/orders.js';
import { reportApiVersion } from './api-version.js';
import { isRetryableStatus, PlatformError, reasonFromBody, redact } from './platform-errors.js';
import type { Platform, ShopConnection } from './port.js';

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
