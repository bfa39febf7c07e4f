import type { Context, SQSRecord } from 'aws-lambda';
import type { MessageOutcome } from '../aws/batch.js';
import type { Deps } from '../aws/deps.js';
import { sharedReads } from '../core/concurrency.js';
import { config } from '../core/config.js';
import { addLogContext, BUSINESS_METRICS, countMetric, logger } from '../core/telemetry.js';
import type { SupplierOrder } from '../domain/orders.js';
import { learnThrottle, readPace, type SupplierPace, takeSlot } from '../entities/rate-limits.js';
import { disconnectedReason, type SourceStore, STORE_DISCONNECTED } from '../entities/store.js';
import { type ShopConnection, throttleOf } from '../platforms/port.js';
import { shopConnection } from '../stores/connection.js';
import { loadSourceStore } from '../stores/stores.js';
import { type Attempt, openDoor, type QueueDoor, runParsed, type WorkKind } from '../work/runner.js';
import { cancelNow, cancelSupplierOrder, requestSupplierOrderCancel, updateSupplierOrder } from './changing.js';
import { releaseAfterDelay } from './holding.js';
import { claimJobOrMet, deferJob, failJob, waitJobForSlot } from './order-job-moves.js';
import { loadJob, UnplaceableOrderError } from './order-repository.js';
import { type AttemptEnd, type AttemptOutcome, jobLogContext, type SyncJob } from './order-sync-job.js';
import {
  alignedSourceLines,
  endJob,
  enqueueJobs,
  foundReason,
  type JobMessage,
  jobMessage,
  jobPlaced,
  killJob,
  lookUpSupplierOrder,
  mayHaveBeenPlaced,
  mayHaveBeenSent,
  messageLogContext,
  parseJobMessage,
  parseSyncQueueMessage,
  type SyncQueueMessage,
  sourceLinesOf,
  supplierOrderFor,
  tagIfPlacedUntagged,
} from './placing.js';
import { completeOrderJobs } from './receiving.js';
import { removeUnits, resendPending, sendReturns } from './refunding.js';

/**
 * The due time shown in the supplier's own admin (CONTRACT.md §16.1): on a platform that has a
 * deadline (Shopify's `fulfillBy`), the supplier order's open fulfillment orders get the job's
 * `dueAt`. Idempotent by value, so a redelivered completion sets it again harmlessly. A failure is
 * logged and counted, never the job's: the promise stands without it.
 */
export const setSupplierDeadline = async (deps: Pick<Deps, 'platforms'>, shop: ShopConnection, job: SyncJob) => {
  const adapter = deps.platforms(shop.platform);
  if (!job.dueAt || !job.sourceOrderId || !adapter.setFulfillmentDeadline) return;
  try {
    const outcome = await adapter.setFulfillmentDeadline(shop, job.sourceOrderId, job.dueAt);
    logger.info('supplier deadline set', { dueAt: job.dueAt, outcome });
  } catch (error) {
    countMetric(BUSINESS_METRICS.deadlineFailures);
    logger.warn('the supplier deadline could not be set', { error: (error as Error).message });
  }
};

/**
 * A supplier's pace before and after a create (docs/design.md, "A pace per supplier"). A shop that
 * has not throttled a call lately costs one eventually consistent read and no write; a hot one
 * gives each create a slot, and a try whose slot is more than `WAIT_IN_PROCESS_MS` away waits
 * for it in a fresh message (the runner's `waitForSlot`, shared/work/runner.ts) rather than calling into a 429.
 */

/** The longest a try waits in process for its slot: cheaper than a message, a claim and a slot wait. */
export const WAIT_IN_PROCESS_MS = 1_500;

/**
 * A kept slot that comes later than this (a busy queue, slow workers) is given up for a fresh one:
 * late messages come together, and calling them all at once would empty the shop's bucket. Its
 * own slot went unused, which leaves the shop a spare call.
 */
export const LATE_MS = 500;

const sleepUntil = (at: number) => {
  const ms = Math.min(WAIT_IN_PROCESS_MS, at - Date.now());
  return ms > 0 ? new Promise((resolve) => setTimeout(resolve, ms)) : undefined;
};

/**
 * How much slower than the rate a platform states the pace goes. Calls come at their slot or a little
 * later (the sleep, the network), never earlier; at exactly the stated rate the shop's bucket stays
 * empty, and a call 2 ms late followed by one on time finds 0.99 of a call in it: a 429. Going 5 %
 * slower refills the shop's bucket by a twentieth of a call per call, so after twenty calls it holds
 * a spare one, and then up to its size, which absorbs any lateness shorter than a slot.
 */
export const STATED_RATE_MARGIN = 1.05;

/**
 * This container's learning under way, by shop: the other messages of its batch, in flight beside the
 * one throttled, read the pace once it is written rather than call into the same empty bucket.
 */
const learning = new Map<string, Promise<unknown>>();

/** How long a pace read that found the shop cool is shared by this container's creates to it. */
export const COOL_SHARED_MS = 200;

/**
 * The pace reads of this container, by shop: the creates of one batch to one supplier (the runner
 * takes a batch's messages together) share one read rather than make one each: the read in flight,
 * and an answer that the shop is cool for `COOL_SHARED_MS`, less than the lag an eventually consistent
 * read may already have. A hot pace is read by each create (its slot is taken with a write anyway),
 * and a learning (`learnFrom`) drops the read it outdates.
 */
const paceReads = sharedReads(
  (shopDomain) => readPace(shopDomain),
  COOL_SHARED_MS,
  (pace) => pace === undefined,
);

/** What a create learns of its shop's pace: the pace it called under, or the slot the job waits for. */
export interface PaceTurn {
  pace?: SupplierPace;
  waitForSlotAt?: number;
}

/**
 * The turn of a create on `shopDomain`: at once on a cool shop; at the slot its message keeps
 * (`slotAt`), unless it came too late for it; else at the slot the pace gives it, waited for in
 * process when it is close.
 */
export const takeTurn = async (shopDomain: string, slotAt: number | undefined): Promise<PaceTurn> => {
  if (slotAt !== undefined && Date.now() - slotAt <= LATE_MS) {
    await sleepUntil(slotAt);
    return {};
  }
  await learning.get(shopDomain)?.catch(() => undefined);
  const pace = await paceReads.get(shopDomain);
  if (!pace) return {};
  let slot = await takeSlot(shopDomain, pace);
  // A slot already behind when the write answers (a slow table under load) is given up, as a kept
  // slot come too late is: the workers whose writes were slow would otherwise call together. The
  // second take finds the pace as it stands now; its slot is called at whatever it is.
  if (slot !== undefined && Date.now() - slot > LATE_MS) slot = await takeSlot(shopDomain, pace);
  if (slot === undefined) return {};
  if (slot - Date.now() > WAIT_IN_PROCESS_MS) return { pace, waitForSlotAt: slot };
  await sleepUntil(slot);
  return { pace };
};

/**
 * A create the shop throttled (429, `throttleOf`): the shop turns hot, its pace takes the rate the
 * platform states, or, without one, slows down (shared/entities/rate-limits.ts).
 */
export const learnFrom = async (
  shopDomain: string,
  turn: PaceTurn,
  throttle: { retryAfterSeconds: number; ratePerSecond?: number },
) => {
  const now = Date.now();
  const learnt = learnThrottle(shopDomain, {
    reopensAt: now + throttle.retryAfterSeconds * 1000,
    statedIntervalMs: throttle.ratePerSecond ? (1000 / throttle.ratePerSecond) * STATED_RATE_MARGIN : undefined,
    fallbackIntervalMs: throttle.retryAfterSeconds * 1000,
    pacedAt: turn.pace,
  });
  learning.set(shopDomain, learnt);
  paceReads.drop(shopDomain);
  try {
    await learnt;
  } finally {
    if (learning.get(shopDomain) === learnt) learning.delete(shopDomain);
  }
};

/**
 * One sync-job message, run by the work-item runner (shared/work/runner.ts): claim the job, place the
 * supplier order at the supplier's prices with the job id as idempotency key, write the outcome (and
 * the attempt, in the same write). A stale message (an older generation, or a job that has ended) is
 * dropped without touching the job. Every line logged meanwhile names the job, its order and the
 * request that sent the message.
 */
export const processSyncMessage = (deps: Deps, received: SQSRecord, context?: Context): Promise<MessageOutcome> =>
  openDoor(syncDoor, deps, received, context);

/** A claimed job in the runner's hands, with what its try learns on the way (for an end or a lookup). */
interface Placement {
  job: SyncJob;
  sourceStore?: SourceStore;
  shop?: ShopConnection;
  /** The supplier order, once built: the prices a completion records. */
  supplierOrder?: SupplierOrder;
  /** The create's turn in its shop's pace (placing-worker.ts), once taken: what a 429 teaches the pace. */
  turn?: PaceTurn;
}

type JobAttempt = Attempt<JobMessage, Placement>;

/** The attempt as the history records it: what sent it, how it ended, when the claim began it. */
const ended = (
  attempt: JobAttempt,
  outcome: AttemptOutcome,
  platformStatus: number | null,
  errorMessage: string | null,
): AttemptEnd => ({
  trigger: attempt.redelivered ? 'redelivery' : (attempt.message.trigger ?? 'webhook'),
  outcome,
  platformStatus,
  errorMessage,
  startedAt: attempt.startedAt,
});

/** The source store's connection, decrypted once per try, when first needed. */
const shopOf = async (deps: Deps, { item }: JobAttempt) => {
  item.shop ??= await shopConnection(deps, item.sourceStore!);
  return item.shop;
};

/**
 * The attempt in hand ends its job: `dead` with `reason`, unless an earlier attempt may have placed
 * the order and the supplier has it (placing.ts). This attempt is claimed but not yet in the history.
 */
const giveUp = async (deps: Deps, attempt: JobAttempt, reason: string, status: number | null) =>
  endJob(deps, attempt.item.job, reason, ended(attempt, 'dead', status, reason), {
    lookUp: mayHaveBeenPlaced(attempt.item.job, 1),
    shop: await shopOf(deps, attempt),
  });

/**
 * A create throttled: its shop's pace learns of it (a lookup throttled teaches nothing: it took no
 * turn). Best effort: the deferral beside it must send its message whatever the pace's write does.
 */
const learnThrottled = async ({ item }: JobAttempt, error: unknown) => {
  const throttle = throttleOf(error);
  if (!item.turn || !item.sourceStore || !throttle) return;
  await learnFrom(item.sourceStore.shopDomain, item.turn, throttle).catch((failure: Error) =>
    logger.error("the source store's pace could not learn of a 429", failure),
  );
};

/**
 * The sync job as a work-item kind: its message, its moves (placing.ts: the adapters, so that a
 * change of how a job is stored changes only them) and the placing of its supplier order.
 */
const syncJobWork: WorkKind<JobMessage, Placement> = {
  words: {
    item: 'sync job',
    queue: 'sync',
    refused: 'platform refused the order',
    throttledPastBudget: 'throttled past the budget',
    deferred: 'platform throttled; job deferred',
  },
  queueUrl: config.syncQueueUrl,
  parse: parseJobMessage,
  messageContext: messageLogContext,
  itemContext: ({ job }) => ({ ...jobLogContext(job), sourceStoreId: job.sourceStoreId }),
  claim: async (message) => {
    const claim = await claimJobOrMet(message);
    if ('claimed' in claim) return { job: claim.claimed };
    await tagIfPlacedUntagged(claim.met, message);
    return undefined;
  },
  startedAt: ({ job }) => job.updatedAt,
  attempt: (deps, attempt) => place(deps, attempt),
  internalReason: 'internal error while placing the order',
  throttledSince: ({ job }) => job.throttledSince ?? undefined,
  end: giveUp,
  defer: async (attempt, delaySeconds, reason, error) => {
    // The pace learns at the same time: every call the shop receives meanwhile is one more 429.
    const [deferred] = await Promise.all([
      deferJob(attempt.item.job, delaySeconds, ended(attempt, 'throttled', 429, reason)),
      learnThrottled(attempt, error),
    ]);
    return deferred ? jobMessage(deferred, 'redelivery', attempt.message.requestId) : undefined;
  },
  waitForSlot: async (attempt, delaySeconds) => {
    // Not a try: the message that follows is still the one that sent it (a manual retry stays a `retry`).
    const waiting = await waitJobForSlot(attempt.item.job, delaySeconds);
    return waiting ? jobMessage(waiting, attempt.message.trigger ?? 'webhook', attempt.message.requestId) : undefined;
  },
  fail: (attempt, reason, status, waitSeconds) =>
    failJob(attempt.item.job, reason, waitSeconds, ended(attempt, 'failed', status, reason)),
  backoffSeconds: config.backoffSeconds,
  unknownOutcome: (deps, attempt, reason, status) => lookForPlaced(deps, attempt, reason, status),
};

type Change = (deps: Deps, message: JobMessage, received: SQSRecord) => Promise<MessageOutcome>;

/** A message that is no try of its job, run by the runner aside of the try (`divert`). */
const aside =
  (change: Change) =>
  (deps: Deps, { message }: { message: JobMessage }, received: SQSRecord, context?: Context) =>
    runParsed({ ...syncJobWork, divert: (d, m) => change(d, m, received) }, deps, message, received, context);

/**
 * A change of the job a message names, read consistently. A cancellation is stale once the job
 * moved on (a new generation); the others carry the job's latest state, whatever message asked.
 */
const onItsJob =
  (change: (deps: Deps, job: SyncJob, messageId: string) => Promise<MessageOutcome>): Change =>
  async (deps, message, received) => {
    const job = await loadJob(message.jobId, true);
    if (!job || (message.purpose === 'cancel' && job.generation !== message.generation)) {
      logger.info('stale message dropped', { generation: message.generation, purpose: message.purpose });
      return 'done';
    }
    addLogContext(jobLogContext(job));
    return change(deps, job, received.messageId);
  };

/**
 * The sync queue's door: each kind of message to its handler. A placement is the job's try; the
 * others run aside of it (the runner's `divert`: its log context and deadline, no claim): the end
 * of a held order's delay (holding.ts), the cancellation of a completed job's supplier order
 * (changing.ts), the reseller's edits (changing.ts), refunded units removed (refunding.ts), returns
 * (refunding.ts).
 */
const syncDoor: QueueDoor<SyncQueueMessage, Deps, MessageOutcome> = {
  queue: 'sync',
  parse: parseSyncQueueMessage,
  malformed: 'done',
  handlers: {
    place: (deps, { message }, received, context) => runParsed(syncJobWork, deps, message, received, context),
    release: aside(releaseAfterDelay),
    cancel: aside(onItsJob(cancelSupplierOrder)),
    update: aside(onItsJob(updateSupplierOrder)),
    remove: aside(onItsJob(removeUnits)),
    return: aside(onItsJob(sendReturns)),
  },
};

/** How long a connected source store's read is shared by this environment's jobs to it. */
export const SOURCE_STORE_SHARED_MS = 200;

/**
 * The source stores' reads, shared by the jobs of one batch (the runner takes its records together):
 * one read per supplier and batch, not per job (docs/performance.md, "Fewer calls per order"). Only a
 * connected store's answer is kept, `SOURCE_STORE_SHARED_MS`, less than the lag an eventually
 * consistent read may already have: a store disconnected meanwhile is called as it was a moment before,
 * and the platform refuses its token as it would have a moment later.
 */
const sourceStoreReads = sharedReads(
  loadSourceStore,
  SOURCE_STORE_SHARED_MS,
  (store) => store !== undefined && !disconnectedReason('source', store),
);

/** The try of a claimed job: its supplier order placed (or the job ended, or found placed already). */
const place = async (deps: Deps, attempt: JobAttempt): Promise<MessageOutcome> => {
  const { item } = attempt;
  item.sourceStore = await sourceStoreReads.get(item.job.sourceStoreId);
  if (!item.sourceStore) return sourceStoreGone(attempt);
  const disconnected = disconnectedReason('source', item.sourceStore);
  if (disconnected) return sourceStoreDisconnected(attempt, disconnected);
  if (item.job.cancellation?.status === 'requested') return endCancelled(deps, attempt);
  await completeSiblings(attempt);
  const supplierOrder = await buildSupplierOrder(deps, attempt);
  if (typeof supplierOrder === 'string') return supplierOrder;
  const shop = await shopOf(deps, attempt);
  const platform = deps.platforms(shop.platform);
  // Without an idempotency key, a create an earlier attempt may have sent is looked up first.
  if (!platform.takesIdempotencyKeys && mayHaveBeenSent(item.job)) {
    const earlier = await lookFirst(deps, attempt);
    if (earlier) return earlier;
  }
  const turn = await takeTurn(item.sourceStore.shopDomain, attempt.message.slotAt);
  if (turn.waitForSlotAt !== undefined) return attempt.waitForSlot(turn.waitForSlotAt);
  item.turn = turn;
  return completePlaced(deps, attempt, await platform.createOrder(shop, supplierOrder, item.job.id));
};

const sourceStoreGone = async (attempt: JobAttempt): Promise<MessageOutcome> => {
  const { job } = attempt.item;
  const reason = `source store ${job.sourceStoreId} no longer exists`;
  if (await killJob(job, reason, ended(attempt, 'dead', null, reason))) logger.warn('sync job is dead', { reason });
  return 'done';
};

/**
 * The supplier uninstalled the app or refused its token (CONTRACT.md §12.2): the job ends `dead` at
 * once, without a call, not even a lookup (its token is dead); `retry` brings it back once new
 * credentials reconnect the store.
 */
const sourceStoreDisconnected = async (attempt: JobAttempt, reason: string): Promise<MessageOutcome> => {
  if (await killJob(attempt.item.job, reason, ended(attempt, 'dead', null, reason))) {
    countMetric(BUSINESS_METRICS.disconnectedStoreWork);
    logger.warn('sync job is dead: its source store is disconnected', { code: STORE_DISCONNECTED });
  }
  return 'done';
};

/** The first job of an order written in chunks completes what a crash may have left unwritten. */
const completeSiblings = async ({ item, message }: JobAttempt) => {
  // Held as their order is (CONTRACT.md §11): those go on when it is released.
  const siblings = (await completeOrderJobs(item.job)).filter((sibling) => !sibling.hold);
  if (siblings.length) await enqueueJobs(siblings.map((sibling) => jobMessage(sibling, 'webhook', message.requestId)));
};

/** The supplier order at the supplier's prices; or, when it cannot be built, the job's outcome. */
const buildSupplierOrder = async (deps: Deps, attempt: JobAttempt): Promise<SupplierOrder | MessageOutcome> => {
  const { job, sourceStore } = attempt.item;
  try {
    attempt.item.supplierOrder = await supplierOrderFor(job, job.resellerShopDomain, sourceStore!.pricingConfig);
    return attempt.item.supplierOrder;
  } catch (error) {
    if (!(error instanceof UnplaceableOrderError)) throw error;
    // The order cannot be built now (its pricing changed, say), but an earlier attempt may have placed it.
    const result = await giveUp(deps, attempt, error.message, null);
    if (result === 'unknown') return attempt.retry(`${error.message}; the supplier could not be asked for it`, null);
    logger.warn('supplier order cannot be built', { reason: error.message, ended: result });
    return 'done';
  }
};

/** A platform without idempotency keys: found, the job completes with it; not known, it tries again later. */
const lookFirst = async (deps: Deps, attempt: JobAttempt): Promise<MessageOutcome | undefined> => {
  const reason = 'an earlier attempt may have placed the supplier order';
  const lookup = await lookUpSupplierOrder(deps, await shopOf(deps, attempt), attempt.item.job);
  if (lookup.kind === 'found') return completeFound(deps, attempt, lookup, null, reason);
  if (lookup.kind === 'unknown' && !lookup.refused)
    return attempt.retry(`${reason}; looking it up failed: ${lookup.reason}`, null);
  return undefined;
};

/** What the supplier answered a create: its order id, HTTP status and line ids. */
type Created = { orderId: string; status?: number; lineItemIds?: string[] };

const completePlaced = async (deps: Deps, attempt: JobAttempt, placed: Created): Promise<MessageOutcome> => {
  const { job, supplierOrder } = attempt.item;
  const lines = await alignedSourceLines(job, sourceLinesOf(supplierOrder, placed.lineItemIds));
  const outcome = ended(attempt, 'completed', placed.status ?? null, null);
  const completed = await jobPlaced(
    deps,
    'complete',
    job,
    { orderId: placed.orderId, lines, promise: attempt.item.sourceStore?.serviceLevel },
    outcome,
    attempt.message.requestId,
  );
  if (!completed) return 'done';
  logger.info('sync job completed', { sourceOrderId: placed.orderId, attempts: completed.attempts });
  await setSupplierDeadline(deps, await shopOf(deps, attempt), completed);
  // Cancelled while this attempt was under way: the order just placed is cancelled in turn.
  if (completed.cancellation?.status === 'requested') {
    await requestSupplierOrderCancel(completed, completed.cancellation, attempt.message.requestId);
  } else if (completed.orderEdits && completed.orderEdits.updatedAt !== job.orderEdits?.updatedAt) {
    // Edited while this attempt was under way: the order just placed gets the edits.
    await enqueueJobs([jobMessage(completed, 'webhook', attempt.message.requestId, 'update')]);
  }
  // Refunded while this attempt was under way (CONTRACT.md §15.1): the refunded units leave the order.
  await resendPending(completed, attempt.message.requestId);
  return 'done';
};

/**
 * A claimed job whose order was cancelled (changing.ts): it ends `cancelled`, and nothing is placed.
 * When an earlier attempt may have placed the order, the supplier is asked first: found, the job
 * completes with it and its cancellation goes to the supplier; not known (a lookup that failed), the
 * message comes back and asks again.
 */
const endCancelled = async (deps: Deps, attempt: JobAttempt): Promise<MessageOutcome> => {
  const { job } = attempt.item;
  const cancellation = job.cancellation!;
  if (mayHaveBeenPlaced(job, 1)) {
    const lookup = await lookUpSupplierOrder(deps, await shopOf(deps, attempt), job);
    if (lookup.kind === 'unknown')
      return attempt.retry(`cancelled, but the supplier could not be asked: ${lookup.reason}`, null);
    if (lookup.kind === 'found') {
      const placed = {
        orderId: lookup.orderId,
        lines: sourceLinesOf(undefined, lookup.lineItemIds),
        promise: attempt.item.sourceStore?.serviceLevel,
      };
      const outcome = ended(attempt, 'found_existing', null, foundReason('cancelled'));
      const found = await jobPlaced(deps, 'found', job, placed, outcome, attempt.message.requestId);
      if (found) await requestSupplierOrderCancel(found, cancellation, attempt.message.requestId);
      return 'done';
    }
  }
  await cancelNow(job, cancellation);
  logger.info('sync job cancelled before its supplier order was placed');
  return 'done';
};

/**
 * The request left and no usable answer came back: the supplier may have placed the order. Found,
 * the job completes with it; else the reason to fail with.
 */
const lookForPlaced = async (deps: Deps, attempt: JobAttempt, reason: string, status: number | null) => {
  const lookup = await lookUpSupplierOrder(deps, await shopOf(deps, attempt), attempt.item.job);
  if (lookup.kind === 'found') {
    await completeFound(deps, attempt, lookup, status, reason);
    return undefined;
  }
  return lookup.kind === 'absent' ? reason : `${reason}; looking the order up failed: ${lookup.reason}`;
};

/** The supplier has the order a lookup found: the job is completed with it (`found_existing`). */
const completeFound = async (
  deps: Deps,
  attempt: JobAttempt,
  found: { orderId: string; lineItemIds?: string[] },
  status: number | null,
  reason: string,
): Promise<MessageOutcome> => {
  const placed = {
    orderId: found.orderId,
    lines: sourceLinesOf(attempt.item.supplierOrder, found.lineItemIds),
    promise: attempt.item.sourceStore?.serviceLevel,
  };
  const outcome = ended(attempt, 'found_existing', status, foundReason(reason));
  await jobPlaced(deps, 'found', attempt.item.job, placed, outcome, attempt.message.requestId);
  logger.warn('outcome unknown; the source store has the supplier order');
  return 'done';
};
