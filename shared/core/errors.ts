import * as v from 'valibot';

/** Domain errors, each carrying its contract code (CONTRACT.md §3); one middleware maps them to HTTP. */
export type ErrorType = 'invalid_request_error' | 'authentication_error' | 'api_error';

/** Client input quoted in a message, cut short: an error never echoes a 3,000-character id back whole. */
const quoted = (value: string, max = 64) => (value.length > max ? `${value.slice(0, max)}…` : value);

export abstract class ApiError extends Error {
  abstract readonly status: number;
  abstract readonly code: string;
  readonly type: ErrorType = 'invalid_request_error';
  /** Headers the error's response carries besides the standard ones (a 429's `Retry-After`). */
  readonly headers?: Record<string, string>;
  constructor(
    message: string,
    readonly param?: string,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export class ValidationError extends ApiError {
  readonly status = 400;
  readonly code = 'validation_failed';
}

export class SyncJobNotRetryableError extends ApiError {
  readonly status = 400;
  readonly code = 'sync_job_not_retryable';
  constructor(status: string) {
    super(`Only failed or dead sync jobs can be retried; this one is ${status}.`);
  }
}

/** A move the job's state does not allow (CONTRACT.md §11: hold a job that is not pending, release one not held). */
export class InvalidStateError extends ApiError {
  readonly status = 409;
  readonly code = 'invalid_state';
}

export class InvalidCursorError extends ApiError {
  readonly status = 400;
  readonly code = 'invalid_cursor';
  constructor() {
    super('starting_after does not name an item of this list.', 'starting_after');
  }
}

export class UnauthorizedError extends ApiError {
  readonly status = 401;
  readonly code = 'unauthorized';
  override readonly type = 'authentication_error';
  constructor() {
    super('A valid API key is required: send it as "Authorization: Bearer <key>".');
  }
}

export class InvalidSignatureError extends ApiError {
  readonly status = 401;
  readonly code = 'invalid_signature';
  override readonly type = 'authentication_error';
  constructor() {
    super('The webhook signature could not be verified.');
  }
}

export class ResourceMissingError extends ApiError {
  readonly status = 404;
  readonly code = 'resource_missing';
  constructor(kind: string, id: string, param = 'id') {
    super(`No such ${kind}: '${quoted(id)}'.`, param);
  }
}

export class RouteNotFoundError extends ApiError {
  readonly status = 404;
  readonly code = 'resource_missing';
  constructor(method: string, path: string) {
    super(`Unrecognized request URL (${quoted(method, 16)} ${quoted(path, 200)}).`);
  }
}

export class VendorTagConflictError extends ApiError {
  readonly status = 409;
  readonly code = 'vendor_tag_conflict';
  constructor(vendorTag: string) {
    super(`An active source store with vendorTag '${vendorTag}' already exists for this reseller store.`, 'vendorTag');
  }
}

export class IdempotencyKeyReusedError extends ApiError {
  readonly status = 400;
  readonly code = 'idempotency_key_reused';
  constructor() {
    super(
      'This Idempotency-Key was used with another method, path or body; send a new key for a different request.',
      'Idempotency-Key',
    );
  }
}

export class IdempotencyKeyInProgressError extends ApiError {
  readonly status = 409;
  readonly code = 'idempotency_key_in_progress';
  constructor() {
    super('The first request with this Idempotency-Key is still being processed; retry later.', 'Idempotency-Key');
  }
}

export class PayloadTooLargeError extends ApiError {
  readonly status = 413;
  readonly code = 'payload_too_large';
  constructor(limitBytes: number) {
    super(`The request body is larger than ${limitBytes} bytes.`);
  }
}

export class UnsupportedMediaTypeError extends ApiError {
  readonly status = 415;
  readonly code = 'unsupported_media_type';
  constructor() {
    super('The request body must be application/json.');
  }
}

export class WebhookEndpointLimitError extends ApiError {
  readonly status = 400;
  readonly code = 'webhook_endpoint_limit_reached';
  constructor(max: number) {
    super(`An owner may have at most ${max} webhook endpoints; delete one first.`);
  }
}

/**
 * 429 (docs/design.md, "Per-key rate limits"): the API key has made its second's changes already.
 * `Retry-After` says in how many seconds the next window opens.
 */
export class RateLimitedError extends ApiError {
  readonly status = 429;
  readonly code = 'rate_limited';
  override readonly headers: Record<string, string>;
  constructor(limit: number, retryAfterSeconds: number) {
    super(`This API key may make ${limit} changes (POST, PATCH, DELETE) a second; retry after ${retryAfterSeconds} s.`);
    this.headers = { 'Retry-After': String(retryAfterSeconds) };
  }
}

/** The dotted path of the first issue (`pricingConfig.value`), the contract's `param`. */
const paramOf = (issue: v.BaseIssue<unknown>, prefix?: string) => {
  const path = (issue.path ?? []).map((item) => String(item.key)).join('.');
  return [prefix, path].filter(Boolean).join('.') || undefined;
};

/** Parses input with a valibot schema; the first issue becomes a 400 naming its `param`. */
export const parseInput = <S extends v.GenericSchema>(schema: S, input: unknown, prefix?: string): v.InferOutput<S> => {
  const result = v.safeParse(schema, input, { abortEarly: true });
  if (result.success) return result.output;
  const issue = result.issues[0];
  const param = paramOf(issue, prefix);
  throw new ValidationError(param ? `Invalid ${param}: ${issue.message}` : issue.message, param);
};
