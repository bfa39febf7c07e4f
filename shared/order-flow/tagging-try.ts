import type { Deps } from '../aws/deps.js';
import { sharedReads } from '../core/concurrency.js';
import { logger } from '../core/telemetry.js';
import { disconnectedReason } from '../entities/store.js';
import { classify } from '../platforms/port.js';
import { shopConnection } from '../stores/connection.js';
import { loadResellerStore } from '../stores/stores.js';
import { recordTagged } from './order-entries.js';
import { giveUpTag, routedTag, type TagAsked, type TaggedJob, toTag } from './tagging-queue.js';

/**
 * A tag's try (CONTRACT.md §12.5), apart from its work-item kind (tagging.ts): the fulfillment worker's,
 * and the placing worker's at once once a job is placed (`tagNow`), whose bundles need no more of it.
 */

/** How long a reseller store's read is shared by this container's tags of its orders. */
export const STORE_SHARED_MS = 200;

/**
 * The reseller stores' reads, shared by the tags of one batch (the runner takes its messages together):
 * one read per store and batch, not per order. A store changed within `STORE_SHARED_MS` (disconnected,
 * deleted) is tagged as it was a moment before, which the platform refuses or takes: a tag never fails a job.
 */
const storeReads = /* @__PURE__ */ sharedReads(loadResellerStore, STORE_SHARED_MS, () => true);

/** The tag's try: its reseller store (a shared read), the platform's call, and its outcome on the job. */
export const tagJob = async (deps: Deps, job: TaggedJob) => {
  const reseller = await storeReads.get(job.resellerStoreId);
  if (!reseller) {
    await giveUpTag(job, `reseller store ${job.resellerStoreId} no longer exists`);
    return;
  }
  // Uninstalled, or its token refused (CONTRACT.md §12.2): no call.
  const disconnected = disconnectedReason('reseller', reseller);
  if (disconnected) {
    await giveUpTag(job, disconnected);
    return;
  }
  const shop = await shopConnection(deps, reseller);
  const tags = [routedTag(job.vendorTag)];
  const outcome = await deps.platforms(shop.platform).addOrderTags(shop, job.externalOrderId, tags);
  // A platform that takes no tags (custom): `tagged` stays null.
  if (outcome === 'unsupported') return;
  if (await recordTagged(job.id, true)) logger.info('reseller order tagged', { tags });
};

/** How long the placing worker's own try of a tag may take before it leaves the tag to its message. */
export const INLINE_TAG_MS = 3_000;

/**
 * The tag of a job just placed, tried at once in the placing worker's invocation rather than through a
 * message and another worker's (docs/performance.md, "Fewer calls per order"): the same store read, call
 * and write. True when that did (or there is nothing to tag); a refusal ends it as the queue's try would
 * (`tagged: false`). False (the caller sends its message, which tries and retries as before) for anything
 * else: a 429, a 5xx, a failed read or write, or no answer within `INLINE_TAG_MS`; a call still under way
 * then writes as the message's would (conditional on no outcome recorded), and the message's call finds
 * the tag there, which is nothing.
 */
export const tagNow = async (deps: Deps, job: TagAsked): Promise<boolean> => {
  const of = toTag(job);
  if (!of) return true;
  const trying = tagJob(deps, of);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), INLINE_TAG_MS);
  });
  try {
    if ((await Promise.race([trying, late])) !== 'late') return true;
    trying.catch(() => undefined); // its message goes now; a failure of this try is no one's
    logger.info('the reseller order tag is left to its message', { error: 'no answer in time' });
    return false;
  } catch (error) {
    const failure = classify(error, 'internal error while tagging the reseller order');
    if (failure.kind === 'permanent' && (await giveUpTag(of, failure.reason).catch(() => undefined))) return true;
    logger.info('the reseller order tag is left to its message', { error: (error as Error).name });
    return false;
  } finally {
    clearTimeout(timer);
  }
};
