import type { SQSRecord } from 'aws-lambda';
import type { Deps } from '../aws/deps.js';
import type { Outcome } from '../aws/sqs.js';
import { logger } from '../core/logger.js';
import { buildSupplierOrder } from '../domain/supplier-order.js';
import { releaseKeptFulfillments } from '../fulfillments/propagation.js';
import { classify } from '../platforms/failure.js';
import { shopConnection } from '../stores/secrets.js';
import { loadSourceStore } from '../stores/source-stores.js';
import { parseJobMessage, type JobMessage } from './message.js';
import { enqueueJobs } from './queue.js';
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
  if (!source || !job.order) {
    const reason = source ? 'the job holds no order to place' : `source store ${job.sourceStoreId} no longer exists`;
    await killJob(message, reason, ['processing']);
    return 'done';
  }
  const shop = await shopConnection(deps.cipher, source);

  try {
    const order = buildSupplierOrder({
      resellerShopDomain: job.resellerShopDomain,
      externalOrderId: job.externalOrderId,
      order: job.order,
      lineItems: job.order.line_items,
      pricing: source.pricingConfig,
    });
    const { orderId } = await deps.platforms(shop.platform).createOrder(shop, order, job.id);
    const completed = await completeJob(job, message.generation, orderId);
    if (completed) await releaseKeptFulfillments(completed);
    return 'done';
  } catch (error) {
    return handleFailure(job, message, record, error);
  }
};

const handleFailure = async (
  job: SyncJob,
  message: JobMessage,
  record: SQSRecord,
  error: unknown,
): Promise<Outcome> => {
  const failure = classify(error, 'internal error while placing the order');
  switch (failure.kind) {
    case 'throttled':
      // Deferred, not failed: the job goes back to pending and waits in a fresh delayed message.
      await deferJob(job, message.generation);
      await enqueueJobs([message], failure.delaySeconds);
      logger.warn('platform throttled; job deferred', { jobId: job.id, delaySeconds: failure.delaySeconds });
      return 'done';
    case 'permanent':
      await killJob(message, failure.reason, ['processing']);
      logger.warn('platform refused the order; job is dead', { jobId: job.id, status: failure.status });
      return 'done';
    case 'unknown_outcome':
    case 'transient':
      if (failure.kind === 'transient' && failure.internal) logger.error('sync job failed', error as Error);
      await failJob(job, message.generation, failure.reason);
      logger.warn('sync job failed; SQS will retry', {
        jobId: job.id,
        failure: failure.kind,
        receiveCount: record.attributes.ApproximateReceiveCount,
      });
      return 'retry';
  }
};
