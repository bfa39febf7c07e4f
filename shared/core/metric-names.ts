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
