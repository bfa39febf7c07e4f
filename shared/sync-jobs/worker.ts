import type { SQSRecord } from 'aws-lambda';
import type { Deps } from '../aws/deps.js';
import type { Outcome } from '../aws/sqs.js';
import { config } from '../core/config.js';
import { logger } from '../core/logger.js';
import type { SupplierOrder } from '../domain/supplier-order.js';
import { releaseKeptFulfillments } from '../fulfillments/propagation.js';
import { supplierOrderFor, UnplaceableOrderError } from '../orders/job-order.js';
import { completeOrderJobs } from '../orders/order-jobs.js';
import { classify } from '../platforms/failure.js';
import { shopConnection } from '../stores/secrets.js';
import { loadSourceStore } from '../stores/source-stores.js';
import { parseJobMessage } from './message.js';
import { enqueueJobs, setVisibility } from './queue.js';
import { claimJob, completeJob, deferJob, failJob, killJob, type SyncJob } from './sync-jobs.js';

/**
 * One sync-job message: claim the job, place the supplier order at the supplier's prices with
 * the job id as idempotency key, record the outcome. A stale message (an older enqueue of a job
 * retried since, or a job already settled) is dropped without touching the job.
 */
export const processSyncMessage = async (deps: Deps, record: SQSRecord): Promise<Outcome> => {
  const message = parseJobMessage(record.body);
  if (!message) {
    logger.error('dropping a malformed sync message', { messageId: record.messageId });
    return 'done';
  }
  const job = await claimJob(message);
  if (!job) {
    logger.info('stale sync message dropped', { jobId: message.jobId, generation: message.generation });
    return 'done';
  }

  const source = await loadSourceStore(job.sourceStoreId);
  if (!source) {
    await killJob(job, `source store ${job.sourceStoreId} no longer exists`);
    return 'done';
  }
  // The first job of an order written in chunks completes what a crash may have left unwritten.
  const siblings = await completeOrderJobs(job);
  if (siblings.length) await enqueueJobs(siblings.map((sibling) => ({ jobId: sibling.id, generation: 1 })));

  let order: SupplierOrder;
  try {
    order = await supplierOrderFor(job, job.resellerShopDomain, source.pricingConfig);
  } catch (error) {
    if (!(error instanceof UnplaceableOrderError)) throw error;
    await killJob(job, error.message);
    logger.warn('order cannot be placed; job is dead', { jobId: job.id, reason: error.message });
    return 'done';
  }
  const shop = await shopConnection(deps.cipher, source);

  try {
    const { orderId } = await deps.platforms(shop.platform).createOrder(shop, order, job.id);
    const completed = await completeJob(job, orderId);
    if (completed) await releaseKeptFulfillments(completed);
    return 'done';
  } catch (error) {
    return handleFailure(job, record, error);
  }
};

/** The wait after the n-th failed receive of a message: the n-th backoff step, the last one repeating. */
const backoffSeconds = (record: SQSRecord) => {
  const steps = config.backoffSeconds();
  const receive = Math.max(1, Number(record.attributes?.ApproximateReceiveCount) || 1);
  return steps[Math.min(receive, steps.length) - 1] ?? 0;
};

const handleFailure = async (job: SyncJob, record: SQSRecord, error: unknown): Promise<Outcome> => {
  const failure = classify(error, 'internal error while placing the order');
  switch (failure.kind) {
    case 'throttled': {
      // Deferred, not failed: the job goes back to pending and waits in one fresh delayed message,
      // under a new generation that makes this one (and any other) stale.
      const deferred = await deferJob(job, failure.delaySeconds);
      if (deferred) await enqueueJobs([{ jobId: job.id, generation: deferred.generation }], failure.delaySeconds);
      logger.warn('platform throttled; job deferred', { jobId: job.id, delaySeconds: failure.delaySeconds });
      return 'done';
    }
    case 'permanent':
      await killJob(job, failure.reason);
      logger.warn('platform refused the order; job is dead', { jobId: job.id, status: failure.status });
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
        jobId: job.id,
        failure: failure.kind,
        reason: failure.reason,
        receiveCount: record.attributes.ApproximateReceiveCount,
        waitSeconds,
      });
      return 'retry';
    }
  }
};
