import type { SQSRecord } from 'aws-lambda';
import { config } from '../core/config.js';
import {
  parseFulfillmentMessage,
  parseRecheckMessage,
  sendFulfillmentMessage,
  type FulfillmentMessage,
} from './queue.js';
import {
  fulfillmentIdempotencyKey,
  recheckKeptFulfillment,
  recordOutcome,
  type JobWithFulfillments,
} from './propagation.js';
import { logger } from '../core/logger.js';
import { platformStoreOf } from '../stores/stores.js';
import {
  adapterFor,
  MAX_DELAY_SECONDS,
  PlatformError,
  retryDelaySeconds,
  type PlatformStore,
} from '../platforms/index.js';
import type { SecretCipher } from '../aws/kms-cipher.js';
import { keys } from '../dynamo/keys.js';
import { getItem, type Item } from '../dynamo/table.js';

/** What became of one message: `retry` leaves it to SQS to deliver again (and, in the end, to the DLQ). */
export type Outcome = 'done' | 'retry';

/** The reseller store as its platform adapter needs it, secrets decrypted under their own context. */
const loadResellerStore = async (cipher: SecretCipher, resellerStoreId: string): Promise<PlatformStore | undefined> => {
  const store = await getItem<Item>(keys.resellerStore(resellerStoreId));
  return store && platformStoreOf(cipher, store);
};

/** The job and its entry for this message; undefined when there is nothing (left) to deliver. */
const loadPropagation = async (message: FulfillmentMessage) => {
  const job = await getItem<JobWithFulfillments>(keys.syncJob(message.jobId), true);
  const entry = job?.fulfillments?.[message.sourceFulfillmentId];
  if (!job || !entry) {
    logger.warn('fulfillment message without its job entry dropped', {
      jobId: message.jobId,
      sourceFulfillmentId: message.sourceFulfillmentId,
    });
    return undefined;
  }
  if (entry.status === 'delivered') {
    logger.info('fulfillment already delivered; message dropped', {
      jobId: job.id,
      sourceFulfillmentId: message.sourceFulfillmentId,
    });
    return undefined;
  }
  return { job, entry };
};

/**
 * One fulfillment message: create the fulfillment with its tracking on the reseller order
 * (`externalOrderId`) through the reseller store's platform, with the source fulfillment as
 * idempotency key, and record the outcome on the job's entry. A soft-deleted reseller store still
 * gets its tracking: the order was accepted while it was active, and its customer still waits.
 * The same queue carries the delayed rechecks of kept fulfillments (shared/fulfillments/propagation.ts).
 */
export const processFulfillmentMessage = async (cipher: SecretCipher, record: SQSRecord): Promise<Outcome> => {
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
  const found = await loadPropagation(message);
  if (!found) return 'done';
  const { job } = found;

  const reseller = await loadResellerStore(cipher, job.resellerStoreId);
  if (!reseller) {
    await recordOutcome(job.id, message.sourceFulfillmentId, {
      status: 'dead',
      errorMessage: `reseller store ${job.resellerStoreId} no longer exists`,
      attempted: false,
    });
    return 'done';
  }

  let resellerFulfillmentId: string;
  try {
    const idempotencyKey = fulfillmentIdempotencyKey(job.sourceStoreId, message.sourceFulfillmentId);
    const adapter = adapterFor(reseller.platform);
    ({ fulfillmentId: resellerFulfillmentId } = await adapter.createFulfillment(
      reseller,
      job.externalOrderId,
      message.tracking,
      idempotencyKey,
    ));
  } catch (error) {
    return handleFailure(job.id, message, record, error);
  }
  // Outside the try: if this write fails the message comes back, and the same key gets the same fulfillment.
  await recordOutcome(job.id, message.sourceFulfillmentId, { status: 'delivered', resellerFulfillmentId });
  return 'done';
};

const handleFailure = async (
  jobId: string,
  message: FulfillmentMessage,
  record: SQSRecord,
  error: unknown,
): Promise<Outcome> => {
  const context = { jobId, sourceFulfillmentId: message.sourceFulfillmentId };
  if (error instanceof PlatformError && error.status === 429) {
    // Wait as long as the platform asks, in a fresh message, so throttling never uses up a receive.
    const delay = retryDelaySeconds(error);
    await sendFulfillmentMessage(message, delay);
    logger.warn('reseller platform throttled; fulfillment deferred', { ...context, delaySeconds: delay });
    return 'done';
  }
  const reason = error instanceof Error ? error.message : String(error);
  if (error instanceof PlatformError && !error.retryable) {
    await recordOutcome(jobId, message.sourceFulfillmentId, { status: 'dead', errorMessage: reason, attempted: true });
    logger.warn('reseller platform refused the fulfillment; it is dead', { ...context, status: error.status });
    return 'done';
  }
  const safeReason = error instanceof PlatformError ? reason : 'internal error while creating the fulfillment';
  if (!(error instanceof PlatformError)) logger.error('fulfillment failed', error as Error);
  await recordOutcome(jobId, message.sourceFulfillmentId, { status: 'failed', errorMessage: safeReason });
  logger.warn('fulfillment failed; SQS will retry', {
    ...context,
    receiveCount: record.attributes?.ApproximateReceiveCount,
  });
  return 'retry';
};

/**
 * A message SQS gave up on after `maxReceiveCount` receives. A reseller platform may be down for
 * longer than those receives last, so the message goes back on the queue 15 minutes later, up to
 * FULFILLMENT_REDRIVES times (about 20 hours on AWS by default); after that the entry is `dead`,
 * with the last failure's reason. The entry stays `failed`, with that reason, in between.
 */
export const processDeadFulfillmentMessage = async (record: SQSRecord, redrives = config.fulfillmentRedrives()) => {
  if (parseRecheckMessage(record.body)) {
    // Its kept fulfillment still waits for the job's worker, which releases it on completion.
    return logger.warn('a kept-fulfillment recheck gave up', { messageId: record.messageId });
  }
  const message = parseFulfillmentMessage(record.body);
  if (!message) return logger.error('malformed message in the fulfillment DLQ', { messageId: record.messageId });
  const found = await loadPropagation(message);
  if (!found) return;
  const done = message.redrives ?? 0;
  if (done < redrives) {
    await sendFulfillmentMessage({ ...message, redrives: done + 1 }, MAX_DELAY_SECONDS);
    logger.warn('fulfillment put back on the queue after its receives ran out', {
      jobId: found.job.id,
      redrives: done + 1,
    });
    return;
  }
  // The last failure's reason stays the headline: it is what the reseller needs to act on.
  const reason = [found.entry.errorMessage, `gave up after ${found.entry.attempts} attempts`]
    .filter(Boolean)
    .join('; ');
  await recordOutcome(found.job.id, message.sourceFulfillmentId, {
    status: 'dead',
    errorMessage: reason,
    attempted: false,
  });
};
