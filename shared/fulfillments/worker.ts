import type { SQSRecord } from 'aws-lambda';
import type { Deps } from '../aws/deps.js';
import type { Outcome } from '../aws/sqs.js';
import { addLogContext, logger, withLogContext } from '../core/logger.js';
import { BUSINESS_METRICS } from '../core/metric-names.js';
import { countMetric, countPlatformError } from '../core/metrics.js';
import { classify, platformStatusClass } from '../platforms/failure.js';
import { loadResellerStore } from '../stores/reseller-stores.js';
import { shopConnection } from '../stores/secrets.js';
import { fulfillmentIdempotencyKey, loadDelivery, recheckKeptFulfillment, recordOutcome } from './propagation.js';
import {
  parseFulfillmentMessage,
  parseRecheckMessage,
  sendFulfillmentMessage,
  type FulfillmentMessage,
} from './queue.js';

/**
 * One fulfillment message: create the fulfillment with its tracking on the reseller order
 * (`externalOrderId`) through the reseller store's platform, with the source fulfillment as
 * idempotency key, and record the outcome on the job's entry. A soft-deleted reseller store still
 * gets its tracking: the order was accepted while it was active, and its customer still waits.
 * The same queue carries the delayed rechecks of kept fulfillments (shared/fulfillments/propagation.ts).
 */
export const processFulfillmentMessage = async (deps: Deps, record: SQSRecord): Promise<Outcome> => {
  const recheck = parseRecheckMessage(record.body);
  if (recheck) {
    await recheckKeptFulfillment(recheck);
    return 'done';
  }
  const message = parseFulfillmentMessage(record.body);
  if (!message) {
    logger.error('dropping a malformed fulfillment message', { messageId: record.messageId });
    return 'done';
  }
  const context = {
    jobId: message.jobId,
    sourceFulfillmentId: message.sourceFulfillmentId,
    request_id: message.requestId,
  };
  return withLogContext(context, async () => {
    try {
      return await deliver(deps, message, record);
    } catch (error) {
      logger.error('fulfillment failed unexpectedly; SQS will retry', error as Error);
      throw error;
    }
  });
};

const deliver = async (deps: Deps, message: FulfillmentMessage, record: SQSRecord): Promise<Outcome> => {
  const found = await loadDelivery(message);
  if (!found) return 'done';
  const { job } = found;
  addLogContext({ resellerStoreId: job.resellerStoreId, externalOrderId: job.externalOrderId });

  const reseller = await loadResellerStore(job.resellerStoreId);
  if (!reseller) {
    await recordOutcome(job.id, message.sourceFulfillmentId, {
      status: 'dead',
      errorMessage: `reseller store ${job.resellerStoreId} no longer exists`,
      attempted: false,
    });
    return 'done';
  }
  const shop = await shopConnection(deps.cipher, reseller);

  let resellerFulfillmentId: string;
  try {
    const idempotencyKey = fulfillmentIdempotencyKey(job.sourceStoreId, message.sourceFulfillmentId);
    ({ fulfillmentId: resellerFulfillmentId } = await deps
      .platforms(shop.platform)
      .createFulfillment(shop, job.externalOrderId, message.tracking, idempotencyKey));
  } catch (error) {
    return handleFailure(job.id, message, record, error);
  }
  // Outside the try: if this write fails the message comes back, and the same key gets the same fulfillment.
  await recordOutcome(job.id, message.sourceFulfillmentId, { status: 'delivered', resellerFulfillmentId });
  logger.info('fulfillment delivered to the reseller order', { resellerFulfillmentId });
  return 'done';
};

const handleFailure = async (
  jobId: string,
  message: FulfillmentMessage,
  record: SQSRecord,
  error: unknown,
): Promise<Outcome> => {
  const failure = classify(error, 'internal error while creating the fulfillment');
  const statusClass = platformStatusClass(error);
  if (statusClass) countPlatformError(statusClass);
  switch (failure.kind) {
    case 'throttled':
      // Deferred, not failed: the same message again, delayed, so throttling never uses up a receive.
      await sendFulfillmentMessage(message, failure.delaySeconds);
      countMetric(BUSINESS_METRICS.throttleDeferrals);
      logger.warn('reseller platform throttled; fulfillment deferred', { delaySeconds: failure.delaySeconds });
      return 'done';
    case 'permanent':
      await recordOutcome(jobId, message.sourceFulfillmentId, {
        status: 'dead',
        errorMessage: failure.reason,
        attempted: true,
      });
      logger.warn('reseller platform refused the fulfillment; it is dead', { status: failure.status });
      return 'done';
    case 'unknown_outcome':
    case 'transient':
      if (failure.kind === 'transient' && failure.internal) logger.error('fulfillment failed', error as Error);
      await recordOutcome(jobId, message.sourceFulfillmentId, { status: 'failed', errorMessage: failure.reason });
      logger.warn('fulfillment failed; SQS will retry', {
        failure: failure.kind,
        receiveCount: record.attributes?.ApproximateReceiveCount,
      });
      return 'retry';
  }
};
