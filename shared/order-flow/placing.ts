import type { Deps } from '../aws/deps.js';
import { config } from '../core/config.js';
import { BUSINESS_METRICS, countMetric, logger } from '../core/telemetry.js';
import { InvalidAmountError, type PricingConfig, UnknownCurrencyError } from '../domain/money.js';
import {
  buildSupplierOrder,
  JsonText,
  type LineSummary,
  legacySourceIdentifier,
  type ResellerOrder,
  type SupplierOrder,
  sameLines,
  sourceIdentifier,
  summaryText,
} from '../domain/orders.js';
import { itemsOfVendorTag } from '../domain/routing.js';
import { auditPut, SYSTEM } from '../entities/audit-entry.js';
import { classify, type ShopConnection } from '../platforms/port.js';
import { shopConnection } from '../stores/connection.js';
import { loadSourceStore } from '../stores/stores.js';
import {
  type Fields,
  isText,
  optionalText,
  parseWith,
  sendWork,
  type WorkMessage,
  workFields,
} from '../work/runner.js';
import { lineAfterSale } from './order-after-sale.js';
import { attentionUpdate, completeJob, foundJob, killRequest, type PlacedOrder } from './order-job-moves.js';
import {
  type FollowUp,
  jobItems,
  jobOrderReading,
  MOVES,
  type MoveRule,
  moveItem,
  UnplaceableOrderError,
  updateJobWith,
} from './order-repository.js';
import {
  ATTEMPT_TRIGGERS,
  type AttemptEnd,
  type AttemptTrigger,
  type OrderEdits,
  type SourceLine,
  type SyncJob,
} from './order-sync-job.js';
import { releaseKeptFulfillments } from './propagating.js';
import { requestTag, type TagTried, tagNow } from './tagging.js';

/**
 * What a sync-queue message carries: which job, which generation of it (an older one is stale),
 * what sent it (for the attempt history), and, for the log lines of whoever handles it (before the
 * job is even read), the request that sent it (the order's webhook, or the manual retry) and the
 * job's order. No SDK here: the DLQ handler reads messages without sending any.
 */
export interface JobMessage extends WorkMessage {
  jobId: string;
  generation: number;
  /** Absent in messages from before the history: they came from the webhook. */
  trigger?: AttemptTrigger;
  /**
   * The `request_id` of the webhook or retry that enqueued the job. Optional, as the two below:
   * messages sent before they existed have none, and the reconciler's re-sends no request id.
   */
  requestId?: string;
  resellerStoreId?: string;
  externalOrderId?: string;
  /**
   * Epoch ms before which the job is not to be tried: a 429's wait longer than one message delay
   * (15 minutes). A message that arrives earlier is sent on again, without a claim.
   */
  notBefore?: number;
  /**
   * `cancel`: the message cancels the job's supplier order (CONTRACT.md §10.4); `update`: it gives it
   * the reseller's edits (§10.6); `release`: the delay of its held order has ended (§11, holding.ts): the
   * order is read again and its held jobs judged; `remove`: refunded units leave the placed supplier order
   * (§15.1, refunding.ts); `return`: the job's returns reach the supplier (§15.2, refunding.ts); absent: it
   * places it.
   */
  purpose?: 'cancel' | 'update' | 'release' | 'remove' | 'return';
}

/**
 * The message of a job's current generation, sent by `trigger` (request `requestId`, if any);
 * `purpose`: what it does to a placed order, when it does not place one.
 */
export const jobMessage = (
  job: { id: string; generation: number; resellerStoreId: string; externalOrderId: string },
  trigger: AttemptTrigger,
  requestId?: string,
  purpose?: JobMessage['purpose'],
): JobMessage => ({
  jobId: job.id,
  generation: job.generation,
  trigger,
  requestId,
  resellerStoreId: job.resellerStoreId,
  externalOrderId: job.externalOrderId,
  ...(purpose ? { purpose } : {}),
});

/** What a message tells the log lines of its handler, before anything is read. */
export const messageLogContext = (message: JobMessage) => ({
  jobId: message.jobId,
  request_id: message.requestId,
  resellerStoreId: message.resellerStoreId,
  externalOrderId: message.externalOrderId,
});

const PURPOSES = ['cancel', 'update', 'release', 'remove', 'return'] as const;

/** What a sync-queue message asks: a placement (no `purpose` on the wire), or its purpose. */
export type SyncQueueKind = 'place' | (typeof PURPOSES)[number];

/**
 * The sync queue's one message type, a union tagged by `kind`, parsed once at its door (`openDoor`,
 * shared/work/runner.ts). The wire format is unchanged: the kind is read from `purpose`.
 */
export type SyncQueueMessage = { [K in SyncQueueKind]: { kind: K; message: JobMessage } }[SyncQueueKind];

const readJobMessage = (parsed: Fields): JobMessage | undefined => {
  if (!isText(parsed.jobId) || !Number.isInteger(parsed.generation)) return undefined;
  const trigger = ATTEMPT_TRIGGERS.find((t) => t === parsed.trigger);
  const purpose = PURPOSES.find((p) => p === parsed.purpose);
  return {
    jobId: parsed.jobId,
    generation: Number(parsed.generation),
    ...(trigger ? { trigger } : {}),
    ...workFields(parsed),
    ...optionalText(parsed, 'resellerStoreId'),
    ...optionalText(parsed, 'externalOrderId'),
    ...(purpose ? { purpose } : {}),
  };
};

export const parseJobMessage = (body: string) => parseWith(body, readJobMessage);

const readSyncQueueMessage = (parsed: Fields): SyncQueueMessage | undefined => {
  const message = readJobMessage(parsed);
  return message && ({ kind: message.purpose ?? 'place', message } as SyncQueueMessage);
};

export const parseSyncQueueMessage = (body: string) => parseWith(body, readSyncQueueMessage);

/** One message per job on the sync queue, ten to a SendMessageBatch. Throws if any entry was refused. */
export const enqueueJobs = (messages: JobMessage[], delaySeconds = 0) =>
  sendWork(config.syncQueueUrl(), messages, delaySeconds);

/**
 * The supplier order a job places: the stored order read exactly as the webhook read it, the items
 * whose `vendor` is the job's tag, at the supplier's prices (CONTRACT.md §7).
 */
export const supplierOrderFor = async (
  job: SyncJob,
  resellerShopDomain: string,
  pricing: PricingConfig,
): Promise<SupplierOrder> => {
  const reading = await jobOrderReading(job);
  if (!reading) throw new UnplaceableOrderError('the job holds no order to place');
  if (!reading.ok) {
    throw new UnplaceableOrderError(`the stored order cannot be read: ${reading.param ?? ''} ${reading.message}`);
  }
  const order = withEdits(reading.order, job.orderEdits);
  const lineItems = placedItems(job, itemsOfVendorTag(order.lineItems, job.vendorTag));
  if (!lineItems.length) throw new UnplaceableOrderError('every unit of the job was refunded');
  try {
    return buildSupplierOrder({ resellerShopDomain, syncJobId: job.id, order, lineItems, pricing });
  } catch (error) {
    // Prices that cannot be computed exactly never heal by retrying.
    if (error instanceof UnknownCurrencyError || error instanceof InvalidAmountError) {
      throw new UnplaceableOrderError(error.message);
    }
    throw error;
  }
};

/**
 * The job's items less the units the reseller refunded with `restock_type` cancel before the order
 * was placed (CONTRACT.md §15.1); an item with none left is not placed.
 */
const placedItems = <T extends { id: string | null; quantity: number }>(job: SyncJob, items: T[]): T[] =>
  items
    .map((item) => ({ ...item, quantity: item.quantity - lineAfterSale(job.afterSale ?? null, item.id).cut }))
    .filter((item) => item.quantity > 0);

/**
 * The supplier's lines of a placed order laid over the job's items in their order: an item a refund
 * left out of the order (placedItems) has none.
 */
export const alignedSourceLines = async (job: SyncJob, placed: SourceLine[]): Promise<SourceLine[]> => {
  if (!job.afterSale) return placed;
  const items = await jobItems(job);
  if (!items) return placed;
  const queue = [...placed];
  return items.map((item) =>
    item.quantity - lineAfterSale(job.afterSale ?? null, item.id).cut > 0
      ? (queue.shift() ?? { id: null, price: null })
      : { id: null, price: null },
  );
};

/**
 * The lines the job places, as a lookup compares them (`sameLines`): its items of the stored order,
 * with no prices, so a change of pricing does not matter. Undefined when the order cannot be read.
 */
export const jobLineSummaries = async (job: SyncJob): Promise<LineSummary[] | undefined> =>
  (await jobItems(job))?.map((item) => ({ sku: summaryText(item.sku), quantity: item.quantity, vendor: item.vendor }));

/**
 * The job's lines as placed (CONTRACT.md §10.1): the supplier's id of each (its answer lists them in
 * the order sent; an answer of another length names no line for sure, so none is kept) and the unit
 * price each was placed at, when the supplier order is at hand.
 */
export const sourceLinesOf = (
  order: Pick<SupplierOrder, 'line_items'> | undefined,
  lineItemIds: string[] | undefined,
  count = order?.line_items.length ?? lineItemIds?.length ?? 0,
): SourceLine[] => {
  const ids = lineItemIds?.length === count ? lineItemIds : undefined;
  return Array.from({ length: count }, (_, i) => ({
    id: ids?.[i] ?? null,
    price: order?.line_items[i]?.price ?? null,
  }));
};

/** The stored order with the reseller's later edits laid over it (CONTRACT.md §10.6): the latest of each field. */
export const withEdits = (order: ResellerOrder, edits: OrderEdits | null): ResellerOrder => {
  if (!edits) return order;
  const text = (value: string | undefined, was: JsonText | null) => (value === undefined ? was : new JsonText(value));
  return {
    ...order,
    email: text(edits.email, order.email),
    shippingAddress: text(edits.shippingAddress, order.shippingAddress),
    note: text(edits.note, order.note),
    noteAttributes: text(edits.noteAttributes, order.noteAttributes),
  };
};

/**
 * The moves of a sync job that its machinery writes with their audit entry (the others are the
 * order aggregate's, order-job-moves.ts).
 */

/**
 * → dead, with the reason, and a `sync_job.dead` audit entry in the same transaction. From the
 * state the caller read (the worker's `processing`, or what the DLQ handler or the reconciler
 * found); false when the job moved meanwhile.
 */
export const killJob = async (job: SyncJob, reason: string, attempt: AttemptEnd) => {
  const killed = await updateJobWith(moveItem(killRequest(job, reason, attempt)), [
    auditPut({
      action: 'sync_job.dead',
      job,
      actor: SYSTEM,
      metadata: { previousStatus: job.status, reason, attempts: job.attempts },
    }),
  ]);
  if (killed !== true) return false;
  countMetric(BUSINESS_METRICS.jobsDead);
  return true;
};

/**
 * What needs a person (CONTRACT.md §10.6): `attention` on the job with why, and its
 * `sync_job.attention_required` audit entry, in one transaction conditional on the generation read.
 * False when the job moved meanwhile. Not a move: the job stays in its state.
 */
export const needsAttention = async (job: SyncJob, reason: string) =>
  (await updateJobWith(attentionUpdate(job, reason), [
    auditPut({ action: 'sync_job.attention_required', job, actor: SYSTEM, metadata: { reason } }),
  ])) === true;

/** What the moves' follow-ups learnt before the move's write: the tag's try, whose outcome the write records. */
interface Before {
  tag?: TagTried;
}

/**
 * The follow-ups of a job's moves, run from here alone: each move declares its own beside its rule
 * (`after`, order-repository.ts), and the moves that have any are written through this module, so
 * a new follow-up (a refund's, a service level's) is one word in the table and one line below.
 */
const FOLLOW_UPS: Record<FollowUp, (deps: Deps, job: SyncJob, before: Before, requestId?: string) => Promise<void>> = {
  releaseKeptFulfillments: (_deps, job) => releaseKeptFulfillments(job),
  // Tried at once before the write (`tagBefore`), which records it; its message only when that did not do (tagging.ts).
  requestTag: async (_deps, job, before, requestId) => {
    if (before.tag?.message ?? true) await requestTag(job, requestId);
  },
};

/**
 * What the follow-ups `move` declares try before its write: the reseller order's tag, tried at once
 * once the supplier order is placed, so that the completion's one conditional UpdateItem records
 * `tagged` (docs/performance.md, "Fewer calls per order"); a tag never fails the job.
 */
const tagBefore = async (deps: Deps, move: keyof typeof MOVES, job: SyncJob): Promise<Before> => {
  const rule: MoveRule = MOVES[move];
  return rule.after?.includes('requestTag') ? { tag: await tagNow(deps, job) } : {};
};

/** The follow-ups `move` declares, run in order for the job it wrote. */
const followUp = async (deps: Deps, move: keyof typeof MOVES, job: SyncJob, before: Before, requestId?: string) => {
  const rule: MoveRule = MOVES[move];
  for (const name of rule.after ?? []) await FOLLOW_UPS[name](deps, job, before, requestId);
};

/**
 * → completed with the supplier order (`complete`: the supplier answered the create; `found`: a lookup
 * found it), recording the reseller order's tag tried just before, then the move's follow-ups;
 * undefined when the job moved meanwhile (nothing follows).
 */
export const jobPlaced = async (
  deps: Deps,
  move: 'complete' | 'found',
  job: SyncJob,
  placed: PlacedOrder,
  attempt: AttemptEnd,
  requestId?: string,
) => {
  const before = await tagBefore(deps, move, job);
  const tagged = { ...placed, tagged: before.tag?.tagged };
  const completed = await (move === 'complete' ? completeJob : foundJob)(job, tagged, attempt);
  if (completed) await followUp(deps, move, completed, before, requestId);
  return completed;
};

/**
 * A message of the try that placed its job, back after its worker died between the completion's write
 * and the tag's message (the tag left to it: its try failed, or came too late; or the send failed):
 * the tag is asked for again. A message of an older
 * generation, or a job tagged already, asks nothing.
 */
export const tagIfPlacedUntagged = async (met: SyncJob | undefined, message: JobMessage) => {
  if (met?.status !== 'completed' || met.generation !== message.generation || met.tagged != null) return;
  // Its message: the claim that met the job has no platform in hand (and a redelivery is rare).
  await requestTag(met, message.requestId);
  logger.info('a message of a placed job came back; its reseller order tag asked for again');
};

/**
 * A job is never `dead` while its supplier holds its order (CONTRACT.md §6). When a create call's
 * outcome is unknown, and before any job that may have been placed is made dead, the supplier is
 * asked for the order by its `source_identifier` (PLATFORM-API.md, "Lookups").
 */

export type LookupResult =
  | { kind: 'found'; orderId: string; lineItemIds?: string[] }
  | { kind: 'absent' }
  /** The lookup itself failed; `refused` when it cannot heal (401, 404…), so there is no asking. */
  | { kind: 'unknown'; reason: string; refused: boolean };

/**
 * Asks the job's supplier whether it holds the job's order: by the `source_identifier` that names the
 * job, then, found none, by the one orders placed before carry (the reseller order only, shared by the
 * order's jobs on one shop). An order found by that one is taken only when its lines are the job's
 * (`sameLines`); when they differ, or the platform did not answer them, it is not: a job that takes
 * another job's order never places its own, a loss nobody sees, while one that answers absent at worst
 * sends its create again, which the idempotency key (storeplatform_a, custom) makes the same order.
 */
export const lookUpSupplierOrder = async (deps: Deps, shop: ShopConnection, job: SyncJob): Promise<LookupResult> => {
  try {
    const platform = deps.platforms(shop.platform);
    const found = await platform.findOrder(shop, sourceIdentifier(job.resellerShopDomain, job.externalOrderId, job.id));
    if (found) return { kind: 'found', orderId: found.orderId, lineItemIds: found.lineItemIds };
    const legacy = await platform.findOrder(shop, legacySourceIdentifier(job.resellerShopDomain, job.externalOrderId));
    if (!legacy || !sameLines((await jobLineSummaries(job)) ?? [], legacy.lines)) return { kind: 'absent' };
    return { kind: 'found', orderId: legacy.orderId, lineItemIds: legacy.lineItemIds };
  } catch (error) {
    const failure = classify(error, 'internal error while looking the order up');
    return { kind: 'unknown', reason: failure.reason, refused: failure.kind === 'permanent' };
  }
};

/** The reason of a completion found by lookup: what happened to the call, and that the order is there. */
export const foundReason = (reason: string) => `${reason}; the supplier has the order (found by its source_identifier)`;

/**
 * Whether an earlier attempt may have placed the order: one that failed (the supplier may have
 * acted before failing), or a claim that never recorded how it ended (its worker died mid-call).
 * Attempts the supplier refused (429, 401, 404, 422) placed nothing. `unrecorded`: the caller's own
 * attempt, claimed but not yet in the history.
 */
export const mayHaveBeenPlaced = (job: SyncJob, unrecorded = 0) => {
  const recorded = job.attemptLog.reduce((sum, attempt) => sum + attempt.count, 0);
  if (recorded + unrecorded < job.attempts) return true;
  return job.attemptLog.some((attempt) => attempt.outcome === 'failed');
};

/**
 * Whether an earlier attempt may have sent the create to a platform that takes no idempotency key
 * (storeplatform_b): one that may have placed it, or one answered THROTTLED, which PLATFORM-API.md
 * does not count as a definite answer. Such a job is looked up before the create is sent again.
 */
export const mayHaveBeenSent = (job: SyncJob) =>
  mayHaveBeenPlaced(job, 1) || job.attemptLog.some((attempt) => attempt.outcome === 'throttled');

export type EndResult = 'dead' | 'found' | 'unknown' | 'moved';

/**
 * Ends a job that cannot go on: `dead` with `reason`, unless the supplier has its order, in which
 * case it is completed (`found_existing`) and its kept fulfillments are released. When the order
 * may have been placed and the lookup cannot tell (throttled, down), nothing is written: `unknown`,
 * and the caller keeps the job going. `moved`: another writer moved the job first.
 */
export const endJob = async (
  deps: Deps,
  job: SyncJob,
  reason: string,
  attempt: AttemptEnd,
  options: { lookUp: boolean; shop?: ShopConnection },
): Promise<EndResult> => {
  if (options.lookUp) {
    const sourceStore = options.shop ? undefined : await loadSourceStore(job.sourceStoreId);
    const shop = options.shop ?? (sourceStore ? await shopConnection(deps, sourceStore) : undefined);
    const lookup = shop ? await lookUpSupplierOrder(deps, shop, job) : ({ kind: 'absent' } as const);
    if (lookup.kind === 'found') {
      const found = { ...attempt, outcome: 'found_existing' as const, errorMessage: foundReason(reason) };
      const placed = { orderId: lookup.orderId, lines: sourceLinesOf(undefined, lookup.lineItemIds) };
      const completed = await jobPlaced(deps, 'found', job, placed, found);
      return completed ? 'found' : 'moved';
    }
    if (lookup.kind === 'unknown' && !lookup.refused) return 'unknown';
  }
  return (await killJob(job, reason, attempt)) ? 'dead' : 'moved';
};
