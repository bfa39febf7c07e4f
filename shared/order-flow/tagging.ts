import type { MessageOutcome } from '../aws/batch.js';
import type { Deps } from '../aws/deps.js';
import { config } from '../core/config.js';
import { now } from '../core/ids.js';
import { logger } from '../core/logger.js';
import { sharedReads } from '../core/pool.js';
import { disconnectedReason } from '../entities/store.js';
import { loadResellerStore } from '../stores/reseller-stores.js';
import { shopConnection } from '../stores/secrets.js';
import type { Attempt, WorkKind } from '../work/kind.js';
import { recordTagged } from './order-entries.js';
import { jobLogContext } from './order-sync-job.js';
import {
  claimTag,
  giveUpTag,
  parseTagMessage,
  routedTag,
  type Tagging,
  type TagMessage,
  tagLogContext,
} from './tagging-queue.js';

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

/** How long a reseller store's read is shared by this container's tags of its orders. */
export const STORE_SHARED_MS = 200;

/**
 * The reseller stores' reads, shared by the tags of one batch (the runner takes its messages together):
 * one read per store and batch, not per order. A store changed within `STORE_SHARED_MS` (disconnected,
 * deleted) is tagged as it was a moment before, which the platform refuses or takes: a tag never fails a job.
 */
const storeReads = sharedReads(loadResellerStore, STORE_SHARED_MS, () => true);

const tag = async (deps: Deps, attempt: TagAttempt): Promise<MessageOutcome> => {
  const { job } = attempt.item;
  const reseller = await storeReads.get(job.resellerStoreId);
  if (!reseller) {
    await giveUpTag(job, `reseller store ${job.resellerStoreId} no longer exists`);
    return 'done';
  }
  // Uninstalled, or its token refused (CONTRACT.md §12.2): no call.
  const disconnected = disconnectedReason('reseller', reseller);
  if (disconnected) {
    await giveUpTag(job, disconnected);
    return 'done';
  }
  const shop = await shopConnection(deps, reseller);
  const tags = [routedTag(job.vendorTag)];
  const outcome = await deps.platforms(shop.platform).addOrderTags(shop, job.externalOrderId, tags);
  // A platform that takes no tags (custom): `tagged` stays null.
  if (outcome === 'unsupported') return 'done';
  if (await recordTagged(job.id, true)) logger.info('reseller order tagged', { tags });
  return 'done';
};
