import type { SQSRecord } from 'aws-lambda';
import { config } from '../core/config.js';
import { logger } from '../core/logger.js';
import { type DeadLetterKind, runDeadLetter } from '../work/dead-letter.js';
import { loadPropagation, moveEntry, type Propagation } from './order-entries.js';
import { jobLogContext } from './order-sync-job.js';
import {
  type FulfillmentMessage,
  parseFulfillmentMessage,
  parseRecheckMessage,
  propagationLogContext,
  redriveLater,
} from './propagating-queue.js';
import { processDeadTagMessage } from './tagging-dead-letter.js';
import { parseTagMessage } from './tagging-queue.js';

/**
 * A message SQS gave up on after `maxReceiveCount` receives (shared/work/dead-letter.ts). A reseller
 * platform may be down for longer than those receives last, so the message goes back on the queue 15
 * minutes later, up to FULFILLMENT_REDRIVES times (about 20 hours on AWS by default); after that the
 * entry is `dead`, with the last failure's reason. The entry stays `failed`, with that reason, in between.
 */
export const processDeadFulfillmentMessage = async (received: SQSRecord, redrives = config.fulfillmentRedrives()) => {
  if (parseRecheckMessage(received.body)) {
    // Its kept fulfillment still waits for the job's worker, which releases it on completion.
    return logger.warn('a kept-fulfillment recheck gave up', { messageId: received.messageId });
  }
  if (parseTagMessage(received.body)) return processDeadTagMessage(received, redrives);
  // No platform is called on the way to an end: the entry's end is a write.
  await runDeadLetter(deadPropagations(redrives), undefined, received);
};

const deadPropagations = (redrives: number): DeadLetterKind<FulfillmentMessage, Propagation, undefined> => ({
  words: { item: 'fulfillment', queue: 'fulfillment' },
  parse: parseFulfillmentMessage,
  messageContext: propagationLogContext,
  itemContext: ({ job }) => jobLogContext(job),
  current: loadPropagation,
  redrive: redriveLater(redrives, 'fulfillment'),
  failedAttempts: ({ entry }) => entry.attempts,
  lastError: ({ entry }) => entry.errorMessage,
  end: async (_deps, { job, entry }, errorMessage) =>
    (await moveEntry(job.id, entry.sourceFulfillmentId, { status: 'dead', errorMessage, attempted: false }, job))
      ? 'dead'
      : 'moved',
});
