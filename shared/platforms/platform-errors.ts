import type { Platform } from './port.js';

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
