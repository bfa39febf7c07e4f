import type { SQSRecord } from 'aws-lambda';
import type { Deps } from '../aws/deps.js';
import type { Outcome } from '../aws/sqs.js';
import { config } from '../core/config.js';
import { addLogContext, logger, withRecordContext } from '../core/logger.js';
import { BUSINESS_METRICS } from '../core/metric-names.js';
import { countMetric, countPlatformError } from '../core/metrics.js';
import { throttledPastBudget } from '../core/work-policy.js';
import type { SupplierOrder } from '../domain/supplier-order.js';
import type { AttemptOutcome, AttemptTrigger } from '../entities/attempt.js';
import { UnplaceableOrderError } from '../entities/order-body.js';
import type { SyncJob } from '../entities/sync-job.js';
import { jobLogContext } from '../entities/sync-job.js';
import { releaseKeptFulfillments } from '../fulfillments/propagation.js';
import {
  classify,
  type Failure,
  MAX_DEFERRAL_SECONDS,
  platformStatusClass,
  platformStatusOf,
  secondsUntil,
} from '../platforms/failure.js';
import type { ShopConnection } from '../platforms/port.js';
import { shopConnection } from '../stores/secrets.js';
import { loadSourceStore } from '../stores/source-stores.js';
import { completeOrderJobs } from './create.js';
import { endJob, foundReason, lookUpOrder, mayHaveBeenPlaced, mayHaveBeenSent } from './end.js';
import { supplierOrderFor } from './job-order.js';
import { type JobMessage, jobMessage, messageLogContext, parseJobMessage } from './message.js';
import { type AttemptEnd, claimJob, completeJob, deferJob, failJob, foundJob, killJob } from './moves.js';
import { enqueueJobs, setVisibility } from './queue.js';

/**
 * One sync-job message: claim the job, place the supplier order at the supplier's prices with
 * the job id as idempotency key, write the outcome (and the attempt, in the same write). A stale
 * message (an older generation, or a job that has ended) is dropped without touching the job.
 * Every line logged meanwhile names the job, its order and the request that sent the message.
 */
export const processSyncMessage = async (deps: Deps, received: SQSRecord): Promise<Outcome> => {
  const message = parseJobMessage(received.body);
  if (!message) {
    logger.error('dropping a malformed sync message', { messageId: received.messageId });
    return 'done';
  }
  return withRecordContext(messageLogContext(message), 'sync job failed unexpectedly; SQS will retry', () =>
    placeOrder(deps, message, received),
  );
};

const placeOrder = async (deps: Deps, message: JobMessage, received: SQSRecord): Promise<Outcome> => {
  // A 429's wait longer than one message delay: on again, until its time (no claim, no supplier call).
  const early = secondsUntil(message.notBefore);
  if (early > 0) {
    await enqueueJobs([message], early);
    logger.info('throttled job still waiting; message sent on', { waitSeconds: early });
    return 'done';
  }
  const job = await claimJob(message);
  if (!job) {
    logger.info('stale sync message dropped', { generation: message.generation });
    return 'done';
  }
  addLogContext({ ...jobLogContext(job), sourceStoreId: job.sourceStoreId });
  const attempt: Attempt = {
    job,
    received,
    requestId: message.requestId,
    // A message SQS delivers again is a redelivery, whatever first sent it.
    trigger: Number(received.attributes?.ApproximateReceiveCount) > 1 ? 'redelivery' : (message.trigger ?? 'webhook'),
    startedAt: job.updatedAt,
  };

  const source = await loadSourceStore(job.sourceStoreId);
  if (!source) {
    const reason = `source store ${job.sourceStoreId} no longer exists`;
    if (await killJob(job, reason, ended(attempt, 'dead', null, reason))) logger.warn('sync job is dead', { reason });
    return 'done';
  }
  // The first job of an order written in chunks completes what a crash may have left unwritten.
  const siblings = await completeOrderJobs(job);
  if (siblings.length) await enqueueJobs(siblings.map((sibling) => jobMessage(sibling, 'webhook', message.requestId)));

  let order: SupplierOrder;
  try {
    order = await supplierOrderFor(job, job.resellerShopDomain, source.pricingConfig);
  } catch (error) {
    if (!(error instanceof UnplaceableOrderError)) throw error;
    // The order cannot be built now (its pricing changed, say), but an earlier attempt may have placed it.
    const shop = await shopConnection(deps.cipher, source);
    const ended = await giveUp(deps, shop, attempt, error.message, null);
    if (ended === 'unknown') return fail(attempt, `${error.message}; the supplier could not be asked for it`, null);
    logger.warn('order cannot be placed', { reason: error.message, ended });
    return 'done';
  }
  const shop = await shopConnection(deps.cipher, source);
  const platform = deps.platforms(shop.platform);

  // Without an idempotency key, a create an earlier attempt may have sent is looked up first.
  if (!platform.takesIdempotencyKeys && mayHaveBeenSent(job)) {
    const lookup = await lookUpOrder(deps, shop, job);
    if (lookup.kind === 'found') {
      return completeFound(attempt, lookup.orderId, null, 'an earlier attempt may have placed the order');
    }
    if (lookup.kind === 'unknown' && !lookup.refused) {
      return fail(
        attempt,
        `an earlier attempt may have placed the order; looking it up failed: ${lookup.reason}`,
        null,
      );
    }
  }

  try {
    const placed = await platform.createOrder(shop, order, job.id);
    const completed = await completeJob(job, placed.orderId, ended(attempt, 'completed', placed.status ?? null, null));
    if (completed) {
      logger.info('sync job completed', { sourceOrderId: placed.orderId, attempts: completed.attempts });
      await releaseKeptFulfillments(completed);
    }
    return 'done';
  } catch (error) {
    return handleFailure(deps, shop, attempt, error);
  }
};

/** The attempt in hand: the claimed job, its message, what sent it and when the claim began it. */
interface Attempt {
  job: SyncJob;
  received: SQSRecord;
  /** The request that sent the message, carried on to any message this attempt sends. */
  requestId: string | undefined;
  trigger: AttemptTrigger;
  startedAt: string;
}

const ended = (
  attempt: Attempt,
  outcome: AttemptOutcome,
  platformStatus: number | null,
  errorMessage: string | null,
): AttemptEnd => ({ trigger: attempt.trigger, outcome, platformStatus, errorMessage, startedAt: attempt.startedAt });

/**
 * The attempt in hand ends its job: `dead` with `reason`, unless an earlier attempt may have placed
 * the order and the supplier has it (end.ts). This attempt is claimed but not yet in the history.
 */
const giveUp = (deps: Deps, shop: ShopConnection, attempt: Attempt, reason: string, status: number | null) =>
  endJob(deps, attempt.job, reason, ended(attempt, 'dead', status, reason), {
    lookUp: mayHaveBeenPlaced(attempt.job, 1),
    shop,
  });

const handleFailure = async (deps: Deps, shop: ShopConnection, attempt: Attempt, error: unknown): Promise<Outcome> => {
  const { job } = attempt;
  const failure = classify(error, 'internal error while placing the order');
  const status = platformStatusOf(error);
  const statusClass = platformStatusClass(error);
  if (statusClass) countPlatformError(statusClass);
  switch (failure.kind) {
    case 'throttled':
      return throttled(deps, shop, attempt, failure);
    case 'permanent': {
      // An earlier attempt may have placed the order before this one was refused: look first.
      const ended = await giveUp(deps, shop, attempt, failure.reason, status);
      if (ended === 'unknown') return fail(attempt, failure.reason, status);
      logger.warn('platform refused the order', { status: failure.status, ended });
      return 'done';
    }
    case 'unknown_outcome': {
      // The request left and no usable answer came back: the supplier may have placed the order.
      const lookup = await lookUpOrder(deps, shop, job);
      if (lookup.kind === 'found') return completeFound(attempt, lookup.orderId, status, failure.reason);
      const reason =
        lookup.kind === 'absent' ? failure.reason : `${failure.reason}; looking the order up failed: ${lookup.reason}`;
      return fail(attempt, reason, status);
    }
    case 'transient':
      if (failure.internal) logger.error('sync job failed', error as Error);
      return fail(attempt, failure.reason, status);
  }
};

/** The supplier has the order a lookup found: the job is completed with it (`found_existing`). */
const completeFound = async (
  attempt: Attempt,
  orderId: string,
  status: number | null,
  reason: string,
): Promise<Outcome> => {
  const completed = await foundJob(attempt.job, orderId, ended(attempt, 'found_existing', status, foundReason(reason)));
  if (completed) await releaseKeptFulfillments(completed);
  logger.warn('outcome unknown; the supplier has the order');
  return 'done';
};

/**
 * A 429: the job goes back to pending under a new generation, and one fresh message waits for
 * Retry-After, so throttling never uses up a receive. Throttled for longer than the budget, it ends.
 */
const throttled = async (
  deps: Deps,
  shop: ShopConnection,
  attempt: Attempt,
  failure: Extract<Failure, { kind: 'throttled' }>,
): Promise<Outcome> => {
  const { job } = attempt;
  const reason = throttledPastBudget(failure.reason, job.throttledSince ?? undefined, attempt.startedAt);
  if (reason) {
    const ended = await giveUp(deps, shop, attempt, reason, 429);
    logger.warn('throttled past the budget', { budgetSeconds: config.throttleBudgetSeconds(), ended });
    if (ended !== 'unknown') return 'done';
  }
  const deferred = await deferJob(job, failure.delaySeconds, ended(attempt, 'throttled', 429, failure.reason));
  if (deferred) {
    const message = jobMessage(deferred, 'redelivery', attempt.requestId);
    const notBefore = Date.now() + failure.delaySeconds * 1000;
    const resent = failure.delaySeconds > MAX_DEFERRAL_SECONDS ? { ...message, notBefore } : message;
    await enqueueJobs([resent], failure.delaySeconds);
    countMetric(BUSINESS_METRICS.throttleDeferrals);
  }
  logger.warn('platform throttled; job deferred', { delaySeconds: failure.delaySeconds });
  return 'done';
};

/** The wait after the n-th failed receive of a message: the n-th backoff step, the last one repeating. */
const backoffSeconds = (received: SQSRecord) => {
  const steps = config.backoffSeconds();
  const receive = Math.max(1, Number(received.attributes?.ApproximateReceiveCount) || 1);
  return steps[Math.min(receive, steps.length) - 1] ?? 0;
};

/**
 * processing → failed. The message comes back after a growing delay rather than the queue's
 * visibility timeout, so its receives span an outage instead of being spent within minutes.
 */
const fail = async (attempt: Attempt, reason: string, status: number | null): Promise<Outcome> => {
  const { job, received } = attempt;
  const waitSeconds = backoffSeconds(received);
  await failJob(job, reason, waitSeconds, ended(attempt, 'failed', status, reason));
  await setVisibility(received.receiptHandle, waitSeconds);
  logger.warn('sync job failed; SQS will retry', {
    reason,
    receiveCount: received.attributes?.ApproximateReceiveCount,
    waitSeconds,
  });
  return 'retry';
};
