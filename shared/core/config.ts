/** Environment of a function, read when first needed (never at import, so the local runtime can set it first). */
const required = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`environment variable ${name} is not set`);
  return value;
};

const seconds = (name: string, fallback: number) => {
  const value = process.env[name];
  if (!value) return fallback;
  const parsed = Number(value);
  if (!Number.isFinite(parsed) || parsed < 0) throw new Error(`${name} must be a number of seconds`);
  return parsed;
};

export const config = {
  tableName: () => required('TABLE_NAME'),
  /**
   * Set by the local runtime alone (lib/local/runtime.ts), never by the stack: a deployed stage,
   * whatever its name, never lets a webhook endpoint point at a loopback address (CONTRACT.md §14).
   */
  localRuntime: () => process.env.LOCAL_RUNTIME === '1',
  keyId: () => required('KMS_KEY_ID'),
  syncQueueUrl: () => required('SYNC_QUEUE_URL'),
  fulfillmentQueueUrl: () => required('FULFILLMENT_QUEUE_URL'),
  pollQueueUrl: () => required('POLL_QUEUE_URL'),
  deliveryQueueUrl: () => required('DELIVERY_QUEUE_URL'),
  /** The app-webhook queue: app webhooks whose topic is handled durably (shared/app-webhooks/topics.ts). */
  appQueueUrl: () => required('APP_QUEUE_URL'),
  /**
   * Where the platforms send webhooks (CONTRACT.md §12.1): the API's URL, or `-c publicUrl` on AWS; the
   * local runtime's API URL locally.
   */
  publicUrl: () => required('PUBLIC_URL'),
  /**
   * The waits after a webhook delivery's 1st, 2nd, … failed try (CONTRACT.md §14), then `failed`; the
   * local runtime sets seconds, a local scale like its other clocks.
   */
  deliveryRetrySeconds: () => {
    const steps = (process.env.DELIVERY_RETRY_SECONDS || '5,300,1800,7200,18000,36000,36000').split(',').map(Number);
    if (!steps.every((step) => Number.isInteger(step) && step >= 0))
      throw new Error('DELIVERY_RETRY_SECONDS must be whole seconds, comma separated');
    return steps;
  },
  /** How long every delivery to an endpoint may fail before the endpoint is disabled: 5 days. */
  endpointFailingSeconds: () => seconds('ENDPOINT_FAILING_SECONDS', 5 * 86_400),
  /** How often every active store is polled (CONTRACT.md §10.7): 900 on AWS, a few seconds locally. */
  pollIntervalSeconds: () => seconds('POLL_INTERVAL_SECONDS', 900),
  shopDomainSuffix: () => process.env.PLATFORM_SHOP_DOMAIN_SUFFIX || 'myshopify.com',
  apiKeyPrefix: () => process.env.API_KEY_PREFIX || 'sk_live_',
  /**
   * How long a job may stay `pending`, `processing` or `failed` without a move (after any wait it
   * announced) before the reconciler sends it a new message (CONTRACT.md §6). The stack sets the
   * sync queue's visibility timeout × (MAX_RECEIVE_COUNT + 1) + 5 minutes.
   */
  leaseSeconds: () => seconds('SYNC_LEASE_SECONDS', 1020),
  /** How long a job may stay held before it gets `attention` `hold_expired` (CONTRACT.md §11): a week. */
  maxHoldSeconds: () => seconds('MAX_HOLD_SECONDS', 604_800),
  /** How long a job may be throttled (429) before it is `dead` (CONTRACT.md §6). */
  throttleBudgetSeconds: () => seconds('THROTTLE_BUDGET_SECONDS', 86_400),
  /**
   * The wait after each failed attempt of one message (1st, 2nd, …; the last repeats): the visibility
   * the worker gives the message back, so the receives span an outage (docs/design.md).
   */
  backoffSeconds: () => {
    const steps = (process.env.SYNC_BACKOFF_SECONDS || '300,1800,60').split(',').map(Number);
    // SQS's 12 hours from the receive, less the longest a worker may have held the message.
    if (!steps.every((step) => Number.isInteger(step) && step >= 0 && step <= 42_300))
      throw new Error('SYNC_BACKOFF_SECONDS must be whole seconds from 0 to 42300, comma separated');
    return steps;
  },
  /** Times the fulfillment DLQ handler puts a message back (15 minutes later) before the fulfillment is `dead`. */
  fulfillmentRedrives: () => Number(process.env.FULFILLMENT_REDRIVES || 48),
  /** Seconds after keeping a fulfillment that it is looked at again (its job may have completed meanwhile). */
  keptRecheckSeconds: () => Number(process.env.FULFILLMENT_RECHECK_SECONDS || 60),
  /**
   * PERSONAL_DATA_RETENTION_DAYS (CONTRACT.md §13; `-c personalDataRetentionDays` on AWS, default 90):
   * how long after every job of an order ended its personal data is kept. A fraction of a day locally
   * (the tests' short clock), in milliseconds here.
   */
  personalDataRetentionMs: () => seconds('PERSONAL_DATA_RETENTION_DAYS', 90) * 86_400_000,
  /**
   * JOB_RETENTION_DAYS (`-c jobRetentionDays` on AWS, default 365): how long a job that has ended
   * (completed, dead, cancelled) is kept after its last move before the table's TTL removes it.
   */
  jobRetentionDays: () => seconds('JOB_RETENTION_DAYS', 365),
  /** API_KEY_RATE_LIMIT (`-c apiKeyRateLimit`): the changes a second one API key may request; 0 or unset: none. */
  apiKeyRateLimit: () => seconds('API_KEY_RATE_LIMIT', 0),
};

/**
 * The one policy for how work ends (CONTRACT.md §6), for sync jobs and fulfillment entries alike:
 * how long throttling may last, how many times the reconciler sends a stalled piece of work a new
 * message, when its lease ends, and the reasons each end gives.
 */

/** Messages the reconciler sends a piece of work that stopped moving, before it ends it. */
export const MAX_RESENDS = 3;

/**
 * The throttling budget's end, if reached: work throttled (429) since `throttledSince` (else since the
 * attempt that began the run, `startedAt`) for `THROTTLE_BUDGET_SECONDS` or more ends with the reason
 * this answers; undefined while within the budget.
 */
export const throttledPastBudget = (
  reason: string,
  throttledSince: string | undefined,
  startedAt: string,
  now = Date.now(),
): string | undefined => {
  const budget = config.throttleBudgetSeconds();
  if (now - Date.parse(throttledSince ?? startedAt) < budget * 1000) return undefined;
  return `${reason}; throttled for more than ${budget} s`;
};

/** A reason that ends work: the last failure's reason stays the headline, the end's own comes after it. */
const ended = (lastError: string | null | undefined, why: string) => [lastError, why].filter(Boolean).join('; ');

/** Its message's receives ran out (the dead-letter queue): after `attempts` failed attempts. */
export const gaveUpReason = (lastError: string | null | undefined, attempts: number) =>
  ended(lastError, `gave up after ${attempts} attempt${attempts === 1 ? '' : 's'}`);

/** The reconciler sent it `MAX_RESENDS` messages and it never moved. */
export const noProgressReason = (lastError: string | null | undefined) =>
  ended(lastError, `no progress after ${MAX_RESENDS} messages re-sent by the reconciler`);

/**
 * When a piece of work's lease ends: its last move or the end of the wait it announced, whichever is
 * later, plus the lease and whatever else it may still be waiting for (`extraSeconds`).
 */
export const leaseEnd = (
  work: { updatedAt: string; waitUntil?: string | null },
  leaseSeconds: number,
  extraSeconds = 0,
) =>
  Math.max(Date.parse(work.updatedAt), work.waitUntil ? Date.parse(work.waitUntil) : 0) +
  (leaseSeconds + extraSeconds) * 1000;
