import type { SQSRecord } from 'aws-lambda';
import { config } from '../core/config.js';
import { logger } from '../core/telemetry.js';
import { type DeadLetterKind, deadLetterParsed } from '../work/dead-letter.js';
import { openDoor, type QueueDoor } from '../work/runner.js';
import { loadPropagation, moveEntry, type Propagation } from './order-entries.js';
import { jobLogContext } from './order-sync-job.js';
import {
  type FulfillmentMessage,
  type FulfillmentQueueMessage,
  parseFulfillmentQueueMessage,
  propagationLogContext,
  redriveLater,
} from './propagating.js';
import { deadTags } from './tagging-dead-letter.js';

/**
 * A message SQS gave up on after `maxReceiveCount` receives (shared/work/dead-letter.ts). A reseller
 * platform may be down for longer than those receives last, so the message goes back on the queue 15
 * minutes later, up to FULFILLMENT_REDRIVES times (about 20 hours on AWS by default); after that the
 * entry is `dead`, with the last failure's reason. The entry stays `failed`, with that reason, in between.
 */
export const processDeadFulfillmentMessage = (received: SQSRecord, redrives = config.fulfillmentRedrives()) =>
  openDoor(deadFulfillmentDoor(redrives), undefined, received);

const deadFulfillmentDoor = (redrives: number): QueueDoor<FulfillmentQueueMessage, undefined, void> => ({
  queue: 'fulfillment DLQ',
  parse: parseFulfillmentQueueMessage,
  malformed: undefined,
  handlers: {
    // No platform is called on the way to an end: the entry's end is a write.
    propagation: (deps, { message }) => deadLetterParsed(deadPropagations(redrives), deps, message),
    // Its kept fulfillment still waits for the job's worker, which releases it on completion.
    recheck: async (_deps, _message, received) =>
      logger.warn('a kept-fulfillment recheck gave up', { messageId: received.messageId }),
    tag: (deps, { message }) => deadLetterParsed(deadTags(redrives), deps, message),
  },
});

const deadPropagations = (redrives: number): DeadLetterKind<FulfillmentMessage, Propagation, undefined> => ({
  words: { item: 'fulfillment', queue: 'fulfillment' },
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
