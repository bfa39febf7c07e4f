import type { SQSRecord } from 'aws-lambda';
import type { MessageOutcome } from '../aws/batch.js';
import type { Deps } from '../aws/deps.js';
import { config } from '../core/config.js';
import { addLogContext, logger, withMessageContext } from '../core/logger.js';
import { BUSINESS_METRICS } from '../core/metric-names.js';
import { countMetric, countPlatformError } from '../core/metrics.js';
import { throttledPastBudget } from '../core/work-policy.js';
import type { SupplierOrder } from '../domain/supplier-order.js';
import type { SourceStore } from '../entities/source-store.js';
import { releaseKeptFulfillments } from '../fulfillments/propagation.js';
import type { AttemptEnd, AttemptOutcome, AttemptTrigger } from '../order/attempt.js';
import { UnplaceableOrderError } from '../order/order-body.js';
import type { SyncJob } from '../order/sync-job.js';
import { jobLogContext } from '../order/sync-job.js';
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
import { cancelNow, cancelSupplierOrder, requestSupplierCancel } from './cancel.js';
import { completeOrderJobs } from './create.js';
import { updateSupplierOrder } from './edit.js';
import { endJob, foundReason, lookUpOrder, mayHaveBeenPlaced, mayHaveBeenSent } from './end.js';
import { sourceLinesOf, supplierOrderFor } from './job-order.js';
import { type JobMessage, jobMessage, messageLogContext, parseJobMessage } from './message.js';
import { claimJob, completeJob, deferJob, failJob, foundJob, killJob } from './moves.js';
import { enqueueJobs, setVisibility } from './queue.js';
import { loadJob } from './sync-jobs.js';

/**
 * One sync-job message: claim the job, place the supplier order at the supplier's prices with
 * the job id as idempotency key, write the outcome (and the attempt, in the same write). A stale
 * message (an older generation, or a job that has ended) is dropped without touching the job.
 * Every line logged meanwhile names the job, its order and the request that sent the message.
 */
export const processSyncMessage = async (deps: Deps, received: SQSRecord): Promise<MessageOutcome> => {
  const message = parseJobMessage(received.body);
  if (!message) {
    logger.error('dropping a malformed sync message', { messageId: received.messageId });
    return 'done';
  }
  return withMessageContext(messageLogContext(message), 'sync job failed unexpectedly; SQS will retry', () =>
    message.purpose ? changePlaced(deps, message) : placeOrder(deps, message, received),
  );
};

/**
 * A message that cancels a completed job's supplier order (cancel.ts), or gives it the reseller's
 * edits (edit.ts). A cancellation is stale once the job moved on (a new generation); an update
 * carries the job's latest edits, whatever message asked for it.
 */
const changePlaced = async (deps: Deps, message: JobMessage): Promise<MessageOutcome> => {
  const job = await loadJob(message.jobId, true);
  if (!job || (message.purpose === 'cancel' && job.generation !== message.generation)) {
    logger.info('stale message dropped', { generation: message.generation, purpose: message.purpose });
    return 'done';
  }
  addLogContext(jobLogContext(job));
  return message.purpose === 'cancel' ? cancelSupplierOrder(deps, job) : updateSupplierOrder(deps, job);
};

const placeOrder = async (deps: Deps, message: JobMessage, received: SQSRecord): Promise<MessageOutcome> => {
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
  const claim: Claim = {
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
    if (await killJob(job, reason, ended(claim, 'dead', null, reason))) logger.warn('sync job is dead', { reason });
    return 'done';
  }
  if (job.cancellation?.status === 'requested') return endCancelled(deps, claim, source);
  // The first job of an order written in chunks completes what a crash may have left unwritten.
  const siblings = await completeOrderJobs(job);
  if (siblings.length) await enqueueJobs(siblings.map((sibling) => jobMessage(sibling, 'webhook', message.requestId)));

  let order: SupplierOrder;
  try {
    order = await supplierOrderFor(job, job.resellerShopDomain, source.pricingConfig);
    claim.order = order;
  } catch (error) {
    if (!(error instanceof UnplaceableOrderError)) throw error;
    // The order cannot be built now (its pricing changed, say), but an earlier attempt may have placed it.
    const shop = await shopConnection(deps.cipher, source);
    const result = await giveUp(deps, shop, claim, error.message, null);
    if (result === 'unknown') return fail(claim, `${error.message}; the supplier could not be asked for it`, null);
    logger.warn('order cannot be placed', { reason: error.message, ended: result });
    return 'done';
  }
  const shop = await shopConnection(deps.cipher, source);
  const platform = deps.platforms(shop.platform);

  // Without an idempotency key, a create an earlier attempt may have sent is looked up first.
  if (!platform.takesIdempotencyKeys && mayHaveBeenSent(job)) {
    const lookup = await lookUpOrder(deps, shop, job);
    if (lookup.kind === 'found') {
      return completeFound(claim, lookup, null, 'an earlier attempt may have placed the order');
    }
    if (lookup.kind === 'unknown' && !lookup.refused) {
      return fail(claim, `an earlier attempt may have placed the order; looking it up failed: ${lookup.reason}`, null);
    }
  }

  try {
    const placed = await platform.createOrder(shop, order, job.id);
    const lines = sourceLinesOf(order, placed.lineItemIds);
    const completed = await completeJob(
      job,
      { orderId: placed.orderId, lines },
      ended(claim, 'completed', placed.status ?? null, null),
    );
    if (completed) {
      logger.info('sync job completed', { sourceOrderId: placed.orderId, attempts: completed.attempts });
      await releaseKeptFulfillments(completed);
      // Cancelled while this attempt was under way: the order just placed is cancelled in turn.
      if (completed.cancellation?.status === 'requested') {
        await requestSupplierCancel(completed, completed.cancellation, message.requestId);
      } else if (completed.orderEdits && completed.orderEdits.updatedAt !== job.orderEdits?.updatedAt) {
        // Edited while this attempt was under way: the order just placed gets the edits.
        await enqueueJobs([jobMessage(completed, 'webhook', message.requestId, 'update')]);
      }
    }
    return 'done';
  } catch (error) {
    return handleFailure(deps, shop, claim, error);
  }
};

/**
 * A claimed job whose order was cancelled (cancel.ts): it ends `cancelled`, and nothing is placed.
 * When an earlier attempt may have placed the order, the supplier is asked first: found, the job
 * completes with it and its cancellation goes to the supplier; not known (a lookup that failed), the
 * message comes back and asks again.
 */
const endCancelled = async (deps: Deps, claim: Claim, source: SourceStore): Promise<MessageOutcome> => {
  const { job } = claim;
  const cancellation = job.cancellation!;
  if (mayHaveBeenPlaced(job, 1)) {
    const shop = await shopConnection(deps.cipher, source);
    const lookup = await lookUpOrder(deps, shop, job);
    if (lookup.kind === 'unknown')
      return fail(claim, `cancelled, but the supplier could not be asked: ${lookup.reason}`, null);
    if (lookup.kind === 'found') {
      const placed = { orderId: lookup.orderId, lines: sourceLinesOf(undefined, lookup.lineItemIds) };
      const found = await foundJob(job, placed, ended(claim, 'found_existing', null, foundReason('cancelled')));
      if (found) await requestSupplierCancel(found, cancellation, claim.requestId);
      return 'done';
    }
  }
  await cancelNow(job, cancellation);
  logger.info('sync job cancelled before its order was placed');
  return 'done';
};

/** The attempt in hand: the claimed job, its message, what sent it and when the claim began it. */
interface Claim {
  job: SyncJob;
  received: SQSRecord;
  /** The request that sent the message, carried on to any message this attempt sends. */
  requestId: string | undefined;
  trigger: AttemptTrigger;
  startedAt: string;
  /** The supplier order, once built: the prices a completion records. */
  order?: SupplierOrder;
}

const ended = (
  claim: Claim,
  outcome: AttemptOutcome,
  platformStatus: number | null,
  errorMessage: string | null,
): AttemptEnd => ({ trigger: claim.trigger, outcome, platformStatus, errorMessage, startedAt: claim.startedAt });

/**
 * The attempt in hand ends its job: `dead` with `reason`, unless an earlier attempt may have placed
 * the order and the supplier has it (end.ts). This attempt is claimed but not yet in the history.
 */
const giveUp = (deps: Deps, shop: ShopConnection, claim: Claim, reason: string, status: number | null) =>
  endJob(deps, claim.job, reason, ended(claim, 'dead', status, reason), {
    lookUp: mayHaveBeenPlaced(claim.job, 1),
    shop,
  });

const handleFailure = async (
  deps: Deps,
  shop: ShopConnection,
  claim: Claim,
  error: unknown,
): Promise<MessageOutcome> => {
  const { job } = claim;
  const failure = classify(error, 'internal error while placing the order');
  const status = platformStatusOf(error);
  const statusClass = platformStatusClass(error);
  if (statusClass) countPlatformError(statusClass);
  switch (failure.kind) {
    case 'throttled':
      return throttled(deps, shop, claim, failure);
    case 'permanent': {
      // An earlier attempt may have placed the order before this one was refused: look first.
      const result = await giveUp(deps, shop, claim, failure.reason, status);
      if (result === 'unknown') return fail(claim, failure.reason, status);
      logger.warn('platform refused the order', { status: failure.status, ended: result });
      return 'done';
    }
    case 'unknown_outcome': {
      // The request left and no usable answer came back: the supplier may have placed the order.
      const lookup = await lookUpOrder(deps, shop, job);
      if (lookup.kind === 'found') return completeFound(claim, lookup, status, failure.reason);
      const reason =
        lookup.kind === 'absent' ? failure.reason : `${failure.reason}; looking the order up failed: ${lookup.reason}`;
      return fail(claim, reason, status);
    }
    case 'transient':
      if (failure.internal) logger.error('sync job failed', error as Error);
      return fail(claim, failure.reason, status);
  }
};

/** The supplier has the order a lookup found: the job is completed with it (`found_existing`). */
const completeFound = async (
  claim: Claim,
  found: { orderId: string; lineItemIds?: string[] },
  status: number | null,
  reason: string,
): Promise<MessageOutcome> => {
  const placed = { orderId: found.orderId, lines: sourceLinesOf(claim.order, found.lineItemIds) };
  const completed = await foundJob(claim.job, placed, ended(claim, 'found_existing', status, foundReason(reason)));
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
  claim: Claim,
  failure: Extract<Failure, { kind: 'throttled' }>,
): Promise<MessageOutcome> => {
  const { job } = claim;
  const reason = throttledPastBudget(failure.reason, job.throttledSince ?? undefined, claim.startedAt);
  if (reason) {
    const result = await giveUp(deps, shop, claim, reason, 429);
    logger.warn('throttled past the budget', { budgetSeconds: config.throttleBudgetSeconds(), ended: result });
    if (result !== 'unknown') return 'done';
  }
  const deferred = await deferJob(job, failure.delaySeconds, ended(claim, 'throttled', 429, failure.reason));
  if (deferred) {
    const message = jobMessage(deferred, 'redelivery', claim.requestId);
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
const fail = async (claim: Claim, reason: string, status: number | null): Promise<MessageOutcome> => {
  const { job, received } = claim;
  const waitSeconds = backoffSeconds(received);
  await failJob(job, reason, waitSeconds, ended(claim, 'failed', status, reason));
  await setVisibility(received.receiptHandle, waitSeconds);
  logger.warn('sync job failed; SQS will retry', {
    reason,
    receiveCount: received.attributes?.ApproximateReceiveCount,
    waitSeconds,
  });
  return 'retry';
};
