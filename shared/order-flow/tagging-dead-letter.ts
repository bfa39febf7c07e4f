import type { DeadLetterKind } from '../work/dead-letter.js';
import { jobLogContext } from './order-sync-job.js';
import { redriveLater } from './propagating.js';
import { giveUpTag, type Tagging, type TagMessage, taggable, tagLogContext } from './tagging.js';

/** A tag message SQS gave up on: back on the queue 15 minutes later, as a fulfillment's, then given up. */
export const deadTags = (redrives: number): DeadLetterKind<TagMessage, Tagging, undefined> => ({
  words: { item: 'reseller order tag', queue: 'fulfillment' },
  messageContext: tagLogContext,
  itemContext: ({ job }) => jobLogContext(job),
  current: taggable,
  redrive: redriveLater(redrives, 'reseller order tag'),
  // Every receive of the message failed: nothing is written per try, the receives count them.
  failedAttempts: () => 1,
  lastError: () => 'every try to tag the reseller order failed',
  end: (_deps, { job }, reason) => giveUpTag(job, reason),
});
