import type { MessageOutcome } from '../aws/batch.js';
import type { Deps } from '../aws/deps.js';
import { config } from '../core/config.js';
import { now } from '../core/ids.js';
import type { Attempt, WorkKind } from '../work/runner.js';
import { jobLogContext } from './order-sync-job.js';
import { claimTag, giveUpTag, parseTagMessage, type Tagging, type TagMessage, tagLogContext } from './tagging-queue.js';
import { tagJob } from './tagging-try.js';

/**
 * The reseller order's routed tag (CONTRACT.md §12.5), a work-item kind of the fulfillment queue, run by the
 * runner (shared/work/runner.ts) as a fulfillment is: a 429 defers it within the throttling budget, a
 * refusal ends it, any other failure comes back on the queue's visibility timeout, and the dead-letter
 * handler puts it back while the reseller may recover. Its end is `tagged` on the job: true, or false
 * with the reason in the log; a tag never fails the job. The platforms add a tag already there as
 * nothing (PLATFORM-API.md, "Tags"), so a message delivered twice leaves the tag once. The queue's
 * door (propagating-worker.ts) hands it its messages.
 */
export const tagWork: WorkKind<TagMessage, Tagging> = {
  words: {
    item: 'reseller order tag',
    queue: 'fulfillment',
    refused: 'reseller platform refused the tag; given up',
    // An order deleted or archived on the reseller's shop refuses its tag: expected, and the job says `tagged: false`.
    refusedLevel: 'info',
    throttledPastBudget: 'reseller platform throttled past the budget; tag given up',
    deferred: 'reseller platform throttled; tag deferred',
  },
  queueUrl: config.fulfillmentQueueUrl,
  parse: parseTagMessage,
  messageContext: tagLogContext,
  itemContext: ({ job }) => jobLogContext(job),
  claim: claimTag,
  startedAt: now,
  attempt: (deps, attempt) => tag(deps, attempt),
  internalReason: 'internal error while tagging the reseller order',
  throttledSince: (item) => item.throttledSince,
  end: (_deps, attempt, reason) => giveUpTag(attempt.item.job, reason),
  // Nothing written: the message carries its throttled run.
  defer: async ({ message, startedAt }) => ({ ...message, throttledSince: message.throttledSince ?? startedAt }),
  // Nothing written either: the message comes back on the queue's visibility timeout.
  fail: async () => undefined,
};

type TagAttempt = Attempt<TagMessage, Tagging>;

const tag = async (deps: Deps, attempt: TagAttempt): Promise<MessageOutcome> => {
  await tagJob(deps, attempt.item.job);
  return 'done';
};
