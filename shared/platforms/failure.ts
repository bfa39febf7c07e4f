import { PlatformError } from './platform-errors.js';

/**
 * The one failure policy of both workers (sync jobs and fulfillments): what a failed platform
 * call means for the work it was doing.
 *
 * - `throttled`: the platform asked to wait (429). The work is put off for `delaySeconds`
 *   (`deferralSeconds`) in a fresh message, so throttling never uses up a receive.
 * - `permanent`: 401, 404, 422, GraphQL userErrors. No retry can heal it: the work ends (a sync job
 *   is looked up first when an earlier attempt may have placed its order: order-flow/placing-end.ts).
 * - `unknown_outcome`: the request left but no usable answer came back (a timeout, a connection
 *   lost mid-call, a 2xx without the created id). The platform may have acted; the workers retry
 *   it like a transient failure, and the idempotency key makes a retry answer with what exists.
 * - `transient`: anything else (5xx, 408, 409, unreachable, or a fault of ours): SQS retries it.
 *
 * `reason` is safe to store and show: a platform's own reason (redacted), or, for an error that is
 * not the platform's, the caller's generic text (`internal` is then true, and the error goes to
 * the log only).
 */
export type Failure =
  | { kind: 'throttled'; reason: string; delaySeconds: number }
  | { kind: 'permanent'; reason: string; status: number }
  | { kind: 'unknown_outcome'; reason: string }
  | { kind: 'transient'; reason: string; internal: boolean };

/** The longest one SQS message can be delayed: a longer wait is made of several such delays. */
export const MAX_DEFERRAL_SECONDS = 900;

/** The longest a 429 is waited for at once (the default throttling budget): a day. */
export const MAX_THROTTLE_WAIT_SECONDS = 86_400;

/**
 * How long a throttled call waits: `Retry-After` (1 s when absent), plus up to a quarter more (and up
 * to a second) of jitter, so throttled work does not come back in step. Never less than the platform
 * asked for: a supplier asking for an hour is called again after an hour, not after 15 minutes (the
 * wait is made of message delays of at most `MAX_DEFERRAL_SECONDS`, `notBefore` on the message).
 */
export const deferralSeconds = (retryAfterSeconds: number | undefined, random: () => number = Math.random) => {
  const wait = Math.min(MAX_THROTTLE_WAIT_SECONDS, Math.max(1, Math.ceil(retryAfterSeconds ?? 1)));
  return Math.min(MAX_THROTTLE_WAIT_SECONDS, wait + Math.floor(random() * (wait / 4 + 1)));
};

/**
 * A message that must not be handled before `notBefore` (epoch ms) and came early (a wait longer than
 * one message delay): how many more seconds it waits, or 0 when its time has come.
 */
export const secondsUntil = (notBefore: number | undefined, now = Date.now()) =>
  notBefore === undefined || notBefore - now <= 1000 ? 0 : Math.ceil((notBefore - now) / 1000);

/** The platform's HTTP status of a failed call, or null when there was none (not reached, no answer). */
export const platformStatusOf = (error: unknown) =>
  error instanceof PlatformError && error.status > 0 ? error.status : null;

/**
 * The status class of a failed platform call, for the platform-error metric: `network` when no
 * answer came (status 0); undefined for an error that is not the platform's.
 */
export const platformStatusClass = (error: unknown): '4xx' | '5xx' | 'network' | undefined => {
  if (!(error instanceof PlatformError)) return undefined;
  if (error.status === 0) return 'network';
  return error.status >= 500 ? '5xx' : '4xx';
};

export const classify = (error: unknown, internalReason: string): Failure => {
  if (!(error instanceof PlatformError)) return { kind: 'transient', reason: internalReason, internal: true };
  const reason = error.message;
  if (error.status === 429) {
    return { kind: 'throttled', reason, delaySeconds: deferralSeconds(error.retryAfterSeconds) };
  }
  if (!error.retryable) return { kind: 'permanent', reason, status: error.status };
  if (error.outcomeUnknown) return { kind: 'unknown_outcome', reason };
  return { kind: 'transient', reason, internal: false };
};

/**
 * What a 429 tells a supplier's pace: `Retry-After` (1 s when absent) and the calls a second the
 * platform states, when it does; undefined for any other failure.
 */
export const throttleOf = (error: unknown) =>
  error instanceof PlatformError && error.status === 429
    ? { retryAfterSeconds: error.retryAfterSeconds ?? 1, ratePerSecond: error.ratePerSecond }
    : undefined;
