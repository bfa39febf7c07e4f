import type { SQSRecord } from 'aws-lambda';
import { buildSupplierOrder } from '../domain/supplier-order.js';
import { releaseKeptFulfillments } from '../fulfillments/propagation.js';
import { logger } from '../core/logger.js';
import { platformStoreOf } from '../stores/stores.js';
import { adapterFor, PlatformError, retryDelaySeconds } from '../platforms/index.js';
import type { SecretCipher } from '../aws/kms-cipher.js';
import { keys } from '../dynamo/keys.js';
import { getItem, type Item } from '../dynamo/table.js';
import { claimJob, completeJob, deferJob, failJob, killJob, type JobMessage, type SyncJob } from './sync-jobs.js';
import { parseJobMessage } from './message.js';
import { enqueueJobs } from './queue.js';
import type { PricingConfig } from '../domain/pricing.js';

/** What became of one message: `retry` leaves it to SQS to deliver again (and, in the end, to the DLQ). */
export type Outcome = 'done' | 'retry';

const loadStore = async (cipher: SecretCipher, sourceStoreId: string) => {
  const store = await getItem<Item>(keys.sourceStore(sourceStoreId));
  return store && { item: store, platformStore: await platformStoreOf(cipher, store) };
};

/**
 * One sync-job message: claim the job, place the supplier order at the supplier's prices with
 * the job id as idempotency key, record the outcome. A stale message (an older enqueue of a job
 * retried since, or a job already settled) is dropped without touching the job.
 */
export const processSyncMessage = async (cipher: SecretCipher, record: SQSRecord): Promise<Outcome> => {
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

  const store = await loadStore(cipher, job.sourceStoreId);
  if (!store) {
    await killJob(message, `source store ${job.sourceStoreId} no longer exists`, ['processing']);
    return 'done';
  }

  try {
    const order = buildSupplierOrder({
      resellerShopDomain: job.resellerShopDomain,
      externalOrderId: job.externalOrderId,
      order: job.order,
      lineItems: job.order.line_items,
      pricing: store.item.pricingConfig as PricingConfig,
    });
    const { orderId } = await adapterFor(store.platformStore.platform).createOrder(store.platformStore, order, job.id);
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
  if (error instanceof PlatformError && error.status === 429) {
    // Wait as long as the platform asks, in a fresh message, so throttling never uses up a receive.
    const delay = retryDelaySeconds(error);
    await deferJob(job, message.generation);
    await enqueueJobs([message], delay);
    logger.warn('platform throttled; job deferred', { jobId: job.id, delaySeconds: delay });
    return 'done';
  }
  const reason = error instanceof Error ? error.message : String(error);
  if (error instanceof PlatformError && !error.retryable) {
    await killJob(message, reason, ['processing']);
    logger.warn('platform refused the order; job is dead', { jobId: job.id, status: error.status });
    return 'done';
  }
  const safeReason = error instanceof PlatformError ? reason : 'internal error while placing the order';
  if (!(error instanceof PlatformError)) logger.error('sync job failed', error as Error);
  await failJob(job, message.generation, safeReason);
  logger.warn('sync job failed; SQS will retry', {
    jobId: job.id,
    receiveCount: record.attributes.ApproximateReceiveCount,
  });
  return 'retry';
};
