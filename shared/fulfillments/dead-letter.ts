import type { SQSRecord } from 'aws-lambda';
import { MAX_DELAY_SECONDS } from '../aws/sqs.js';
import { config } from '../core/config.js';
import { addLogContext, logger, withLogContext } from '../core/logger.js';
import { gaveUpReason } from '../core/work-policy.js';
import { jobLogContext } from '../order/sync-job.js';
import { loadDelivery, moveEntry } from './entries.js';
import {
  type FulfillmentMessage,
  parseFulfillmentMessage,
  parseRecheckMessage,
  sendFulfillmentMessage,
} from './queue.js';

/**
 * A message SQS gave up on after `maxReceiveCount` receives. A reseller platform may be down for
 * longer than those receives last, so the message goes back on the queue 15 minutes later, up to
 * FULFILLMENT_REDRIVES times (about 20 hours on AWS by default); after that the entry is `dead`,
 * with the last failure's reason. The entry stays `failed`, with that reason, in between.
 */
export const processDeadFulfillmentMessage = async (received: SQSRecord, redrives = config.fulfillmentRedrives()) => {
  if (parseRecheckMessage(received.body)) {
    // Its kept fulfillment still waits for the job's worker, which releases it on completion.
    return logger.warn('a kept-fulfillment recheck gave up', { messageId: received.messageId });
  }
  const message = parseFulfillmentMessage(received.body);
  if (!message) return logger.error('malformed message in the fulfillment DLQ', { messageId: received.messageId });
  const context = {
    jobId: message.jobId,
    sourceFulfillmentId: message.sourceFulfillmentId,
    request_id: message.requestId,
  };
  await withLogContext(context, () => giveUpOrRedrive(message, redrives));
};

const giveUpOrRedrive = async (message: FulfillmentMessage, redrives: number) => {
  const found = await loadDelivery(message);
  if (!found) return;
  addLogContext(jobLogContext(found.job));
  const done = message.redrives ?? 0;
  if (done < redrives) {
    await sendFulfillmentMessage({ ...message, redrives: done + 1 }, MAX_DELAY_SECONDS);
    logger.warn('fulfillment put back on the queue after its receives ran out', { redrives: done + 1 });
    return;
  }
  // The last failure's reason stays the headline: it is what the reseller needs to act on.
  const reason = gaveUpReason(found.entry.errorMessage, found.entry.attempts);
  await moveEntry(
    found.job.id,
    message.sourceFulfillmentId,
    { status: 'dead', errorMessage: reason, attempted: false },
    found.job,
  );
};
