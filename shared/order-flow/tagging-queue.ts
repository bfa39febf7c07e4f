import { config } from '../core/config.js';
import { logger } from '../core/telemetry.js';
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
