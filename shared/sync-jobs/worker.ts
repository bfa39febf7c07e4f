import type { SQSRecord } from 'aws-lambda';
import type { Deps } from '../aws/deps.js';
import type { Outcome } from '../aws/sqs.js';
import { config } from '../core/config.js';
import { addLogContext, logger, withLogContext } from '../core/logger.js';
import { BUSINESS_METRICS } from '../core/metric-names.js';
import { countMetric, countPlatformError, recordLatency } from '../core/metrics.js';
import type { SupplierOrder } from '../domain/supplier-order.js';
import { releaseKeptFulfillments } from '../fulfillments/propagation.js';
import { supplierOrderFor, UnplaceableOrderError } from '../orders/job-order.js';
import { completeOrderJobs } from '../orders/order-jobs.js';
import { classify, platformStatusClass } from '../platforms/failure.js';
import { shopConnection } from '../stores/secrets.js';
import { loadSourceStore } from '../stores/source-stores.js';
import { jobMessage, messageLogContext, parseJobMessage, type JobMessage } from './message.js';
import { enqueueJobs, setVisibility } from './queue.js';
import { claimJob, completeJob, deferJob, failJob, killJob, type SyncJob } from './sync-jobs.js';

/**
 * One sync-job message: claim the job, place the supplier order at the supplier's prices with
 * the job id as idempotency key, record the outcome. A stale message (an older enqueue of a job
 * retried since, or a job already settled) is dropped without touching the job. Every line logged
 * meanwhile names the job, its order and the request that sent the message.
 */
export const processSyncMessage = async (deps: Deps, record: SQSRecord): Promise<Outcome> => {
  const message = parseJobMessage(record.body);
  if (!message) {
    logger.error('dropping a malformed sync message', { messageId: record.messageId });
    return 'done';
  }
  return withLogContext(messageLogContext(message), async () => {
    try {
      return await placeOrder(deps, message, record);
    } catch (error) {
      // Logged here, in the job's context: the batch processor only reports the record as failed.
      logger.error('sync job failed unexpectedly; SQS will retry', error as Error);
      throw error;
    }
  });
};

const placeOrder = async (deps: Deps, message: JobMessage, record: SQSRecord): Promise<Outcome> => {
  const job = await claimJob(message);
  if (!job) {
    logger.info('stale sync message dropped', { generation: message.generation });
    return 'done';
  }
  addLogContext({
    resellerStoreId: job.resellerStoreId,
    externalOrderId: job.externalOrderId,
    sourceStoreId: job.sourceStoreId,
  });

  const source = await loadSourceStore(job.sourceStoreId);
  if (!source) {
    const reason = `source store ${job.sourceStoreId} no longer exists`;
    if (await killJob(job, reason)) logger.warn('sync job is dead', { reason });
    return 'done';
  }
  // The first job of an order written in chunks completes what a crash may have left unwritten.
  const siblings = await completeOrderJobs(job);
  if (siblings.length) await enqueueJobs(siblings.map((sibling) => jobMessage(sibling, message.requestId)));

  let order: SupplierOrder;
  try {
    order = await supplierOrderFor(job, job.resellerShopDomain, source.pricingConfig);
  } catch (error) {
    if (!(error instanceof UnplaceableOrderError)) throw error;
    await killJob(job, error.message);
    logger.warn('order cannot be placed; job is dead', { reason: error.message });
    return 'done';
  }
  const shop = await shopConnection(deps.cipher, source);

  try {
    const { orderId } = await deps.platforms(shop.platform).createOrder(shop, order, job.id);
    const completed = await completeJob(job, orderId);
    if (completed) {
      const latencyMs = Date.parse(completed.completedAt ?? '') - Date.parse(completed.createdAt);
      countMetric(BUSINESS_METRICS.jobsCompleted);
      recordLatency(BUSINESS_METRICS.webhookToCompletedLatency, latencyMs);
      logger.info('sync job completed', { sourceOrderId: orderId, attempts: completed.attempts, latencyMs });
      await releaseKeptFulfillments(completed);
    }
    return 'done';
  } catch (error) {
    return handleFailure(job, message, record, error);
  }
};

/** The wait after the n-th failed receive of a message: the n-th backoff step, the last one repeating. */
const backoffSeconds = (record: SQSRecord) => {
  const steps = config.backoffSeconds();
  const receive = Math.max(1, Number(record.attributes?.ApproximateReceiveCount) || 1);
  return steps[Math.min(receive, steps.length) - 1] ?? 0;
};

const handleFailure = async (
  job: SyncJob,
  message: JobMessage,
  record: SQSRecord,
  error: unknown,
): Promise<Outcome> => {
  const failure = classify(error, 'internal error while placing the order');
  const statusClass = platformStatusClass(error);
  if (statusClass) countPlatformError(statusClass);
  switch (failure.kind) {
    case 'throttled': {
      // Deferred, not failed: the job goes back to pending and waits in one fresh delayed message,
      // under a new generation that makes this one (and any other) stale.
      const deferred = await deferJob(job, failure.delaySeconds);
      if (deferred) {
        await enqueueJobs([jobMessage(deferred, message.requestId)], failure.delaySeconds);
        countMetric(BUSINESS_METRICS.throttleDeferrals);
      }
      logger.warn('platform throttled; job deferred', { delaySeconds: failure.delaySeconds });
      return 'done';
    }
    case 'permanent':
      await killJob(job, failure.reason);
      logger.warn('platform refused the order; job is dead', { status: failure.status });
      return 'done';
    case 'unknown_outcome':
    case 'transient': {
      if (failure.kind === 'transient' && failure.internal) logger.error('sync job failed', error as Error);
      const waitSeconds = backoffSeconds(record);
      await failJob(job, failure.reason, waitSeconds);
      // The message comes back after a growing delay rather than the queue's visibility timeout, so
      // its receives span an outage instead of being spent within minutes.
      await setVisibility(record.receiptHandle, waitSeconds);
      logger.warn('sync job failed; SQS will retry', {
        failure: failure.kind,
        reason: failure.reason,
        receiveCount: record.attributes.ApproximateReceiveCount,
        waitSeconds,
      });
      return 'retry';
    }
  }
};
