import type { Context, SQSRecord } from 'aws-lambda';
import type { MessageOutcome } from '../aws/batch.js';
import type { Deps } from '../aws/deps.js';
import { config } from '../core/config.js';
import { now } from '../core/ids.js';
import { BUSINESS_METRICS, countMetric, logger } from '../core/telemetry.js';
import { disconnectedReason, STORE_DISCONNECTED } from '../entities/store.js';
import { classify, type ShopConnection } from '../platforms/port.js';
import { shopConnection } from '../stores/connection.js';
import { loadResellerStore } from '../stores/stores.js';
import { type Attempt, openDoor, type QueueDoor, runParsed, type WorkKind } from '../work/runner.js';
import {
  claimCreate,
  deferEntry,
  type FulfillmentOutcome,
  loadPropagation,
  moveEntry,
  type Propagation,
  trackingKey,
  trackingOf,
} from './order-entries.js';
import { jobLogContext } from './order-sync-job.js';
import {
  type FulfillmentMessage,
  type FulfillmentQueueMessage,
  fulfillmentIdempotencyKey,
  jobLineItems,
  parseFulfillmentMessage,
  parseFulfillmentQueueMessage,
  propagationLogContext,
  recheckKeptFulfillment,
} from './propagating.js';
import {
  claimTag,
  giveUpTag,
  parseTagMessage,
  type Tagging,
  type TagMessage,
  tagJob,
  tagLogContext,
} from './tagging.js';

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

/**
 * One fulfillment message, run by the work-item runner (shared/work/runner.ts): the propagation of a
 * source fulfillment, with its tracking, to the reseller order (`externalOrderId`) through the
 * reseller store's platform, with the source fulfillment as idempotency key, its outcome written on
 * the job's entry. A soft-deleted reseller store still gets its tracking: the order was accepted
 * while it was active, and its customer still waits. The same queue carries the delayed rechecks of
 * kept fulfillments (shared/order-flow/propagating.ts) and the reseller orders' tags (tagging.ts).
 */
export const processFulfillmentMessage = (deps: Deps, received: SQSRecord, context?: Context) =>
  openDoor(fulfillmentDoor, deps, received, context);

const fulfillmentDoor: QueueDoor<FulfillmentQueueMessage, Deps, MessageOutcome> = {
  queue: 'fulfillment',
  parse: parseFulfillmentQueueMessage,
  malformed: 'done',
  handlers: {
    propagation: (deps, { message }, received, context) => runParsed(propagationWork, deps, message, received, context),
    recheck: async (_deps, { message }) => {
      await recheckKeptFulfillment(message);
      return 'done';
    },
    tag: (deps, { message }, received, context) => runParsed(tagWork, deps, message, received, context),
  },
};

type PropagationAttempt = Attempt<FulfillmentMessage, Propagation>;

/** One move of the entry the message names (order-entries.ts): the adapter every end and failure goes through. */
const moveTo = ({ item, message }: PropagationAttempt, outcome: FulfillmentOutcome) =>
  moveEntry(item.job.id, message.sourceFulfillmentId, outcome, item.job);

/**
 * The propagation as a work-item kind. No backoff of its own: a failed message comes back on the
 * queue's visibility timeout, and the dead-letter handler puts it back while the reseller may recover.
 */
const propagationWork: WorkKind<FulfillmentMessage, Propagation> = {
  words: {
    item: 'fulfillment',
    queue: 'fulfillment',
    refused: 'reseller platform refused the fulfillment; it is dead',
    throttledPastBudget: 'reseller platform throttled past the budget; fulfillment is dead',
    deferred: 'reseller platform throttled; fulfillment deferred',
  },
  queueUrl: config.fulfillmentQueueUrl,
  parse: parseFulfillmentMessage,
  messageContext: propagationLogContext,
  itemContext: ({ job }) => jobLogContext(job),
  claim: loadPropagation,
  startedAt: now,
  attempt: (deps, attempt) => propagate(deps, attempt),
  internalReason: 'internal error while creating the fulfillment',
  throttledSince: ({ entry }) => entry.throttledSince,
  end: async (_deps, attempt, errorMessage) =>
    (await moveTo(attempt, { status: 'dead', errorMessage, attempted: true })) ? 'dead' : 'moved',
  // Deferred, not failed: the entry records the wait, so the reconciler does not take it for a lost message.
  defer: async (attempt, delaySeconds) =>
    (await deferEntry(attempt.item.job, attempt.item.entry, delaySeconds, attempt.startedAt))
      ? attempt.message
      : undefined,
  fail: (attempt, errorMessage) => moveTo(attempt, { status: 'failed', errorMessage }),
};

/** The reseller's platform and what every call of this propagation sends. */
interface Call {
  shop: ShopConnection;
  platform: ReturnType<Deps['platforms']>;
  key: string;
}

const propagate = async (deps: Deps, attempt: PropagationAttempt): Promise<MessageOutcome> => {
  const { job, entry } = attempt.item;
  const reseller = await loadResellerStore(job.resellerStoreId);
  if (!reseller) {
    const errorMessage = `reseller store ${job.resellerStoreId} no longer exists`;
    await moveTo(attempt, { status: 'dead', errorMessage, attempted: false });
    return 'done';
  }
  // Uninstalled, or its token refused (CONTRACT.md §12.2): dead without a call, until a retry.
  const disconnected = disconnectedReason('reseller', reseller);
  if (disconnected) {
    if (await moveTo(attempt, { status: 'dead', errorMessage: disconnected, attempted: false })) {
      countMetric(BUSINESS_METRICS.disconnectedStoreWork);
      logger.warn('fulfillment is dead: its reseller store is disconnected', { code: STORE_DISCONNECTED });
    }
    return 'done';
  }
  const shop = await shopConnection(deps, reseller);
  const call = {
    shop,
    platform: deps.platforms(shop.platform),
    key: fulfillmentIdempotencyKey(job.sourceStoreId, attempt.message.sourceFulfillmentId),
  };
  // Shopify takes no key: one message of the parcel makes its fulfillment; another comes back after it.
  const creates = !entry.cancelRequested && entry.resellerFulfillmentId === null;
  const { messageId } = attempt.received;
  const sourceFulfillmentId = attempt.message.sourceFulfillmentId;
  if (creates && !call.platform.takesIdempotencyKeys) {
    if (!(await claimCreate(job.id, sourceFulfillmentId, messageId, config.leaseSeconds()))) {
      logger.info('another message of this parcel holds its create: this one comes back after it');
      return 'retry';
    }
  }
  const outcome = entry.cancelRequested ? await cancel(attempt, call) : await fulfil(attempt, call);
  // If this write fails the message comes back, and the same key gets the same answer.
  await moveTo(attempt, outcome);
  logger.info(
    outcome.status === 'cancelled'
      ? 'fulfillment cancelled on the reseller order'
      : 'fulfillment delivered to the reseller order',
    {
      resellerFulfillmentId:
        outcome.status === 'delivered' ? outcome.resellerFulfillmentId : entry.resellerFulfillmentId,
    },
  );
  return 'done';
};

/**
 * Whether an earlier call may have made the fulfillment (it failed, or its worker died mid-call and
 * the message came back or was sent again): a platform without keys then looks for it first.
 */
const mayHaveBeenMade = ({ item, received }: PropagationAttempt) =>
  item.entry.attempts > 0 || (item.entry.resends ?? 0) > 0 || Number(received.attributes?.ApproximateReceiveCount) > 1;

/** The parcel's own lines: never another supplier's items of the order (CONTRACT.md §10.2). */
const linesOf = ({ item }: PropagationAttempt) => (item.entry.lines ? item.entry.lines : jobLineItems(item.job));

/** The entry's fulfillment made on the reseller order, or its new tracking applied (one update per tracking). */
const fulfil = async (attempt: PropagationAttempt, { shop, platform, key }: Call): Promise<FulfillmentOutcome> => {
  const { job, entry } = attempt.item;
  // The entry says what the reseller's fulfillment must be; its latest tracking, not the message's.
  const tracking = trackingOf(entry);
  const applied = trackingKey(tracking);
  if (entry.resellerFulfillmentId === null) {
    const { fulfillmentId } = await platform.createFulfillment(shop, job.externalOrderId, tracking, key, {
      resend: mayHaveBeenMade(attempt),
      lineItems: await linesOf(attempt),
    });
    return { status: 'delivered', resellerFulfillmentId: fulfillmentId, tracking: applied };
  }
  const id = entry.resellerFulfillmentId;
  await platform.updateFulfillmentTracking(shop, id, tracking, `${key}:tracking:${applied}`);
  return { status: 'delivered', resellerFulfillmentId: id, tracking: applied };
};

/** The supplier voided the parcel: the reseller's fulfillment of it is cancelled, if it was made. */
const cancel = async (attempt: PropagationAttempt, call: Call): Promise<FulfillmentOutcome> => {
  const { entry } = attempt.item;
  const made = entry.resellerFulfillmentId ?? (mayHaveBeenMade(attempt) ? await madeEarlier(attempt, call) : null);
  if (made !== null) await call.platform.cancelFulfillment(call.shop, made, `${call.key}:cancel`);
  return { status: 'cancelled' };
};

/**
 * The reseller's fulfillment an earlier create may have made without the service hearing of it (its
 * answer lost, its worker dead mid-call), so that a voided parcel never leaves it standing: the same
 * key answers the same fulfillment (Shopify, without keys, is searched first). A refusal (422:
 * nothing left to fulfil) means none was made. Where none was, this makes it, and it is cancelled at
 * once: better a fulfillment made and cancelled than one left claiming a parcel that will not come
 * (its items fulfilled, the parcel that replaces it refused).
 */
const madeEarlier = async (attempt: PropagationAttempt, { shop, platform, key }: Call) => {
  const { job, entry } = attempt.item;
  try {
    const lineItems = await linesOf(attempt);
    const made = await platform.createFulfillment(shop, job.externalOrderId, trackingOf(entry), key, {
      resend: true,
      lineItems,
    });
    return made.fulfillmentId;
  } catch (error) {
    if (classify(error, 'internal error while looking for the fulfillment').kind === 'permanent') return null;
    throw error;
  }
};
