import type { Deps } from '../aws/deps.js';
import { sharedReads } from '../core/concurrency.js';
import { config } from '../core/config.js';
import { logger } from '../core/telemetry.js';
import { disconnectedReason } from '../entities/store.js';
import { classify } from '../platforms/port.js';
import { shopConnection } from '../stores/connection.js';
import { loadResellerStore } from '../stores/stores.js';
import { type Fields, isText, parseWith, sendWork, type WorkMessage, workFields } from '../work/runner.js';
import { loadJobWithFulfillments, recordTagged } from './order-entries.js';
import type { SyncJob } from './order-sync-job.js';

/**
 * The reseller order's tag (CONTRACT.md §12.5) as a work item of the fulfillment queue: once a job is
 * placed, its reseller's order gets `routed-<vendorTag>` through the reseller store's platform, tried
 * and retried as a fulfillment is (tagging.ts). The message carries all its state but the outcome, which
 * the job records (`tagged`): a tag costs no write before it is through.
 */
export interface TagMessage extends WorkMessage {
  tagJobId: string;
  /** Times the dead-letter handler put it back on the queue (a reseller outage outlasted its receives). */
  redrives?: number;
  /** When its current run of 429s began (its throttling budget): carried, not written. */
  throttledSince?: string;
  /**
   * What the tag needs of its job, carried so that its try reads nothing (a message of before carries
   * none: its job is read): the job asked for its tag once placed, and the write of its outcome is
   * conditional on none recorded, so a message come again calls the platform again (a tag already
   * there is nothing) and writes nothing.
   */
  of?: TaggedJob;
}

/** What a tag's try knows of its job: which reseller order, and which supplier's tag. */
export type TaggedJob = Pick<SyncJob, 'id' | 'resellerStoreId' | 'externalOrderId'> & { vendorTag: string };

/** The longest tag a platform takes whole: Shopify's 40 characters. */
export const MAX_TAG_LENGTH = 40;

/** The tag of a job's supplier on its reseller's order: `routed-<vendorTag>`, lower-cased, cut to 40 characters. */
export const routedTag = (vendorTag: string) => `routed-${vendorTag}`.toLowerCase().slice(0, MAX_TAG_LENGTH);

export const tagLogContext = (message: TagMessage) => ({ jobId: message.tagJobId, request_id: message.requestId });

export const sendTagMessage = (message: TagMessage, delaySeconds = 0) =>
  sendWork(config.fulfillmentQueueUrl(), [message], delaySeconds);

/**
 * Asks for the tag of a job just placed (or found placed): one message, after the completion's write.
 * Nothing when the job already says (`tagged`) or has no supplier tag. A send that fails throws: the
 * job's own message then comes back, meets the completed job and asks again (order-flow/placing-worker.ts).
 */
export const requestTag = async (job: TagAsked, requestId?: string) => {
  const of = toTag(job);
  if (!of) return;
  await sendTagMessage({ tagJobId: job.id, ...(requestId ? { requestId } : {}), of });
};

/** What asking for a job's tag reads of it. */
export type TagAsked = Pick<SyncJob, 'id' | 'vendorTag' | 'tagged' | 'resellerStoreId' | 'externalOrderId'>;

/** What the tag of a job needs of it; undefined when the job already says (`tagged`) or has no supplier tag. */
export const toTag = (job: TagAsked): TaggedJob | undefined =>
  job.vendorTag === null || typeof job.tagged === 'boolean'
    ? undefined
    : {
        id: job.id,
        resellerStoreId: job.resellerStoreId,
        externalOrderId: job.externalOrderId,
        vendorTag: job.vendorTag,
      };

const readTaggedJob = (of: unknown, tagJobId: string): TaggedJob | undefined => {
  if (typeof of !== 'object' || of === null) return undefined;
  const { id, resellerStoreId, externalOrderId, vendorTag } = of as Record<string, unknown>;
  if (id !== tagJobId || !isText(resellerStoreId) || !isText(externalOrderId) || !isText(vendorTag)) return undefined;
  return { id, resellerStoreId, externalOrderId, vendorTag };
};

export const readTagMessage = (parsed: Fields): TagMessage | undefined => {
  if (!isText(parsed.tagJobId)) return undefined;
  const of = readTaggedJob(parsed.of, parsed.tagJobId);
  return {
    tagJobId: parsed.tagJobId,
    redrives: Number.isInteger(parsed.redrives) ? Number(parsed.redrives) : 0,
    ...(isText(parsed.throttledSince) ? { throttledSince: parsed.throttledSince } : {}),
    ...(of ? { of } : {}),
    ...workFields(parsed),
  };
};

export const parseTagMessage = (body: string) => parseWith(body, readTagMessage);

/** A tag claimed: its job, and when its current run of 429s began (the message carries it). */
export interface Tagging {
  job: TaggedJob;
  throttledSince?: string;
}

/** The job whose reseller order the message tags, as read now; undefined: nothing (left) to do. */
export const taggable = async (message: TagMessage): Promise<Tagging | undefined> => {
  const job = await loadJobWithFulfillments(message.tagJobId);
  // Placed (it has its supplier order), with a supplier tag, and not tagged (nor given up on) yet.
  if (!job?.sourceOrderId || job.vendorTag === null || typeof job.tagged === 'boolean') return undefined;
  return { job: { ...job, vendorTag: job.vendorTag }, throttledSince: message.throttledSince };
};

/** A tag's claim: what its message carries of its job, without a read; a message of before reads it. */
export const claimTag = async (message: TagMessage): Promise<Tagging | undefined> =>
  message.of ? { job: message.of, throttledSince: message.throttledSince } : taggable(message);

/**
 * The tag given up on: `tagged: false`, the reason said once, in the log: an info line, as a tag never
 * fails the job and its refusals are expected (an order deleted on the shop); the job shows it.
 */
export const giveUpTag = async (job: Pick<SyncJob, 'id'>, reason: string) => {
  if (!(await recordTagged(job.id, false))) return 'moved';
  logger.info('the reseller order could not be tagged; the job says `tagged: false`', { reason });
  return 'untagged';
};

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

/** What a tag's call came to: tagged, refused (`false`, with its reason), or a platform that takes no tags. */
type TagCalled = { tagged: boolean; reason?: string } | 'unsupported';

/** The tag's call: its reseller store (a shared read) and the platform's call; nothing written. */
const callTag = async (deps: Deps, job: TaggedJob): Promise<TagCalled> => {
  const reseller = await storeReads.get(job.resellerStoreId);
  if (!reseller) return { tagged: false, reason: `reseller store ${job.resellerStoreId} no longer exists` };
  // Uninstalled, or its token refused (CONTRACT.md §12.2): no call.
  const disconnected = disconnectedReason('reseller', reseller);
  if (disconnected) return { tagged: false, reason: disconnected };
  const shop = await shopConnection(deps, reseller);
  const outcome = await deps
    .platforms(shop.platform)
    .addOrderTags(shop, job.externalOrderId, [routedTag(job.vendorTag)]);
  return outcome === 'unsupported' ? outcome : { tagged: true };
};

/** The tag's try of its message: the call, and its outcome on the job (`tagged`, conditional on none recorded). */
export const tagJob = async (deps: Deps, job: TaggedJob) => {
  const called = await callTag(deps, job);
  // A platform that takes no tags (custom): `tagged` stays null.
  if (called === 'unsupported') return;
  if (!called.tagged) await giveUpTag(job, called.reason ?? 'refused');
  else if (await recordTagged(job.id, true)) logger.info('reseller order tagged', { tags: [routedTag(job.vendorTag)] });
};

/** How long the placing worker's own try of a tag may take before it leaves the tag to its message. */
export const INLINE_TAG_MS = 3_000;

/**
 * What the placing worker's try came to: `tagged` for the completion's write to record (true, or false
 * for a refusal; absent for a platform that takes no tags or a tag left to its message), and whether
 * the tag's message is to be sent once the job is completed.
 */
export interface TagTried {
  tagged?: boolean;
  message: boolean;
}

const LEFT_TO_MESSAGE: TagTried = { message: true };

/**
 * The tag of a job being placed, tried at once in the placing worker's invocation, after the supplier
 * order is placed and BEFORE the completion's write, which records its outcome (`tagged`) in the same
 * UpdateItem (docs/performance.md, "Fewer calls per order"): the tag costs no write of its own. It writes
 * nothing itself. A refusal is `tagged: false`, as the queue's try would end it. Left to its message
 * (sent once the job is completed, which tries and retries as before) for anything else: a 429, a 5xx,
 * a failed read, or no answer within `INLINE_TAG_MS`; a call still under way then writes nothing, and
 * the message's call finds the tag there, which is nothing. A worker that dies between the tag and the
 * completion leaves the job `processing`: its message comes back, the supplier answers the same order
 * (the job id is the create's idempotency key, or the lookup finds it) and the tag is added again, which
 * is nothing (PLATFORM-API.md, "Tags").
 */
export const tagNow = async (deps: Deps, job: TagAsked): Promise<TagTried> => {
  const of = toTag(job);
  if (!of) return { message: false };
  const trying = callTag(deps, of);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), INLINE_TAG_MS);
  });
  try {
    const called = await Promise.race([trying, late]);
    if (called === 'unsupported') return { message: false };
    if (called !== 'late') return triedTag(called.tagged, called.reason);
    trying.catch(() => undefined); // its message goes once the job is completed; a failure of this try is no one's
    logger.info('the reseller order tag is left to its message', { error: 'no answer in time' });
    return LEFT_TO_MESSAGE;
  } catch (error) {
    const failure = classify(error, 'internal error while tagging the reseller order');
    if (failure.kind === 'permanent') return triedTag(false, failure.reason);
    logger.info('the reseller order tag is left to its message', { error: (error as Error).name });
    return LEFT_TO_MESSAGE;
  } finally {
    clearTimeout(timer);
  }
};

/** A tag's outcome for the completion to record, said once in the log (a refusal's reason, as `giveUpTag` says it). */
const triedTag = (tagged: boolean, reason?: string): TagTried => {
  if (tagged) logger.info('reseller order tagged; the completion records it');
  else logger.info('the reseller order could not be tagged; the job says `tagged: false`', { reason });
  return { tagged, message: false };
};
