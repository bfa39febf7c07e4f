import type { SQSRecord } from 'aws-lambda';
import type { MessageOutcome } from '../aws/batch.js';
import type { Deps } from '../aws/deps.js';
import { now } from '../core/ids.js';
import { addLogContext, logger, withMessageContext } from '../core/logger.js';
import { BUSINESS_METRICS } from '../core/metric-names.js';
import { countMetric, countPlatformError } from '../core/metrics.js';
import { throttledPastBudget } from '../core/work-policy.js';
import type { FulfillmentEntry } from '../order/fulfillment-entry.js';
import type { SyncJob } from '../order/sync-job.js';
import { jobLogContext } from '../order/sync-job.js';
import { classify, MAX_DEFERRAL_SECONDS, platformStatusClass, secondsUntil } from '../platforms/failure.js';
import { loadResellerStore } from '../stores/reseller-stores.js';
import { shopConnection } from '../stores/secrets.js';
import { deferEntry, type FulfillmentOutcome, loadDelivery, moveEntry, trackingKey, trackingOf } from './entries.js';
import { jobLineItems } from './job-lines.js';
import { fulfillmentIdempotencyKey, recheckKeptFulfillment } from './propagation.js';
import {
  type FulfillmentMessage,
  parseFulfillmentMessage,
  parseRecheckMessage,
  sendFulfillmentMessage,
} from './queue.js';

/**
 * One fulfillment message: create the fulfillment with its tracking on the reseller order
 * (`externalOrderId`) through the reseller store's platform, with the source fulfillment as
 * idempotency key, and write the outcome on the job's entry. A soft-deleted reseller store still
 * gets its tracking: the order was accepted while it was active, and its customer still waits.
 * The same queue carries the delayed rechecks of kept fulfillments (shared/fulfillments/propagation.ts).
 */
export const processFulfillmentMessage = async (deps: Deps, received: SQSRecord): Promise<MessageOutcome> => {
  const recheck = parseRecheckMessage(received.body);
  if (recheck) {
    await recheckKeptFulfillment(recheck);
    return 'done';
  }
  const message = parseFulfillmentMessage(received.body);
  if (!message) {
    logger.error('dropping a malformed fulfillment message', { messageId: received.messageId });
    return 'done';
  }
  const context = {
    jobId: message.jobId,
    sourceFulfillmentId: message.sourceFulfillmentId,
    request_id: message.requestId,
  };
  return withMessageContext(context, 'fulfillment failed unexpectedly; SQS will retry', () =>
    deliver(deps, message, received),
  );
};

const deliver = async (deps: Deps, message: FulfillmentMessage, received: SQSRecord): Promise<MessageOutcome> => {
  // A 429's wait longer than one message delay: on again, until its time (no reseller call).
  const early = secondsUntil(message.notBefore);
  if (early > 0) {
    await sendFulfillmentMessage(message, early);
    return 'done';
  }
  const found = await loadDelivery(message);
  if (!found) return 'done';
  const { job } = found;
  addLogContext(jobLogContext(job));
  const startedAt = now();

  const reseller = await loadResellerStore(job.resellerStoreId);
  if (!reseller) {
    const errorMessage = `reseller store ${job.resellerStoreId} no longer exists`;
    await moveEntry(job.id, message.sourceFulfillmentId, { status: 'dead', errorMessage, attempted: false }, job);
    return 'done';
  }
  const shop = await shopConnection(deps.cipher, reseller);
  const platform = deps.platforms(shop.platform);
  const { entry } = found;
  // The entry says what the reseller's fulfillment must be; its latest tracking, not the message's.
  const tracking = trackingOf(entry);
  const key = fulfillmentIdempotencyKey(job.sourceStoreId, message.sourceFulfillmentId);

  // An earlier call may have made the fulfillment (it failed, or its worker died mid-call and the
  // message came back or was sent again): a platform without keys looks for it first.
  const resend =
    entry.attempts > 0 || (entry.resends ?? 0) > 0 || Number(received.attributes?.ApproximateReceiveCount) > 1;

  /**
   * The reseller's fulfillment an earlier create may have made without the service hearing of it (its
   * answer lost, its worker dead mid-call), so that a voided parcel never leaves it standing: the same
   * key answers the same fulfillment (Shopify, without keys, is searched first). A refusal (422:
   * nothing left to fulfil) means none was made. Where none was, this makes it, and it is cancelled at
   * once: better a fulfillment made and cancelled than one left claiming a parcel that will not come
   * (its items fulfilled, the parcel that replaces it refused).
   */
  const madeEarlier = async () => {
    try {
      const lineItems = entry.lines ?? (await jobLineItems(job));
      return (await platform.createFulfillment(shop, job.externalOrderId, tracking, key, { resend: true, lineItems }))
        .fulfillmentId;
    } catch (error) {
      if (classify(error, 'internal error while looking for the fulfillment').kind === 'permanent') return null;
      throw error;
    }
  };

  let outcome: FulfillmentOutcome;
  try {
    if (entry.cancelRequested) {
      // The supplier voided the parcel: the reseller's fulfillment of it is cancelled, if it was made.
      const made = entry.resellerFulfillmentId ?? (resend ? await madeEarlier() : null);
      if (made !== null) await platform.cancelFulfillment(shop, made, `${key}:cancel`);
      outcome = { status: 'cancelled' };
    } else if (entry.resellerFulfillmentId === null) {
      const { fulfillmentId } = await platform.createFulfillment(shop, job.externalOrderId, tracking, key, {
        resend,
        // The parcel's own lines: never another supplier's items of the order (CONTRACT.md §10.2).
        lineItems: entry.lines ?? (await jobLineItems(job)),
      });
      outcome = { status: 'delivered', resellerFulfillmentId: fulfillmentId, tracking: trackingKey(tracking) };
    } else {
      // New tracking for a fulfillment the reseller has: one update per distinct tracking.
      const applied = trackingKey(tracking);
      await platform.updateFulfillmentTracking(
        shop,
        entry.resellerFulfillmentId,
        tracking,
        `${key}:tracking:${applied}`,
      );
      outcome = { status: 'delivered', resellerFulfillmentId: entry.resellerFulfillmentId, tracking: applied };
    }
  } catch (error) {
    return handleFailure(job, entry, message, received, error, startedAt);
  }
  // Outside the try: if this write fails the message comes back, and the same key gets the same answer.
  await moveEntry(job.id, message.sourceFulfillmentId, outcome, job);
  logger.info(
    outcome.status === 'cancelled'
      ? 'fulfillment cancelled on the reseller order'
      : 'fulfillment delivered to the reseller order',
    {
      resellerFulfillmentId:
        outcome.status === 'delivered' ? outcome.resellerFulfillmentId : entry.resellerFulfillmentId,
    },
  );
  return 'done';
};

const handleFailure = async (
  job: SyncJob,
  entry: FulfillmentEntry,
  message: FulfillmentMessage,
  received: SQSRecord,
  error: unknown,
  startedAt: string,
): Promise<MessageOutcome> => {
  const jobId = job.id;
  const failure = classify(error, 'internal error while creating the fulfillment');
  const statusClass = platformStatusClass(error);
  if (statusClass) countPlatformError(statusClass);
  switch (failure.kind) {
    case 'throttled': {
      // Throttled for longer than the budget (counted from the run's first 429), the entry ends.
      const errorMessage = throttledPastBudget(failure.reason, entry.throttledSince, startedAt);
      if (errorMessage) {
        await moveEntry(jobId, message.sourceFulfillmentId, { status: 'dead', errorMessage, attempted: true }, job);
        logger.warn('reseller platform throttled past the budget; fulfillment is dead');
        return 'done';
      }
      // Deferred, not failed: a fresh message, delayed, so throttling never uses up a receive. The
      // entry records the wait, so the reconciler does not take it for a lost message.
      if (await deferEntry(job, entry, failure.delaySeconds, startedAt)) {
        const notBefore = Date.now() + failure.delaySeconds * 1000;
        const resent = failure.delaySeconds > MAX_DEFERRAL_SECONDS ? { ...message, notBefore } : message;
        await sendFulfillmentMessage(resent, failure.delaySeconds);
        countMetric(BUSINESS_METRICS.throttleDeferrals);
      }
      logger.warn('reseller platform throttled; fulfillment deferred', { delaySeconds: failure.delaySeconds });
      return 'done';
    }
    case 'permanent':
      await moveEntry(
        jobId,
        message.sourceFulfillmentId,
        { status: 'dead', errorMessage: failure.reason, attempted: true },
        job,
      );
      logger.warn('reseller platform refused the fulfillment; it is dead', { status: failure.status });
      return 'done';
    case 'unknown_outcome':
    case 'transient':
      if (failure.kind === 'transient' && failure.internal) logger.error('fulfillment failed', error as Error);
      await moveEntry(jobId, message.sourceFulfillmentId, { status: 'failed', errorMessage: failure.reason }, job);
      logger.warn('fulfillment failed; SQS will retry', {
        failure: failure.kind,
        receiveCount: received.attributes?.ApproximateReceiveCount,
      });
      return 'retry';
  }
};
