import { config } from '../core/config.js';
import { syncJobId } from '../core/ids.js';
import { isEnded, isOpen, SYNC_JOB_STATUSES, type SyncJobStatus } from '../domain/orders.js';
import { type Hold, UNROUTED_REASONS, type UnroutedLine } from '../domain/routing.js';
import { coveredQuantities, type ParcelCover, type ShipmentStatus } from '../domain/shipping.js';
import {
  INDEX_ATTRIBUTES,
  INDEX_KEYS,
  type IndexAttribute,
  indexEntry,
  indexKeyNames,
  inFlight,
  jobIdOfPartition,
  keys,
  listSortKey,
  lists,
  lookups,
} from '../dynamo/keys.js';
import { attributes, type Item } from '../dynamo/table.js';
import { AFTER_SALE, type AfterSale, afterSaleAttribute, afterSaleFrom } from './order-after-sale.js';

/**
 * The entity tag every item of an order's partition (its first job's key) carries: which kind of item it is,
 * written by its entity module, read by `orderItemFrom` (order-items.ts). One letter under a one-letter
 * name: every byte of the job item is billed again by each of its writes (docs/performance.md).
 */
export const ENTITY_TAG = 'e';

export const ENTITY_TAGS = {
  job: 'J',
  unroutedOrder: 'U',
  orderCancellation: 'C',
  earlyAfterSale: 'A',
  bodyPart: 'B',
  unroutedMark: 'M',
} as const;

export type OrderItemKind = keyof typeof ENTITY_TAGS;

/** The entity tag attribute of an item of `kind`, to spread into the item. */
export const entityTagOf = (kind: OrderItemKind): Record<string, string> => ({ [ENTITY_TAG]: ENTITY_TAGS[kind] });

/**
 * A sync job's attempt history (CONTRACT.md §6, `GET /v1/sync_jobs/{id}/attempts`): what each try
 * to place the order came to, so an on-call engineer sees why a job is where it is without a log.
 * It lives on the job item and is written by the very update that moves the job (order-repository.ts),
 * so it costs no write of its own; that is why it is kept short: at most MAX_KEPT_ATTEMPTS entries,
 * throttled attempts in a row folded into one with a `count`, and stored with one-letter keys
 * (every byte of the job item is paid again by each of its writes).
 */

export const ATTEMPT_TRIGGERS = ['webhook', 'redelivery', 'retry', 'reconciler', 'poll'] as const;
export type AttemptTrigger = (typeof ATTEMPT_TRIGGERS)[number];

export const ATTEMPT_OUTCOMES = ['completed', 'failed', 'throttled', 'dead', 'found_existing'] as const;
export type AttemptOutcome = (typeof ATTEMPT_OUTCOMES)[number];

export const MAX_KEPT_ATTEMPTS = 100;

/** How an attempt ended, as its mover tells it; the move adds its generation and end time. */
export interface AttemptEnd {
  /** What sent the message: the order webhook, SQS again, a manual retry, the reconciler. */
  trigger: AttemptTrigger;
  outcome: AttemptOutcome;
  /** The platform's HTTP status; null when there was none (a timeout, no call made). */
  platformStatus: number | null;
  errorMessage: string | null;
  startedAt: string;
}

/** One entry of a job's attempt history. */
export interface Attempt extends AttemptEnd {
  /** 1, 2, …: the entry's place in the job's history (a folded run keeps its first number). */
  number: number;
  /** The generation of the message it ran under: which enqueue of the job it belongs to. */
  generation: number;
  endedAt: string;
  /** The time spent in it (for a folded run, in all of them). */
  durationMs: number;
  /** Attempts in the entry: more than 1 only for throttled attempts in a row. */
  count: number;
}

/**
 * The history with the attempt a move ends added (under the move's generation and time): folded
 * into the last entry when both were throttled, at most the last 100.
 */
export const appendAttempt = (
  log: Attempt[],
  attempt: AttemptEnd & Pick<Attempt, 'generation' | 'endedAt'>,
): Attempt[] => {
  const durationMs = Math.max(0, Date.parse(attempt.endedAt) - Date.parse(attempt.startedAt));
  const last = log.at(-1);
  if (last?.outcome === 'throttled' && attempt.outcome === 'throttled') {
    const folded: Attempt = {
      ...last,
      generation: attempt.generation,
      platformStatus: attempt.platformStatus,
      errorMessage: attempt.errorMessage,
      endedAt: attempt.endedAt,
      durationMs: last.durationMs + durationMs,
      count: last.count + 1,
    };
    return [...log.slice(0, -1), folded];
  }
  return [...log, { ...attempt, number: (last?.number ?? 0) + 1, durationMs, count: 1 }].slice(-MAX_KEPT_ATTEMPTS);
};

/** Failed attempts of one generation: the tries one message had before SQS gave up on it. */
export const failedAttemptsOf = (log: Attempt[], generation: number) =>
  log.filter((attempt) => attempt.generation === generation && attempt.outcome === 'failed').length;

// ---------- storage

/**
 * One entry as stored: `n` number, `g` generation, `t` trigger, `o` outcome, `s` platform status,
 * `e` error message, `a` started (epoch ms: 8 bytes rather than 24), `d` duration, and for a folded
 * run `b` ended (epoch ms) and `c` count. Absent when null, or (`b`) when it is `a` + `d`.
 */
interface StoredAttempt {
  n: number;
  g: number;
  t: AttemptTrigger;
  o: AttemptOutcome;
  s?: number;
  e?: string;
  a: number;
  d: number;
  b?: number;
  c?: number;
}

const iso = (epochMs: number) => new Date(epochMs).toISOString();

export const storedAttempts = (log: Attempt[]): StoredAttempt[] =>
  log.map((attempt) => ({
    n: attempt.number,
    g: attempt.generation,
    t: attempt.trigger,
    o: attempt.outcome,
    ...(attempt.platformStatus === null ? {} : { s: attempt.platformStatus }),
    ...(attempt.errorMessage === null ? {} : { e: attempt.errorMessage }),
    a: Date.parse(attempt.startedAt),
    d: attempt.durationMs,
    ...(Date.parse(attempt.endedAt) === Date.parse(attempt.startedAt) + attempt.durationMs
      ? {}
      : { b: Date.parse(attempt.endedAt) }),
    ...(attempt.count === 1 ? {} : { c: attempt.count }),
  }));

/** The history of a job item (written only by storedAttempts); empty before the first attempt ends. */
export const attemptsFrom = (stored: readonly StoredAttempt[] | undefined): Attempt[] =>
  (stored ?? []).map((entry) => ({
    number: entry.n,
    generation: entry.g,
    trigger: entry.t,
    outcome: entry.o,
    platformStatus: entry.s ?? null,
    errorMessage: entry.e ?? null,
    startedAt: iso(entry.a),
    endedAt: iso(entry.b ?? entry.a + entry.d),
    durationMs: entry.d,
    count: entry.c ?? 1,
  }));

// ---------- ids

/** `sja_<job id without its prefix>_<number>`: stable, and it names its job, so a cursor can be checked. */
export const attemptId = (jobId: string, number: number) => `sja_${jobId.replace(/^sj_/, '')}_${number}`;

/** The number an attempt id names for `jobId`, or undefined when it is not an attempt id of that job. */
export const attemptNumberOf = (jobId: string, id: string) => {
  const prefix = attemptId(jobId, 0).slice(0, -1);
  if (!id.startsWith(prefix)) return undefined;
  const rest = id.slice(prefix.length);
  return /^[1-9]\d{0,8}$/.test(rest) ? Number(rest) : undefined;
};

/**
 * The fulfillment entry (docs/propagation.md): the state a source fulfillment has on the sync job
 * that placed its supplier order, in the job item's `fulfillments` map, keyed by source fulfillment
 * id. It is no item of its own: the job item (order-sync-job.ts) carries it, and its writes are updates
 * of the job item (order-entries.ts).
 */

/**
 * `pending`/`failed`: work on its way to the reseller's order (a create, a tracking update or a
 * cancellation); `delivered`: the reseller's fulfillment is as the supplier's last said; `dead`:
 * given up; `ignored`: nothing of the job was left to ship (CONTRACT.md §10.2); `cancelled`: the
 * supplier voided the parcel and the reseller's fulfillment is cancelled too (or was never made).
 */
export const FULFILLMENT_STATUSES = ['pending', 'delivered', 'failed', 'dead', 'ignored', 'cancelled'] as const;
export type FulfillmentStatus = (typeof FULFILLMENT_STATUSES)[number];

/** Stored as is: the map's values are these objects, attribute for field. */
export interface FulfillmentEntry {
  sourceFulfillmentId: string;
  status: FulfillmentStatus;
  trackingCompany: string | null;
  trackingNumber: string | null;
  trackingNumbers: string[];
  trackingUrl: string | null;
  resellerFulfillmentId: string | null;
  attempts: number;
  errorMessage: string | null;
  receivedAt: string;
  updatedAt: string;
  deliveredAt: string | null;
  /** Every tracking URL (`trackingUrl` is the first), for a message the reconciler sends again. */
  trackingUrls?: string[];
  /** Messages the reconciler has sent since the entry last made progress (CONTRACT.md §6). */
  resends?: number;
  /** The end of a wait the entry announced (a 429's Retry-After): its lease runs from there. */
  waitUntil?: string;
  /** When its current run of throttled (429) calls began: the throttling budget. */
  throttledSince?: string;
  /**
   * The reseller's line items and quantities the parcel ships (CONTRACT.md §10.2), planned when it
   * was accepted; absent: the whole job (a job whose lines have no ids, or an entry of older code).
   */
  lines?: ParcelLine[];
  /** The supplier's `updated_at` of the last version applied: an older update changes nothing. */
  sourceUpdatedAt?: string;
  /** The supplier cancelled the parcel: the reseller's fulfillment is to be cancelled. */
  cancelRequested?: boolean;
  /** The tracking the reseller's fulfillment has (`trackingKey`): a tracking update is sent once per change. */
  appliedTracking?: string;
  /** The platform's own time of the parcel (its `created_at`): when it shipped (CONTRACT.md §16.2). */
  sourceCreatedAt?: string;
  /** The carrier's progress as the supplier's platform last said it (CONTRACT.md §16.2); absent: never said. */
  shipmentStatus?: ShipmentStatus;
  /** The carrier's time of its first scan (in transit or later). */
  firstScanAt?: string;
  /** When the sweep found it reported but not scanned within its window: `fulfillment.unscanned`, once. */
  unscannedAt?: string;
  /**
   * Where the reseller's platform takes no key (Shopify): the message (its SQS id) that holds the
   * create of the reseller's fulfillment, and since when (`claimCreate`, order-entries.ts).
   */
  createdBy?: string;
  createClaimedAt?: string;
}

/** One reseller line item a parcel ships, by its id on the reseller's order. */
export interface ParcelLine {
  id: string;
  quantity: number;
}

/** Entries still on their way to the reseller's platform: the reconciler watches them. */
export const isPropagating = (entry: Pick<FulfillmentEntry, 'status'>) =>
  entry.status === 'pending' || entry.status === 'failed';

/** The job item's `fulfillments` map; absent until the job's first fulfillment arrives. */
export const fulfillmentEntriesFrom = (item: Item): Record<string, FulfillmentEntry> =>
  attributes(item, 'sync job').optionalObject<Record<string, FulfillmentEntry>>('fulfillments') ?? {};

/** What a parcel covers, as its entry records it: its lines, or the whole job (entries of older code too). */
export const coverOf = (entry: FulfillmentEntry): ParcelCover => entry.lines ?? 'whole';

/** Whether the reseller's platform has the parcel's fulfillment (made, and not cancelled). */
export const isOnResellerOrder = (entry: FulfillmentEntry) =>
  entry.resellerFulfillmentId !== null && entry.status !== 'cancelled';

/**
 * Each line's `fulfilledQuantity` (CONTRACT.md §10.2): what the reseller's platform accepted of it,
 * from the job's parcels that are on the reseller's order.
 */
export const fulfilledQuantities = (
  lines: ReadonlyArray<{ resellerLineItemId: string | null; quantity: number }>,
  entries: Record<string, FulfillmentEntry>,
) => coveredQuantities(lines, Object.values(entries).filter(isOnResellerOrder).map(coverOf));

/** When a parcel shipped: the platform's time of it, else when the service heard of it (older entries). */
export const shippedTimeOf = (entry: Pick<FulfillmentEntry, 'sourceCreatedAt' | 'receivedAt'>) =>
  entry.sourceCreatedAt ?? entry.receivedAt;

/**
 * The sync job entity: the record, its item's key, every index entry it carries in each state,
 * and its conversions to and from the item. The only place that knows a job item's attributes;
 * its history (order-sync-job.ts) and its fulfillment entries (order-sync-job.ts) live inside it.
 */

/** The job item's key. */
export const syncJobKey = (id: string) => keys.syncJob(id);

export interface SyncJob {
  id: string;
  ownerId: string;
  resellerStoreId: string;
  sourceStoreId: string;
  status: SyncJobStatus;
  attempts: number;
  generation: number;
  /** The reseller order's id on the reseller's platform. */
  externalOrderId: string;
  /** Part of the supplier order's `source_identifier`; '' when the reseller's domain was not known. */
  resellerShopDomain: string;
  /**
   * Where the reseller order is kept (shared/order-flow/order-repository.ts): its compressed raw body inline,
   * or in `parts` items beside the order's first job; `legacy` is the map older code wrote. Null for
   * an item written without one (never by this service): the worker makes such a job dead.
   */
  order: StoredOrder | null;
  /** The order's line items this job places: those whose `vendor` is this tag. Null (legacy items): all. */
  vendorTag: string | null;
  /** On the first job of an order only: every job id of the order (the order's dedup record). */
  orderJobIds: string[] | null;
  /**
   * On the first job of an order written in several chunks only (more jobs than one transaction
   * holds): each position's source store and vendor tag, compressed, so that a redelivery or the
   * first job's worker can write the jobs a crash left unwritten exactly as planned.
   */
  orderRouting: Uint8Array | null;
  /** On the first job of an order only: how the order first reached the service (CONTRACT.md §10.8). */
  receivedVia: ReceivedVia;
  /** On the first job of an order only: the order's items that went to no supplier, and why; null: none. */
  unroutedLines: UnroutedLine[] | null;
  /** The supplier order's id, once placed. */
  sourceOrderId: string | null;
  /**
   * Once placed, per line the job carries (in the order of the reseller's lines): the supplier's id
   * of the line (null when the platform did not answer it) and the unit price it was placed at (null
   * when the order was found by a lookup, whose answer has no prices). Null until placed.
   */
  sourceLines: SourceLine[] | null;
  errorMessage: string | null;
  completedAt: string | null;
  failedAt: string | null;
  deadAt: string | null;
  /** When the job became `cancelled` (CONTRACT.md §10.4). */
  cancelledAt: string | null;
  /** A cancellation asked of the job, and where it stands; null when none was. */
  cancellation: Cancellation | null;
  /** What needs a person (CONTRACT.md §10.6): a cancellation that kept failing, say; null when nothing does. */
  attention: Attention | null;
  /** The reseller's edits of the order since it arrived (`orders/updated`, CONTRACT.md §10.6); null: none. */
  orderEdits: OrderEdits | null;
  createdAt: string;
  updatedAt: string;
  /** Propagation: one entry per source fulfillment of the supplier order (shared/order-flow). */
  fulfillments: Record<string, FulfillmentEntry>;
  /** Messages the reconciler has sent since the job last made progress (CONTRACT.md §6). */
  resends: number;
  /**
   * Until when the job waits on purpose, with no message expected before (a deferral's due time,
   * the backoff after a failure): the reconciler's lease runs from here. Null when not waiting.
   */
  waitUntil: string | null;
  /** When the job's current run of throttled (429) attempts began; null when the last attempt was not throttled. */
  throttledSince: string | null;
  /** The attempt history, oldest first (order-sync-job.ts). */
  attemptLog: Attempt[];
  /**
   * Why a `pending` job does not go to its supplier yet (CONTRACT.md §11), since when, and the end of
   * its delay; null when nothing holds it. A held job is in its owner's and store's list of held jobs.
   */
  hold: Hold | null;
  /**
   * When the shopper's personal data was erased from the job's copy of the order (CONTRACT.md §13:
   * a compliance request or the retention sweep, shared/order-flow/order-redaction.ts); absent or null: not erased.
   */
  redactedAt?: string | null;
  /**
   * Whether the reseller's order got its `routed-<vendorTag>` tag (CONTRACT.md §12.5): true, false
   * when it could not be written, null (absent) while pending or where the platform takes no tags.
   */
  tagged?: boolean | null;
  /** What happened after the sale (CONTRACT.md §15, order-after-sale.ts); absent or null: nothing yet. */
  afterSale?: AfterSale | null;
  /** When the supplier order is due to ship (CONTRACT.md §16.1); absent: no promise, or not placed. */
  dueAt?: string | null;
  /** When the late sweep found the job past `dueAt` and not shipped (order-entries.ts). */
  lateAt?: string | null;
  /**
   * The scorecard day a late job is counted on as late now (CONTRACT.md §16.3, `lateNow`): set with
   * `lateAt`, removed once when the job ships or is cancelled (order-entries.ts).
   */
  lateNowDay?: string | null;
}

/** `dueAt` on the item: epoch seconds under two letters (the job item is near 1 KB, paid by every write). */
export const DUE_AT = 'du';
/** `lateAt` on the item. */
export const LATE_AT = 'lt';
/** `lateNowDay` on the item. */
export const LATE_NOW = 'ln';

/**
 * `tagged`'s attribute: two letters, as every byte of the job item is billed again by each of its
 * writes (docs/performance.md), and the completed job is close to 1 KB.
 */
export const TAGGED_ATTRIBUTE = 'tg';

/**
 * The claim of the call that cancels a placed job's supplier order (`{by, at}`: the SQS message id
 * that holds it and when it claimed; order-repository.ts `whenClaimable`), so two messages of one
 * cancellation (a second webhook's, a reconciler's) never both call the supplier; taken by
 * `claimCancelCall`, removed by the move that ends the cancellation.
 */
export const CANCEL_CALL = 'cc';

/** How an order reached the service: its webhook, or a poll (CONTRACT.md §10.7). */
export const RECEIVED_VIA = ['webhook', 'poll'] as const;
export type ReceivedVia = (typeof RECEIVED_VIA)[number];

export const CANCELLATION_STATUSES = ['requested', 'done', 'declined'] as const;

/** A cancellation of the job's order (CONTRACT.md §10.4–10.5), stored as is. */
export interface Cancellation {
  requestedBy: 'reseller' | 'source';
  status: (typeof CANCELLATION_STATUSES)[number];
  reason: string | null;
  requestedAt: string;
  endedAt: string | null;
}

/**
 * The order's fields an `orders/updated` changed, each as the JSON text it carried (absent:
 * unchanged since the order arrived), with its `updated_at`; `sentAt`: the version the supplier
 * order was last updated to. The stored order stays as it was signed; these are laid over it.
 * `keptAt`: when the service last sent the placed supplier order an update message (our clock: the
 * reconciler's lease runs from it), and `resends`: how many the reconciler sent since.
 */
export interface OrderEdits {
  updatedAt: string;
  email?: string;
  shippingAddress?: string;
  note?: string;
  noteAttributes?: string;
  sentAt?: string;
  keptAt?: string;
  resends?: number;
}

/**
 * A placed job whose supplier order was sent the reseller's latest edits and has not had them yet:
 * the reconciler watches it (GSI3's propagating set) until it has, or a person is asked to.
 */
export const updatePending = (job: Pick<SyncJob, 'status' | 'orderEdits' | 'sourceOrderId' | 'attention'>) =>
  job.status === 'completed' &&
  job.sourceOrderId !== null &&
  job.attention === null &&
  job.orderEdits?.keptAt !== undefined &&
  job.orderEdits.sentAt !== job.orderEdits.updatedAt;

/**
 * A completed job with a change of its supplier order on its way (a cancellation, an update): GSI3's
 * propagating set watches it as it watches its fulfillments, and it leaves only once none is.
 */
export const supplierOrderChangePending = (
  job: Pick<SyncJob, 'status' | 'orderEdits' | 'sourceOrderId' | 'attention' | 'cancellation'>,
) => job.cancellation?.status === 'requested' || updatePending(job);

export interface Attention {
  reason: string;
  since: string;
}

export interface SourceLine {
  id: string | null;
  price: string | null;
}

export type StoredOrder = { body: Uint8Array } | { parts: number } | { legacy: Record<string, unknown> };

/**
 * The job item's TTL attribute (the table's `timeToLiveAttribute`): set by every write that leaves a
 * job ended (a move into `completed`, `dead` or `cancelled`, or within them; a job created ended), to
 * that write's time + JOB_RETENTION_DAYS, in epoch seconds; removed by the move out of an ended state
 * (a manual retry). The job's history and its fulfillment entries live in the item and go with it.
 */
export const EXPIRES_AT = 'expiresAt';

/**
 * A completed job's completion time: its `updatedAt`, not stored apart (35 bytes of a job item that must
 * stay within 1 KB); the first move from `completed` (a cancellation's) copies it here first
 * (order-repository.ts), so a job cancelled after its completion keeps it. Items written before keep theirs.
 */
export const COMPLETED_AT = 'completedAt';

/** When a job that ended at `at` is removed by the table's TTL, in epoch seconds. */
export const jobExpiresAt = (at: string) => Math.floor(Date.parse(at) / 1000) + config.jobRetentionDays() * 86_400;

/** The expiry a job in `status` carries after a write at `at`: none while it has not ended. */
export const expiryOf = (status: SyncJobStatus, at: string) =>
  isEnded(status) ? { [EXPIRES_AT]: jobExpiresAt(at) } : {};

/** The attributes that have a value: an absent one reads as null, and costs no bytes. */
const present = (attributes: Record<string, string | null>) =>
  Object.fromEntries(Object.entries(attributes).filter(([, value]) => value !== null));

/**
 * A job's item: in its owner's list (GSI1) and in the indexes `indexChanges` gives a job created
 * in its state (a new job's: its store's list and the open jobs of GSI3; a seeded one's, those of
 * its state). The lookup keys (GSI2) come with the completion. Attributes without a
 * value (the null timestamps and error, `resends`, `waitUntil`, the history…) are not written: every
 * byte of the item is paid again by each of its writes (docs/performance.md).
 */
export const syncJobItem = (job: SyncJob): Item => ({
  ...syncJobKey(job.id),
  ...entityTagOf('job'),
  ...indexEntry('lists', lists.syncJobs(job.ownerId).of(job.id), listSortKey(job.createdAt, job.id)),
  ...indexChanges({ ...job, status: null }, job.status).set,
  // No `id`: the key holds it (jobIdOfPartition), and every byte of the item is paid again on each write.
  ownerId: job.ownerId,
  resellerStoreId: job.resellerStoreId,
  sourceStoreId: job.sourceStoreId,
  status: job.status,
  attempts: job.attempts,
  generation: job.generation,
  externalOrderId: job.externalOrderId,
  resellerShopDomain: job.resellerShopDomain,
  ...storedOrderAttributes(job.order),
  ...(job.vendorTag !== null ? { vendorTag: job.vendorTag } : {}),
  // The ids follow from the count (shared/core/ids.ts syncJobId), so the dedup record stays small; a
  // first job in its store's list of orders that is its order's only job needs no count.
  ...(job.orderJobIds && job.orderJobIds.length > 1 ? { orderJobCount: job.orderJobIds.length } : {}),
  // The first job is the order's record: in its store's list of orders (its list sort key is GSI1's).
  ...(job.orderJobIds ? indexEntry('resourceLists', lists.storeOrders(job.resellerStoreId).of(job.id)) : {}),
  ...(job.orderJobIds && job.receivedVia !== 'webhook' ? { receivedVia: job.receivedVia } : {}),
  ...(job.unroutedLines?.length ? { unroutedLines: unroutedLinesAttribute(job.unroutedLines) } : {}),
  ...(job.orderRouting ? { orderRouting: job.orderRouting } : {}),
  ...present({
    sourceOrderId: job.sourceOrderId,
    errorMessage: job.errorMessage,
    completedAt: job.completedAt,
    failedAt: job.failedAt,
    deadAt: job.deadAt,
    cancelledAt: job.cancelledAt,
  }),
  ...(job.cancellation ? { cancellation: job.cancellation } : {}),
  ...(job.attention ? { attention: job.attention } : {}),
  ...(job.orderEdits ? { orderEdits: job.orderEdits } : {}),
  createdAt: job.createdAt,
  updatedAt: job.updatedAt,
  ...(Object.keys(job.fulfillments).length ? { fulfillments: job.fulfillments } : {}),
  // Pairs, not maps: every byte of the job item is paid again by each of its writes.
  ...(job.sourceLines ? { sourceLines: sourceLinesAttribute(job.sourceLines) } : {}),
  ...(job.resends ? { resends: job.resends } : {}),
  ...(job.waitUntil ? { waitUntil: job.waitUntil } : {}),
  ...(job.throttledSince ? { throttledSince: job.throttledSince } : {}),
  ...(job.attemptLog.length ? { attemptLog: storedAttempts(job.attemptLog) } : {}),
  ...(job.redactedAt ? { redactedAt: job.redactedAt } : {}),
  ...(typeof job.tagged === 'boolean' ? { [TAGGED_ATTRIBUTE]: job.tagged } : {}),
  ...(job.afterSale ? { [AFTER_SALE]: afterSaleAttribute(job.afterSale) } : {}),
  ...(job.dueAt ? { [DUE_AT]: Math.floor(Date.parse(job.dueAt) / 1000) } : {}),
  ...(job.lateAt ? { [LATE_AT]: job.lateAt } : {}),
  ...(job.lateNowDay ? { [LATE_NOW]: job.lateNowDay } : {}),
  ...(job.hold && job.status === 'pending' ? { hold: job.hold, ...heldEntries(job) } : {}),
  ...expiryOf(job.status, job.updatedAt),
});

/** The state lists' name of held jobs: a pending job's own state has no list, so the held one takes its place. */
export const HELD_LIST = 'held';

/**
 * A held job's entries in its owner's and its store's list of held jobs (GSI5, GSI6: the state lists,
 * which a pending job does not use otherwise): `GET /v1/sync_jobs?held=true` reads only matches. The
 * release removes them; a move to another state removes or replaces them as for any state list.
 */
export const heldEntries = (job: Pick<SyncJob, 'id' | 'ownerId' | 'resellerStoreId'>) => ({
  ...indexEntry('stateLists', lists.syncJobsIn(job.ownerId, HELD_LIST).of(job.id)),
  ...indexEntry('storeStateLists', lists.storeSyncJobsIn(job.resellerStoreId, HELD_LIST).of(job.id)),
});

/** The lists' name of jobs owed credit (CONTRACT.md §15.3): `GET /v1/sync_jobs?credit_due=true` reads only these. */
export const CREDIT_DUE_LIST = 'credit_due';

/**
 * A job's entries in its owner's and store's list of jobs owed credit (GSI5, GSI6: the state lists,
 * which a completed job does not use otherwise), set and removed by its after-sale writes.
 */
export const creditDueEntries = (job: Pick<SyncJob, 'id' | 'ownerId' | 'resellerStoreId'>) => ({
  ...indexEntry('stateLists', lists.syncJobsIn(job.ownerId, CREDIT_DUE_LIST).of(job.id)),
  ...indexEntry('storeStateLists', lists.storeSyncJobsIn(job.resellerStoreId, CREDIT_DUE_LIST).of(job.id)),
});

export const syncJobFrom = (item: Item): SyncJob => {
  const read = attributes(item, 'sync job');
  return {
    id: syncJobIdOf(item),
    ownerId: read.string('ownerId'),
    resellerStoreId: read.string('resellerStoreId'),
    sourceStoreId: read.string('sourceStoreId'),
    status: read.oneOf('status', SYNC_JOB_STATUSES),
    attempts: read.number('attempts'),
    generation: read.number('generation'),
    externalOrderId: read.string('externalOrderId'),
    resellerShopDomain: read.stringOrNull('resellerShopDomain') ?? '',
    order: storedOrderFrom(item),
    vendorTag: read.stringOrNull('vendorTag'),
    orderJobIds: orderJobIdsFrom(item),
    orderRouting: item.orderRouting instanceof Uint8Array ? item.orderRouting : null,
    receivedVia: item.receivedVia === undefined ? 'webhook' : read.oneOf('receivedVia', RECEIVED_VIA),
    unroutedLines: unroutedLinesFrom(read.stringOrNull('unroutedLines')),
    sourceOrderId: read.stringOrNull('sourceOrderId'),
    errorMessage: read.stringOrNull('errorMessage'),
    completedAt: read.stringOrNull(COMPLETED_AT) ?? (item.status === 'completed' ? read.string('updatedAt') : null),
    failedAt: read.stringOrNull('failedAt'),
    deadAt: read.stringOrNull('deadAt'),
    cancelledAt: read.stringOrNull('cancelledAt'),
    cancellation: read.optionalObject<Cancellation>('cancellation') ?? null,
    attention: read.optionalObject<Attention>('attention') ?? null,
    orderEdits: read.optionalObject<OrderEdits>('orderEdits') ?? null,
    createdAt: read.string('createdAt'),
    updatedAt: read.string('updatedAt'),
    sourceLines: sourceLinesFrom(item),
    fulfillments: fulfillmentEntriesFrom(item),
    resends: item.resends === undefined ? 0 : read.number('resends'),
    waitUntil: read.stringOrNull('waitUntil'),
    throttledSince: read.stringOrNull('throttledSince'),
    attemptLog: attemptsFrom(read.optionalObject<NonNullable<Parameters<typeof attemptsFrom>[0]>>('attemptLog')),
    redactedAt: read.stringOrNull('redactedAt'),
    tagged: typeof item[TAGGED_ATTRIBUTE] === 'boolean' ? item[TAGGED_ATTRIBUTE] : null,
    hold: read.stringOrNull('status') === 'pending' ? (read.optionalObject<Hold>('hold') ?? null) : null,
    afterSale: afterSaleFrom(item[AFTER_SALE]),
    dueAt: typeof item[DUE_AT] === 'number' ? new Date(item[DUE_AT] * 1000).toISOString() : null,
    lateAt: read.stringOrNull(LATE_AT),
    lateNowDay: read.stringOrNull(LATE_NOW),
  };
};

// ---------- index entries
/**
 * The index attributes of a sync job item, and how each state move changes them: the one answer
 * to "which index entries does this write touch?". Job creation (shared/order-flow/receiving.ts) and every move
 * (order-repository.ts) take their index attributes from `indexChanges`, so no write can forget one.
 * The write budget of a completing order is in docs/performance.md.
 *
 * - For life, from creation: its owner's list (GSI1, whose keys `syncJobItem` writes) and its reseller
 *   store's list (GSI4, docs/design.md "Lists"). These keys never change, so no move rewrites those
 *   index entries.
 * - GSI3, open jobs (docs/design.md, "Reconciler"): a job that has not ended is in
 *   `OPEN#<shard of id>`, `<owner>#<createdAt>#<id>`. Its keys are set by the creating put, kept
 *   through pending and processing (claims and deferrals write nothing to the index), removed by
 *   the move to completed or dead, and set again by a manual retry. A failed job waits apart, in
 *   `FAILED#<shard of id>` (same sort key), so that an owner's pending and processing jobs are
 *   one range for their lists (docs/design.md, "Lists"); the move back (a claim, a re-send, a
 *   retry) copies the partition from `openPK`, which the job keeps while open: the claim moves a job
 *   it has not read, and with a copy it needs no key values. DynamoDB writes an index entry only
 *   when its keys change, so setting them to what they are costs nothing.
 * - While `failed` or `dead`: its owner's and its store's list of that state (GSI5, GSI6). These
 *   states are rare and off the happy path, so only failure paths and the moves out of them (a
 *   claim after a failure, a manual retry) write these entries.
 */

/** What the index rules read of a job; `status` is null for a job being created. */
export type IndexedJob = Pick<SyncJob, 'id' | 'ownerId' | 'resellerStoreId' | 'createdAt'> & {
  status: SyncJobStatus | null;
};

export interface IndexChanges {
  /** Index attributes to set, with their values. */
  set: { [A in JobIndexAttribute]?: string };
  /** Index attributes to remove. */
  remove: JobIndexAttribute[];
  /** Index attributes to set to the value another attribute of the item has: target → source. */
  copy?: { [A in JobIndexAttribute]?: JobIndexAttribute };
}

/** An open job's own GSI3 partition, kept so a move that has not read the job can go back to it. */
export const OPEN_PK = 'openPK';

/** The index keys a job item carries, and `openPK`, which a claim copies into one. */
export type JobIndexAttribute = IndexAttribute | typeof OPEN_PK;

/** The job item's attributes besides the record's own names: its index keys and the short names kept beside them. */
export type JobEntryAttribute =
  | JobIndexAttribute
  | typeof EXPIRES_AT
  | typeof DUE_AT
  | typeof LATE_AT
  | typeof TAGGED_ATTRIBUTE
  | typeof CANCEL_CALL
  | typeof AFTER_SALE;

/**
 * An attribute of the job item by name, typed against the record: a field of `SyncJob` kept under
 * its own name (a field renamed there fails to compile wherever a write names it), or an entry's.
 */
export type JobAttribute = keyof SyncJob | JobEntryAttribute;
const IN_FLIGHT = indexKeyNames('inFlight');

const openEntry = (job: IndexedJob) => ({
  ...indexEntry('inFlight', inFlight.open.partition(job.id), inFlight.sortKey(job.ownerId, job.createdAt, job.id)),
  [OPEN_PK]: inFlight.open.partition(job.id),
});

/** The states with a list of their own. */
export const LISTED_STATES = ['failed', 'dead', 'cancelled'] as const satisfies readonly SyncJobStatus[];
type ListedState = (typeof LISTED_STATES)[number];

export const isListedState = (status: SyncJobStatus): status is ListedState =>
  (LISTED_STATES as readonly SyncJobStatus[]).includes(status);

export const STATE_LISTS = [INDEX_KEYS.stateLists.pk, INDEX_KEYS.storeStateLists.pk];

/**
 * The index attributes to set and remove when `job` (in its current status) moves to `to`. A
 * move out of a listed state removes the state lists' keys whatever state it starts from (removing
 * an attribute the item does not have costs no index write), so a move made without reading the
 * job (the claim) gets the same changes from each state it may start from.
 */
export const indexChanges = (job: IndexedJob, to: SyncJobStatus): IndexChanges => {
  const changes: IndexChanges = { set: {}, remove: [] };
  const wasOpen = job.status !== null && isOpen(job.status);
  if (isOpen(to) && !wasOpen) Object.assign(changes.set, openEntry(job));
  if (!isOpen(to) && wasOpen) changes.remove.push(...IN_FLIGHT, OPEN_PK);
  if (to === 'failed') Object.assign(changes.set, indexEntry('inFlight', inFlight.failed.partition(job.id)));
  else if (isOpen(to) && wasOpen) changes.copy = { [INDEX_KEYS.inFlight.pk]: OPEN_PK };
  if (job.status === null)
    Object.assign(changes.set, indexEntry('storeLists', lists.storeSyncJobs(job.resellerStoreId).of(job.id)));
  if (isListedState(to)) {
    Object.assign(
      changes.set,
      indexEntry('stateLists', lists.syncJobsIn(job.ownerId, to).of(job.id)),
      indexEntry('storeStateLists', lists.storeSyncJobsIn(job.resellerStoreId, to).of(job.id)),
    );
  } else if (job.status !== null) changes.remove.push(...STATE_LISTS);
  return changes;
};

/**
 * GSI3, completed jobs propagating a fulfillment: a completed job is in `PROPAGATING#<shard of
 * id>` while one of its fulfillment entries is `pending` or `failed`, so the reconciler finds an
 * entry whose message was lost. Never while the job is open: a job records fulfillments only
 * once it is completed, and completed is final.
 */
export const propagationIndex = (
  job: Pick<SyncJob, 'id' | 'ownerId' | 'createdAt'>,
  propagating: boolean,
): IndexChanges =>
  propagating
    ? {
        set: indexEntry(
          'inFlight',
          inFlight.propagating.partition(job.id),
          inFlight.sortKey(job.ownerId, job.createdAt, job.id),
        ),
        remove: [],
      }
    : { set: {}, remove: [...IN_FLIGHT] };

/**
 * GSI2, a completed job's lookup by its supplier order: written by the completion (placing.ts), which
 * is final, so the job keeps it for life.
 */
export const lookupEntry = (job: Pick<SyncJob, 'id' | 'sourceStoreId'>, sourceOrderId: string) =>
  indexEntry('lookups', lookups.sourceOrder(job.sourceStoreId, sourceOrderId), lookups.sourceOrderJob(job.id));

/**
 * Every index attribute a job item in its state has: those of a job created in that state (its
 * lists; GSI3's open or failed set; its state's lists), the propagating set while a fulfillment of
 * a completed job is on its way, and the lookup by supplier order of a completed job. The moves that
 * led to the state give the same: a move changes what `indexChanges` says between two states.
 * The index backfill (shared/backfill) compares an item with this.
 */
/** Every attribute of a job item that is an index key, and `openPK`, which a claim copies into one. */
export const JOB_INDEX_ATTRIBUTES: readonly string[] = [...INDEX_ATTRIBUTES, OPEN_PK];

export const syncJobIndexEntries = (job: SyncJob): Record<string, string> => {
  const completed = job.status === 'completed';
  const propagating = completed && Object.values(job.fulfillments).some(isPropagating);
  const item = syncJobItem(job);
  const created = Object.fromEntries(
    Object.entries(item).filter(
      (entry): entry is [string, string] => JOB_INDEX_ATTRIBUTES.includes(entry[0]) && typeof entry[1] === 'string',
    ),
  );
  return {
    ...created,
    ...(propagating ? propagationIndex(job, true).set : {}),
    ...(completed && job.sourceOrderId !== null ? lookupEntry(job, job.sourceOrderId) : {}),
  };
};

/**
 * A wait's or a stall's attributes (re-sends, its end, a throttled run), on the job and on each of
 * its fulfillment entries alike: dropped when the work item ends, starts over or makes progress.
 */
export const WAIT_ATTRIBUTES: readonly (keyof SyncJob & keyof FulfillmentEntry)[] = [
  'resends',
  'waitUntil',
  'throttledSince',
];

/** What every log line about a job carries once the job is read. */
export const jobLogContext = (job: Pick<SyncJob, 'id' | 'resellerStoreId' | 'externalOrderId'>) => ({
  jobId: job.id,
  resellerStoreId: job.resellerStoreId,
  externalOrderId: job.externalOrderId,
});

// ---------- ids

/**
 * The id of a job item, or of its index entry (every index carries the table's keys): its key's.
 * Items written before the key alone held it carry `id` too, the same.
 */
export const syncJobIdOf = (item: Item) => {
  const read = attributes(item, 'sync job');
  return typeof item.id === 'string' ? item.id : jobIdOfPartition({ PK: read.string('PK'), SK: read.string('SK') });
};

const storedOrderAttributes = (order: StoredOrder | null): Item => {
  if (!order) return {};
  if ('body' in order) return { orderBody: order.body };
  if ('parts' in order) return { orderBodyParts: order.parts };
  return { order: order.legacy };
};

const storedOrderFrom = (item: Item): StoredOrder | null => {
  const read = attributes(item, 'sync job');
  if (item.orderBody instanceof Uint8Array) return { body: item.orderBody };
  if (item.orderBodyParts !== undefined) return { parts: read.number('orderBodyParts') };
  const legacy = read.optionalObject<Record<string, unknown>>('order');
  return legacy ? { legacy } : null;
};

/** Every job id of the order, on its first job: derived from the count, or as older code listed them. */
const orderJobIdsFrom = (item: Item): string[] | null => {
  const read = attributes(item, 'sync job');
  // The order's only job: its own id (it is in its store's list of orders, so it is a first job).
  if (item.orderJobCount === undefined && item[INDEX_KEYS.resourceLists.pk] !== undefined) return [syncJobIdOf(item)];
  if (item.orderJobCount !== undefined) {
    const [resellerStoreId, externalOrderId] = [read.string('resellerStoreId'), read.string('externalOrderId')];
    return Array.from({ length: read.number('orderJobCount') }, (_, n) =>
      syncJobId(resellerStoreId, externalOrderId, n),
    );
  }
  return read.optionalObject<string[]>('orderJobIds') ?? null;
};

/** The stored pairs `[id, price]` of a placed job's lines. */
const sourceLinesFrom = (item: Item): SourceLine[] | null => {
  const pairs = attributes(item, 'sync job').optionalObject<unknown[]>('sourceLines');
  if (!pairs) return null;
  const text = (value: unknown) => (typeof value === 'string' ? value : null);
  return pairs.map((pair) =>
    Array.isArray(pair) ? { id: text(pair[0]), price: text(pair[1]) } : { id: null, price: null },
  );
};

/** The attribute a completion writes for the lines it placed (placing.ts). */
export const sourceLinesAttribute = (lines: SourceLine[]) => lines.map((line) => [line.id, line.price]);

/**
 * The unrouted order entity (CONTRACT.md §10.8): the record of an order none of whose items routes
 * to a supplier, which has no job to be its record. It is kept where the order's first job would
 * be (that key is the order's dedup record: a redelivery's conditional put finds it), with the
 * order's body as the first job would keep it (inline, or in parts beside it: order-repository.ts), and
 * carries the order's entry in its store's list of orders. Also here: the mark of any order with
 * unrouted items (an item of the order's partition), whose entry in its store's list of such orders
 * names the order's record (shared/dynamo/keys.ts `orderRecordKeyOf`).
 */
export interface UnroutedOrder {
  firstJobId: string;
  ownerId: string;
  resellerStoreId: string;
  externalOrderId: string;
  receivedAt: string;
  receivedVia: 'webhook' | 'poll';
  /** Every item of the order, with why it went to no supplier. */
  unroutedLines: UnroutedLine[];
  /** When the reseller cancelled the order (`orders/cancelled`); null: not cancelled. */
  cancelledAt: string | null;
  /** The order's compressed raw body inline, or the number of its parts (order-repository.ts). */
  order: { body: Uint8Array } | { parts: number };
  /** When the shopper's personal data was erased from the kept order (order-redaction.ts); null: not. */
  redactedAt?: string | null;
}

/**
 * The record's end (the table's TTL): an order with no job has nothing left to do once received, so it is
 * kept as a job that ended then is, JOB_RETENTION_DAYS (issue 44); its mark and body parts go with it.
 */
export const unroutedOrderExpiresAt = (receivedAt: string) => jobExpiresAt(receivedAt);

/** When the order was received (items written before the entity tag also told this kind apart by it). */
const MARK = 'unroutedOrderAt';

export const unroutedOrderItem = (order: UnroutedOrder): Item => ({
  ...keys.syncJob(order.firstJobId),
  ...entityTagOf('unroutedOrder'),
  ...indexEntry(
    'resourceLists',
    lists.storeOrders(order.resellerStoreId).of(order.firstJobId),
    listSortKey(order.receivedAt, order.firstJobId),
  ),
  [MARK]: order.receivedAt,
  ownerId: order.ownerId,
  resellerStoreId: order.resellerStoreId,
  externalOrderId: order.externalOrderId,
  ...(order.receivedVia === 'webhook' ? {} : { receivedVia: order.receivedVia }),
  unroutedLines: unroutedLinesAttribute(order.unroutedLines),
  ...(order.cancelledAt === null ? {} : { cancelledAt: order.cancelledAt }),
  ...('body' in order.order ? { orderBody: order.order.body } : { orderBodyParts: order.order.parts }),
  ...(order.redactedAt ? { redactedAt: order.redactedAt } : {}),
  [EXPIRES_AT]: unroutedOrderExpiresAt(order.receivedAt),
});

export const unroutedOrderFrom = (firstJobId: string, item: Item): UnroutedOrder => {
  const read = attributes(item, 'unrouted order');
  return {
    firstJobId,
    ownerId: read.string('ownerId'),
    resellerStoreId: read.string('resellerStoreId'),
    externalOrderId: read.string('externalOrderId'),
    receivedAt: read.string(MARK),
    receivedVia: item.receivedVia === undefined ? 'webhook' : read.oneOf('receivedVia', ['webhook', 'poll'] as const),
    unroutedLines: unroutedLinesFrom(read.stringOrNull('unroutedLines')) ?? [],
    cancelledAt: read.stringOrNull('cancelledAt'),
    order: item.orderBody instanceof Uint8Array ? { body: item.orderBody } : { parts: read.number('orderBodyParts') },
    redactedAt: read.stringOrNull('redactedAt'),
  };
};

/** The condition of a write to the record itself (its erasure: order-redaction.ts). */
export const UNROUTED_ORDER_EXISTS = `attribute_exists(${MARK})`;

/** The update that records the order's cancellation at `at`, once: a redelivery keeps the first time. */
export const unroutedOrderCancellation = (at: string) => ({
  UpdateExpression: 'SET cancelledAt = :at',
  ConditionExpression: `attribute_exists(${MARK}) AND attribute_not_exists(cancelledAt)`,
  ExpressionAttributeValues: { ':at': at },
});

/**
 * The mark of an order with unrouted items: its entry in its store's list of those orders, sorted as
 * the order's own entry. Written once with the order's record; its `expiresAt` (the table's TTL) with it
 * for an unrouted order, or by the retention sweep once a routed order's jobs ended (order-redaction.ts).
 */
export const unroutedOrderMarkItem = (mark: {
  firstJobId: string;
  resellerStoreId: string;
  receivedAt: string;
  expiresAt?: number;
}): Item => ({
  ...keys.unroutedOrderMark(mark.firstJobId),
  ...entityTagOf('unroutedMark'),
  ...indexEntry(
    'resourceLists',
    lists.storeUnroutedOrders(mark.resellerStoreId).of(mark.firstJobId),
    listSortKey(mark.receivedAt, mark.firstJobId),
  ),
  ...(mark.expiresAt === undefined ? {} : { [EXPIRES_AT]: mark.expiresAt }),
});

// ---------- unrouted lines, as this record and the first job of an order keep them

/** One letter per reason: every byte of the first job is paid again by each of its writes. */
const REASON_LETTERS = { no_source_store: 's', no_vendor: 'v', gift_card: 'g', test_order: 't' } as const;

/** `<position><letter>,…`: `3s,5g` is line 3 (no source store) and line 5 (a gift card). */
export const unroutedLinesAttribute = (lines: UnroutedLine[]) =>
  lines.map((line) => `${line.position}${REASON_LETTERS[line.reason]}`).join(',');

export const unroutedLinesFrom = (text: string | null): UnroutedLine[] | null => {
  if (!text) return null;
  return text.split(',').map((entry) => {
    const reason = UNROUTED_REASONS.find((r) => REASON_LETTERS[r] === entry.slice(-1));
    const position = Number(entry.slice(0, -1));
    if (!reason || !Number.isInteger(position)) throw new Error(`unreadable unrouted line '${entry}'`);
    return { position, reason };
  });
};
