import type { SQSRecord } from 'aws-lambda';
import { MAX_DELAY_SECONDS } from '../aws/sqs.js';
import { config } from '../core/config.js';
import { logger } from '../core/logger.js';
import { jobLogContext } from '../order/sync-job.js';
import { type DeadLetterKind, runDeadLetter } from '../work/dead-letter.js';
import {
  giveUpTag,
  parseTagMessage,
  sendTagMessage,
  type Tagging,
  type TagMessage,
  taggable,
  tagLogContext,
} from './tag-queue.js';

/** A tag message SQS gave up on: back on the queue 15 minutes later, as a fulfillment's, then given up. */
export const processDeadTagMessage = (received: SQSRecord, redrives = config.fulfillmentRedrives()) =>
  runDeadLetter(deadTags(redrives), undefined, received);

const deadTags = (redrives: number): DeadLetterKind<TagMessage, Tagging, undefined> => ({
  words: { item: 'reseller order tag', queue: 'fulfillment' },
  parse: parseTagMessage,
  messageContext: tagLogContext,
  itemContext: ({ job }) => jobLogContext(job),
  current: taggable,
  redrive: async (message) => {
    const done = message.redrives ?? 0;
    if (done >= redrives) return false;
    await sendTagMessage({ ...message, redrives: done + 1 }, MAX_DELAY_SECONDS);
    logger.warn('reseller order tag put back on the queue after its receives ran out', { redrives: done + 1 });
    return true;
  },
  // Every receive of the message failed: nothing is written per try, the receives count them.
  failedAttempts: () => 1,
  lastError: () => 'every try to tag the reseller order failed',
  end: (_deps, { job }, reason) => giveUpTag(job, reason),
});
