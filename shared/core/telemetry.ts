import { AsyncLocalStorage } from 'node:async_hooks';
import { LogFormatter, Logger, LogItem } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import type { LogAttributes, UnformattedAttributes } from '@aws-lambda-powertools/logger/types';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import middy from '@middy/core';
import type { Context } from 'aws-lambda';

/**
 * What one piece of work is about (a received message's job: `jobId`, `resellerStoreId`,
 * `externalOrderId`, the `request_id` that sent it). A queue consumer works on its batch's messages
 * side by side in one invocation, so this cannot live on the logger, which the messages share: it
 * follows each message's own asynchronous calls instead, whatever module logs.
 */
const workContext = new AsyncLocalStorage<LogAttributes>();

/** Powertools' own line (its standard keys, in its order), plus the attributes of the work in hand. */
class WorkContextFormatter extends LogFormatter {
  formatAttributes(attributes: UnformattedAttributes, additional: LogAttributes): LogItem {
    const lambda = attributes.lambdaContext;
    return new LogItem({
      attributes: {
        level: attributes.logLevel,
        message: attributes.message,
        timestamp: this.formatTimestamp(attributes.timestamp),
        service: attributes.serviceName,
        cold_start: lambda?.coldStart,
        function_arn: lambda?.invokedFunctionArn,
        function_memory_size: lambda?.memoryLimitInMB,
        function_name: lambda?.functionName,
        function_request_id: lambda?.awsRequestId,
        sampling_rate: attributes.sampleRateValue,
        xray_trace_id: attributes.xRayTraceId,
      },
    }).addAttributes({ ...additional, ...workContext.getStore() });
  }
}

/** Structured JSON logs. Nothing secret is ever passed to it: store objects are logged by id only. */
export const logger = new Logger({
  serviceName: process.env.POWERTOOLS_SERVICE_NAME || 'reseller-routing',
  logFormatter: new WorkContextFormatter(),
});

/** Runs `work` with `attributes` on every line it logs, in any module, until it ends. */
export const withLogContext = <T>(attributes: LogAttributes, work: () => Promise<T>): Promise<T> =>
  workContext.run({ ...workContext.getStore(), ...withoutUndefined(attributes) }, work);

/**
 * A queue message's work, in its log context. An unexpected error is logged there, where the job's
 * attributes still are (the batch processor only reports the message as failed), then thrown on.
 */
export const withMessageContext = <T>(attributes: LogAttributes, unexpected: string, work: () => Promise<T>) =>
  withLogContext(attributes, async () => {
    try {
      return await work();
    } catch (error) {
      logger.error(unexpected, error as Error);
      throw error;
    }
  });

/** Adds to the attributes of the work in hand what became known since it started (the job, once loaded). */
export const addLogContext = (attributes: LogAttributes) => {
  const store = workContext.getStore();
  if (store) Object.assign(store, withoutUndefined(attributes));
};

const withoutUndefined = (attributes: LogAttributes) =>
  Object.fromEntries(Object.entries(attributes).filter(([, value]) => value !== undefined));

/**
 * A function that is not an HTTP route (the authorizer, a queue consumer, a schedule), as middy
 * runs it: every line it logs carries its Lambda context (function name, invocation id, cold
 * start), reset between invocations, and `own` middlewares run around it (metrics).
 */
export const lambdaHandler = <TEvent, TResult>(
  fn: (event: TEvent, context: Context) => Promise<TResult>,
  ...own: middy.MiddlewareObj<TEvent, TResult>[]
) =>
  middy<TEvent, TResult>()
    .use(injectLambdaContext(logger, { resetKeys: true }))
    .use(own)
    .handler(fn);

/**
 * The service's business metrics: one CloudWatch namespace, and dimensions that never grow without
 * bound (the service, the stage, a platform error's status class; never an id). Plain data, so the
 * stack's dashboard and alarms (lib/constructs/dashboard.ts) name exactly what the functions emit.
 */

export const METRICS_NAMESPACE = 'ResellerRouting';

export const BUSINESS_METRICS = {
  /** A verified `orders/create` with a valid payload (redeliveries included). */
  ordersReceived: 'OrdersReceived',
  /** A new order that got at least one sync job. */
  ordersRouted: 'OrdersRouted',
  /** A new order with an item that routes to no supplier (CONTRACT.md §10.8), routed or not: a supplier to add. */
  ordersWithUnroutedItems: 'OrdersWithUnroutedItems',
  jobsCreated: 'JobsCreated',
  jobsCompleted: 'JobsCompleted',
  /** A job found past its due time and not shipped (CONTRACT.md §16.2), once per job. */
  jobsLate: 'JobsLate',
  /** A supplier order's deadline (Shopify's `fulfillBy`) that could not be set (CONTRACT.md §16.1). */
  deadlineFailures: 'DeadlineFailures',
  /** Every way a job goes dead: refused by the supplier, receives run out, given up by the reconciler. */
  jobsDead: 'JobsDead',
  /** A job that became `cancelled` (CONTRACT.md §10.4–10.5), whoever asked. */
  jobsCancelled: 'JobsCancelled',
  /** A supplier cancelled an order the service placed: the reseller's order needs the merchant (§10.5). */
  jobsCancelledBySource: 'JobsCancelledBySource',
  /** A supplier refused to cancel (it has shipped): the job stays `completed`. */
  cancellationsDeclined: 'CancellationsDeclined',
  /** A platform call that failed, by `statusClass`: `4xx`, `5xx`, or `network` (no answer). */
  platformErrors: 'PlatformErrors',
  /** A job or fulfillment put off for `Retry-After` after a 429. */
  throttleDeferrals: 'ThrottleDeferrals',
  /** A job sent a new message because it stopped moving (its message may be lost). */
  reconcilerResends: 'ReconcilerResends',
  fulfillmentsPropagated: 'FulfillmentsPropagated',
  fulfillmentsDead: 'FulfillmentsDead',
  /** A received message its consumer reported failed, for SQS to deliver again (mixed batches and whole ones). */
  queueRecordsFailed: 'QueueRecordsFailed',
  /** A store polled for its orders changed since its watermark (CONTRACT.md §10.7), whatever the outcome. */
  storesPolled: 'StoresPolled',
  /** A change a poll handled (a new, cancelled or updated order, a supplier's fulfillments or cancellation). */
  pollChangesHandled: 'PollChangesHandled',
  /** A poll that failed (the shop's answer, or the service's own error), handled again at the next run. */
  pollsFailed: 'PollsFailed',
  /** A poll that failed with its store's polls failing `POLL_FAILING_AFTER` times in a row or more: alarmed. */
  storesFailingToPoll: 'StoresFailingToPoll',
  /** A run of the poll scheduler: one message per active store on the poll queue. */
  /** A store that left `connected` (CONTRACT.md §12.2): uninstalled, or its token refresh refused. */
  storesDisconnected: 'StoresDisconnected',
  /** An expiring access token refreshed (CONTRACT.md §12.3): one per token's expiry, whatever the workers. */
  tokensRefreshed: 'TokensRefreshed',
  /** A job or a fulfillment ended `dead` with `store_disconnected`, without a call (CONTRACT.md §12.2): alarmed. */
  disconnectedStoreWork: 'DisconnectedStoreWork',
  /** Webhook subscriptions found missing and made again (CONTRACT.md §12.1). */
  subscriptionsRepaired: 'SubscriptionsRepaired',
  /** A check of a store's subscriptions that failed (listing or creating): alarmed when it lasts. */
  subscriptionsFailing: 'SubscriptionsFailing',
  /** An answer of another API version than asked for, or with a deprecation notice (CONTRACT.md §12.4). */
  platformApiDeprecated: 'PlatformApiDeprecated',
  /**
   * A received message that failed on an error no retry mends: the service's own permissions or key (IAM or
   * KMS access denied, a disabled or missing key, table or queue) or a bug (a TypeError). Such a fault
   * fails every message and is no Lambda error (failed messages are reported, not thrown): alarmed at one.
   */
  systemicErrors: 'SystemicErrors',
  /** From the job's creation by the webhook to its completion, in milliseconds. */
  webhookToCompletedLatency: 'WebhookToCompletedLatency',
  /** A job held (CONTRACT.md §11), on its creation or by an operator, by `reason` (a dimension), once per reason. */
  jobsHeld: 'JobsHeld',
  /** A held job released (its delay over, a lift, an operator), and the time from its receipt to then, in ms. */
  jobsReleased: 'JobsReleased',
  receiptToReleaseLatency: 'ReceiptToReleaseLatency',
  /** A job held past MAX_HOLD_SECONDS: it gets `attention` `hold_expired`. */
  holdsExpired: 'HoldsExpired',
} as const;

export type BusinessMetric = (typeof BUSINESS_METRICS)[keyof typeof BUSINESS_METRICS];

export const STATUS_CLASSES = ['4xx', '5xx', 'network'] as const;
export type StatusClass = (typeof STATUS_CLASSES)[number];

/** The dimensions every metric carries besides its own: Powertools' `service`, and the stage. */
export const DEFAULT_DIMENSIONS = ['service', 'stage'] as const;

/**
 * Business metrics in CloudWatch's embedded metric format (EMF): Powertools Metrics writes them as
 * JSON log lines, which CloudWatch turns into metrics, so emitting one costs no API call. Locally
 * the same lines are in the log. The instance is built on first use, when the function's environment
 * (service name, stage) is certainly set.
 */

let instance: Metrics | undefined;
const metrics = () =>
  (instance ??= new Metrics({
    namespace: METRICS_NAMESPACE,
    serviceName: process.env.POWERTOOLS_SERVICE_NAME || 'reseller-routing',
    defaultDimensions: { stage: process.env.STAGE || 'local' },
  }));

export const countMetric = (name: BusinessMetric, value = 1) => {
  if (value > 0) metrics().addMetric(name, MetricUnit.Count, value);
};

export const latencyMetric = (name: BusinessMetric, milliseconds: number) => {
  metrics().addMetric(name, MetricUnit.Milliseconds, Math.max(0, milliseconds));
};

/** A failed platform call, on a line of its own: its status class is a dimension of that metric alone. */
export const countPlatformError = (statusClass: StatusClass) => {
  const single = metrics().singleMetric();
  single.addDimension('statusClass', statusClass);
  single.addMetric(BUSINESS_METRICS.platformErrors, MetricUnit.Count, 1);
};

/**
 * The names of errors that no retry mends (`SystemicErrors`): the AWS SDK's for a permission, a key, a
 * table or a queue the function cannot use, and the engine's for a bug. A platform's answer, a
 * throttled or timed-out AWS call, a lost condition: none of these (they are retried, or the record's own).
 */
const SYSTEMIC_ERRORS = new Set([
  'AccessDenied',
  'AccessDeniedException',
  'UnrecognizedClientException',
  'InvalidClientTokenId',
  'ExpiredTokenException',
  'DisabledException',
  'KMSInvalidStateException',
  'NotFoundException',
  'ResourceNotFoundException',
  'QueueDoesNotExist',
  'AWS.SimpleQueueService.NonExistentQueue',
  'TypeError',
  'ReferenceError',
]);

export const isSystemicError = (error: unknown) => error instanceof Error && SYSTEMIC_ERRORS.has(error.name);

/** Counts a record's failure as `SystemicErrors` when its error is one no retry mends; says whether it was. */
export const countIfSystemic = (error: unknown) => {
  if (!isSystemicError(error)) return false;
  countMetric(BUSINESS_METRICS.systemicErrors);
  return true;
};

/** Jobs held for a reason (CONTRACT.md §11), on a line of its own: `reason` is a dimension of that metric alone. */
export const countHeld = (reason: string, jobs: number) => {
  if (jobs <= 0) return;
  const single = metrics().singleMetric();
  single.addDimension('reason', reason);
  single.addMetric(BUSINESS_METRICS.jobsHeld, MetricUnit.Count, jobs);
};

/** Writes what the invocation counted, once, at its end (a failed invocation's counts too). */
const flush = () => {
  if (instance?.hasStoredMetrics()) instance.publishStoredMetrics();
};

/**
 * Publishes each invocation's metrics when it ends. Powertools' own `logMetrics` middleware would
 * also warn on every invocation that counted nothing (a refused webhook): this one stays silent.
 */
export const metricsMiddleware = (): middy.MiddlewareObj<unknown, unknown> => ({ after: flush, onError: flush });
