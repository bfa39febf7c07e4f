import { brotliCompressSync, brotliDecompressSync, constants } from 'node:zlib';
import { Met } from '../core/concurrency.js';
import { now, syncJobId } from '../core/ids.js';
import {
  isEnded,
  type JsonText,
  type OrderReading,
  type ResellerLineItem,
  readResellerOrder,
  type SyncJobStatus,
} from '../domain/orders.js';
import { itemsOfVendorTag } from '../domain/routing.js';
import { jobIdOfPartition, keys, lookups } from '../dynamo/keys.js';
import {
  batchGet,
  ConditionFailed,
  getItem,
  type Item,
  keyOf,
  putIf,
  queryIndex,
  queryPartition,
  TABLE,
  transactIf,
  UpdateBuilder,
  updateIf,
} from '../dynamo/table.js';
import { AFTER_SALE, type AfterSale, afterSaleAttribute } from './order-after-sale.js';
import {
  EARLY_KEEP_SECONDS,
  type EarlyAfterSale,
  keepEarlyAfterSaleUpdate,
  type OrderCancellation,
  type OrderItem,
  type OrderRecord,
  orderCancellationItem,
  orderItemFrom,
  orderRecordFrom,
  REPLACES_KEPT_AFTER_SALE,
  REPLACES_ORDER_CANCELLATION,
  syncJobOrNothing,
} from './order-items.js';
import {
  CANCEL_CALL,
  COMPLETED_AT,
  creditDueEntries,
  EXPIRES_AT,
  entityTagOf,
  expiryOf,
  type FulfillmentEntry,
  type FulfillmentStatus,
  type IndexChanges,
  type IndexedJob,
  indexChanges,
  isListedState,
  type JobAttribute,
  type JobEntryAttribute,
  type OrderEdits,
  propagationIndex,
  STATE_LISTS,
  type StoredOrder,
  type SyncJob,
  type sourceLinesAttribute,
  type storedAttempts,
  syncJobFrom,
  syncJobIdOf,
  syncJobItem,
  syncJobKey,
  unroutedOrderCancellation,
} from './order-sync-job.js';

/**
 * The sync job's state machine, as data (SPEC 3.1, CONTRACT.md §6, docs/design.md): every move,
 * the states it may start from, the state it ends in, and whether it sends the job a new message.
 * Every conditional update of a job is built from this table by `moveUpdate`, so "which moves are
 * legal?" has one answer, here. Its fulfillment entries' moves are the same table's other half
 * (`ENTRY_MOVES`), and every update of the job item, a move of the job or of an entry, is built by
 * the one `JobUpdate` below.
 *
 * Generations: a job's messages carry its `generation`, and every move is conditional on it. A
 * move that sends a fresh message (`newMessage`) takes the next generation, which makes every
 * older message of the job stale: a job has at most one live message.
 */
/**
 * What the flow does once a move is written (placing.ts runs them, from there alone):
 * `releaseKeptFulfillments`, the fulfillments that arrived before the job's supplier order was known
 * sent on (propagating.ts); `requestTag`, the reseller order's routed tag: tried before the move's write, which
 * records it, and asked for by message when that try did not do (tagging.ts).
 */
export type FollowUp = 'releaseKeptFulfillments' | 'requestTag';

export interface MoveRule {
  /** The states the move may start from; empty for the creation, which starts from nothing. */
  from: readonly SyncJobStatus[];
  to: SyncJobStatus;
  /** The move is followed by a fresh message to the worker, under the next generation. */
  newMessage: boolean;
  /** The move never takes a held job (CONTRACT.md §11): its condition says the job has no `hold`. */
  unheld?: true;
  /** The move ends the job's hold, whatever it was (a release, a cancellation's flag): `hold` and its lists removed. */
  endsHold?: true;
  /** What follows the move once written, in this order (`FollowUp`). */
  after?: readonly FollowUp[];
}

/** A job's supplier order known at last: its kept fulfillments go on, and its reseller order is tagged. */
const PLACED: readonly FollowUp[] = ['releaseKeptFulfillments', 'requestTag'];

/** Who makes each move, and when, is in the comments (docs/design.md has the same table). */
const JOB_MOVES = {
  /** Orders webhook: one job per supplier of an order. */
  create: { from: [], to: 'pending', newMessage: true },
  /** Worker, on receiving the message (attempts + 1); `processing` too: a worker that died mid-job left it so. */
  claim: { from: ['pending', 'processing', 'failed'], to: 'processing', newMessage: false, unheld: true },
  /** Worker: the supplier placed the order. */
  complete: { from: ['processing'], to: 'completed', newMessage: false, after: PLACED },
  /** Worker: a failure that may heal; the same message comes back after a growing delay. */
  fail: { from: ['processing'], to: 'failed', newMessage: false },
  /** Worker: the supplier answered 429; a fresh message waits for Retry-After. */
  defer: { from: ['processing'], to: 'pending', newMessage: true },
  /** Worker, DLQ handler or reconciler: an unknown outcome looked up, and the supplier has the order. */
  found: { from: ['pending', 'processing', 'failed'], to: 'completed', newMessage: false, after: PLACED },
  /**
   * Worker (refused, throttled too long, order unplaceable, source store gone), DLQ handler (receives
   * used up), reconciler (no progress).
   */
  kill: { from: ['pending', 'processing', 'failed'], to: 'dead', newMessage: false },
  /** POST /v1/sync_jobs/{id}/retry. */
  retry: { from: ['failed', 'dead'], to: 'pending', newMessage: true },
  /** Reconciler: the job stayed past its lease, its message presumed lost. */
  resend: { from: ['pending', 'processing', 'failed'], to: 'pending', newMessage: true, unheld: true },
  /**
   * Orders webhook (`orders/cancelled`) for a job with no supplier order, nor any on its way; worker,
   * for a job whose cancellation was requested, once it knows nothing was placed (CONTRACT.md §10.4).
   */
  cancel: { from: ['pending', 'processing', 'failed', 'dead'], to: 'cancelled', newMessage: false },
  /** Orders webhook: a cancellation of a job whose attempt is under way; the worker ends it. */
  flagCancel: { from: ['processing'], to: 'processing', newMessage: false },
  /** Orders webhook: a cancellation of a job an earlier attempt may have placed; its worker looks it up. */
  flagResend: { from: ['pending', 'failed'], to: 'pending', newMessage: true, endsHold: true },
  /**
   * A hold set or changed (CONTRACT.md §11): an operator's `POST …/hold`, or a held job judged again
   * with reasons left. No message: a held job has none that would place it (the claim refuses it).
   */
  hold: { from: ['pending'], to: 'pending', newMessage: false },
  /** A held job released (its delay over and nothing else holding it, a lift, an operator): it goes on at once. */
  release: { from: ['pending'], to: 'pending', newMessage: true, endsHold: true },
  /** Orders webhook (or the worker, for a flagged job it placed): the supplier order is to be cancelled. */
  requestCancel: { from: ['completed'], to: 'completed', newMessage: true },
  /** Worker: the supplier cancelled its order; or the supplier's own `orders/cancelled`. */
  cancelPlaced: { from: ['completed'], to: 'cancelled', newMessage: false },
  /** Worker: the supplier refused to cancel (it has shipped, 422): the job stays completed. */
  declineCancel: { from: ['completed'], to: 'completed', newMessage: false },
} as const satisfies Record<string, MoveRule>;

/**
 * A fulfillment entry's moves (docs/propagation.md), as the sync job's are (`MOVES`, above:
 * the other half of one table): the states each may start from (`null`: no entry yet) and
 * the one it ends in (`null`: it stays). A move asked of an entry in any other state writes
 * nothing. `delivered` moves on only by what the supplier says next (new tracking, a cancellation):
 * a late or duplicate message never undoes a `delivered` entry; `ignored` and `cancelled` are final.
 */
export interface EntryMoveRule {
  from: readonly (FulfillmentStatus | null)[];
  to: FulfillmentStatus | null;
}

const FULFILLMENT_ENTRY_MOVES = {
  /**
   * Fulfillments webhook (create or update), or a kept fulfillment released: a new entry, a
   * redelivery that re-arms one not delivered yet, an update with new tracking or a cancellation.
   */
  accept: { from: [null, 'pending', 'failed', 'dead', 'delivered'], to: 'pending' },
  /** Fulfillments webhook: a new parcel with nothing of the job left to ship; final. */
  ignore: { from: [null], to: 'ignored' },
  /** Worker: the reseller's platform has the fulfillment. */
  deliver: { from: ['pending', 'failed', 'dead'], to: 'delivered' },
  /** Worker: a failure that may heal; SQS brings the message back. */
  fail: { from: ['pending', 'failed', 'dead'], to: 'failed' },
  /** Worker (refused, throttled past the budget), DLQ handler (receives used up), reconciler. */
  kill: { from: ['pending', 'failed', 'dead'], to: 'dead' },
  /** Worker: the reseller's platform answered 429; the entry waits for its fresh message. */
  defer: { from: ['pending', 'failed', 'dead'], to: null },
  /** Reconciler: the entry stayed past its lease, its message presumed lost. */
  resend: { from: ['pending', 'failed'], to: 'pending' },
  /** Worker: the supplier voided the parcel, and the reseller's fulfillment of it is cancelled; final. */
  cancel: { from: ['pending', 'failed', 'dead'], to: 'cancelled' },
} as const satisfies Record<string, EntryMoveRule>;

/**
 * The one transition table of the job item: the job's moves and its fulfillment entries' (two work
 * items that share one item, and so one update builder and one re-read loop: order-repository.ts).
 */
export const TRANSITIONS = { job: JOB_MOVES, entry: FULFILLMENT_ENTRY_MOVES } as const;

export const MOVES = TRANSITIONS.job;
export const ENTRY_MOVES = TRANSITIONS.entry;

export type EntryMove = keyof typeof ENTRY_MOVES;

/** Whether `move` may start from an entry in `status` (undefined: the job has no such entry). */
export const canMoveEntry = (move: EntryMove, status: FulfillmentStatus | undefined) =>
  (ENTRY_MOVES[move].from as readonly (FulfillmentStatus | null)[]).includes(status ?? null);

export type MoveName = Exclude<keyof typeof MOVES, 'create'>;

/** The job as the mover last read it (its `status` is where the move starts), or only its message. */
export type MovingJob = (IndexedJob & { status: SyncJobStatus; generation: number }) | JobRef;

/** A job known only by its message (the claim, which reads it by moving it). */
export interface JobRef {
  id: string;
  generation: number;
  status?: undefined;
}

/**
 * What a move sets on the job item by name, typed against the record: fields of `SyncJob` kept under
 * their own names (a field renamed there fails to compile in every move that sets it), and the two it
 * keeps in a shorter form (the history's entries, the lines' pairs).
 */
export type JobFieldsSet = Partial<
  Pick<
    SyncJob,
    | 'sourceOrderId'
    | 'errorMessage'
    | 'failedAt'
    | 'deadAt'
    | 'cancelledAt'
    | 'cancellation'
    | 'attention'
    | 'waitUntil'
    | 'throttledSince'
    | 'hold'
  >
> & {
  attemptLog?: ReturnType<typeof storedAttempts>;
  sourceLines?: ReturnType<typeof sourceLinesAttribute>;
};

/** The job's numeric fields: what a move may increase. */
type NumericJobField = { [F in keyof SyncJob]-?: SyncJob[F] extends number ? F : never }[keyof SyncJob];

export interface MoveRequest {
  move: MoveName;
  job: MovingJob;
  /** The move's time: `updatedAt`. */
  at: string;
  /** The job's fields to set besides the status, `updatedAt`, the generation and the index keys. */
  set?: JobFieldsSet;
  /** Attributes the entity modules compose (index entries, the due time, `tagged`): never named by hand. */
  entries?: { [A in JobEntryAttribute]?: string | number | boolean };
  /** Numeric fields to increase (absent counts as 0). */
  add?: { [F in NumericJobField]?: number };
  /** Attributes to remove, typed against the record as `set` is. */
  remove?: readonly JobAttribute[];
}

/** The parts of an UpdateItem for one move, without the table name (the caller's adapter adds it). */
export interface MoveUpdate {
  Key: { PK: string; SK: string };
  UpdateExpression: string;
  ConditionExpression: string;
  ExpressionAttributeNames: Record<string, string>;
  ExpressionAttributeValues: Record<string, unknown>;
  /** The generation the job has after the move: the one its next message must carry. */
  generation: number;
}

export class IllegalMoveError extends Error {
  override readonly name = 'IllegalMoveError';
}

/**
 * The index changes of a move. A job known only by its message may be in any of the move's
 * from-states, so the move must change the indexes the same way from each of them, and set no key
 * (it does not know the key values); otherwise the mover has to read the job first.
 */
const movesIndexes = (rule: MoveRule, job: MovingJob): IndexChanges => {
  if (job.status !== undefined) return indexChanges(job, rule.to);
  const unknown = { id: job.id, ownerId: '', resellerStoreId: '', createdAt: '' };
  const each = rule.from.map((status) => indexChanges({ ...unknown, status }, rule.to));
  const first = JSON.stringify(each[0]);
  if (Object.keys(each[0].set).length || each.some((changes) => JSON.stringify(changes) !== first))
    throw new IllegalMoveError(`a job must be read before it can move to ${rule.to}: its index keys may change`);
  return each[0];
};

/**
 * The conditional UpdateItem of a move: the status goes to the move's target, `updatedAt` to `at`,
 * the generation up by one for a move that sends a new message, and the index keys as
 * `indexChanges` says. The condition: the generation the mover holds, and the status it read
 * (or, for a job known only by its message, any of the move's from-states).
 */
export const moveUpdate = (request: MoveRequest): MoveUpdate => {
  const rule: MoveRule = MOVES[request.move];
  const { job } = request;
  if (job.status !== undefined && !rule.from.includes(job.status))
    throw new IllegalMoveError(`${request.move} cannot move a ${job.status} job`);
  const index = movesIndexes(rule, job);
  const generation = rule.newMessage ? job.generation + 1 : job.generation;
  const setting = { ...request.entries, ...request.set };

  const update = new JobUpdate().setAttributes({
    status: rule.to,
    updatedAt: request.at,
    ...(rule.newMessage ? { generation } : {}),
    ...index.set,
    // The table's TTL: an ended job is kept JOB_RETENTION_DAYS after its last move (order-sync-job.ts).
    ...expiryOf(rule.to, request.at),
    ...setting,
  });
  // A move from `completed` keeps the completion's time, which a completed job holds as its `updatedAt`
  // only (order-sync-job.ts `COMPLETED_AT`): the operands are read before the update, so this is the old one.
  if ((rule.from as readonly SyncJobStatus[]).includes('completed') && !(COMPLETED_AT in setting)) {
    const completedAt = update.name(COMPLETED_AT);
    update.setTo(completedAt, `if_not_exists(${completedAt}, ${update.name('updatedAt')})`);
  }
  // An item written before it kept `openPK` keeps the partition it has.
  for (const [attribute, source] of Object.entries(index.copy ?? {}))
    update.setTo(update.name(attribute), `if_not_exists(${update.name(source)}, ${update.name(attribute)})`);
  for (const [attribute, by] of Object.entries(request.add ?? {})) {
    const n = update.name(attribute);
    update.setTo(n, `if_not_exists(${n}, ${update.value('zero', 0)}) + ${update.value(`add_${attribute}`, by)}`);
  }
  // Every other state has no hold: a move out of pending, or one that ends the hold, drops it (an absent
  // attribute costs nothing); a job still pending leaves its lists of held jobs too.
  const endsHold = rule.endsHold || (rule.to !== 'pending' && !rule.unheld);
  const dropsHold = endsHold ? ['hold', ...(rule.to === 'pending' ? STATE_LISTS : [])] : [];
  // A move out of an ended state (a retry) takes the job's expiry off: it is at work again.
  const revives = !isEnded(rule.to) && rule.from.some(isEnded) ? [EXPIRES_AT] : [];
  const removed = [...new Set([...index.remove, ...(request.remove ?? []), ...dropsHold, ...revives])];
  update.remove(...removed.filter((attribute) => !(attribute in setting)).map((a) => update.name(a)));
  if (rule.unheld) update.when(`attribute_not_exists(${update.name('hold')})`);

  update.when(`${update.name('generation')} = ${update.value('expectedGeneration', job.generation)}`);
  update.when(
    job.status !== undefined
      ? `${update.name('status')} = ${update.value('from', job.status)}`
      : `${update.name('status')} IN (${rule.from.map((status, i) => update.value(`from${i}`, status)).join(', ')})`,
  );
  const { ConditionExpression = '', ...parts } = update.build(syncJobKey(job.id));
  return { ...parts, ConditionExpression, generation };
};

/** `T` when it names attributes of the job item only, by name: never for a string index or another name. */
type OfJobItem<T> = string extends keyof T ? never : Exclude<keyof T, JobAttribute> extends never ? T : never;

/**
 * The one update builder of the job item (the table's UpdateBuilder, dynamo/table.ts), for a move
 * of the job (`moveUpdate`) and of one of its entries: `#fid` names the entry an update is about,
 * `#<field>` its fields, `#f1`, `#f2`… other entries of the job. `sourceFulfillmentId` undefined:
 * an update of the job alone, which names no `fulfillments` (DynamoDB refuses unused names).
 */
export class JobUpdate extends UpdateBuilder {
  constructor(readonly sourceFulfillmentId?: string) {
    super();
    if (sourceFulfillmentId !== undefined) this.name('fulfillments');
  }

  /** An update about the job's entries as a whole (no one entry): `#fulfillments` declared. */
  static ofEntries() {
    return new JobUpdate('');
  }

  /** `#fulfillments.#fid`: the entry the update is about (named only when used: DynamoDB refuses unused names). */
  get path() {
    return `#fulfillments.${this.name(this.sourceFulfillmentId ?? '', '#fid')}`;
  }

  /**
   * `#<attribute> = :<attribute>` for each, typed against the job item: a renamed field fails to
   * compile, and so does a loose `Record<string, unknown>` spread in (its string index names any field).
   */
  override setAttributes<T extends { [A in JobAttribute]?: unknown }>(attributes: T & OfJobItem<T>) {
    return super.setAttributes(attributes);
  }

  /** `<entry>.#<field>` */
  field(field: keyof FulfillmentEntry) {
    return `${this.path}.${this.name(field)}`;
  }

  /** `#fulfillments.#fN` for another entry of the job. */
  other(sourceFulfillmentId: string) {
    return `#fulfillments.${this.name(sourceFulfillmentId, `#f${Object.keys(this.names).length}`)}`;
  }

  /** `<entry>.#<field> = :<field>` for each field, typed against the entry (a renamed field fails to compile). */
  setFields(fields: Partial<FulfillmentEntry>) {
    for (const [field, v] of Object.entries(fields)) this.set(this.field(field as keyof FulfillmentEntry), field, v);
    return this;
  }

  /** The UpdateItem's parts for the job's item. */
  of(jobId: string) {
    return this.build(syncJobKey(jobId));
  }

  /** The same, as an item of a transaction. */
  inTransaction(jobId: string) {
    return { Update: { TableName: TABLE(), ...this.of(jobId) } };
  }
}

/**
 * The order body entity: how an accepted order is kept (docs/hostile-input.md, "Storing an
 * order"): the raw webhook body, exactly the bytes that were signed, brotli-compressed into binary
 * attributes. Any valid JSON up
 * to 1 MiB fits (exact numbers, any depth, any keys), where a DynamoDB map could not hold a number
 * past 38 digits, 32 levels of nesting, or an empty key in older SDKs.
 *
 * A small body (the usual order) sits inline on each job's item, which stays under 1 KB and so costs
 * one write unit per update. A larger one is stored once, in parts of at most PART_BYTES beside the
 * order's first job, because every later update of a job is billed by the job item's size.
 */

/** Each part's bytes: the 400 KB item limit with room for the key and attribute names. */
export const PART_BYTES = 350_000;

/**
 * The size a new job item may reach with the body inline; above it the body goes to parts. Completion
 * adds about 110 bytes (the supplier order id, its lookup keys, the time, the attempt's history entry,
 * less the open-jobs index keys and `openPK` it removes), so a job stays within 1 KB: one write unit
 * per update.
 */
export const INLINE_ITEM_BUDGET = 880;

/**
 * Quality 11 is the densest, which the job item's size needs (docs/performance.md, "Where an order's
 * time goes": quality 5 would save the webhook 5–12 ms of CPU per order, but its 22 more bytes put the
 * benchmark's completed job past 1 KB, a write unit more on one of its later updates); on 1 MiB it takes
 * seconds, where 5 takes ms.
 */
const quality = (bytes: number) => (bytes <= 64 * 1024 ? 11 : 5);
/** Brotli's window: 2^n − 16 bytes, n from 10 to 24; the smallest that holds the body allocates least. */
const windowBits = (bytes: number) => Math.min(24, Math.max(10, Math.ceil(Math.log2(bytes + 16))));

export const compressBody = (raw: Buffer): Buffer =>
  brotliCompressSync(raw, {
    params: {
      [constants.BROTLI_PARAM_QUALITY]: quality(raw.length),
      [constants.BROTLI_PARAM_LGWIN]: windowBits(raw.length),
      [constants.BROTLI_PARAM_SIZE_HINT]: raw.length,
      [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
    },
  });

export const decompressBody = (compressed: Uint8Array): string => brotliDecompressSync(compressed).toString('utf8');

export const splitParts = (compressed: Buffer): Buffer[] => {
  const parts: Buffer[] = [];
  for (let at = 0; at < compressed.length; at += PART_BYTES) parts.push(compressed.subarray(at, at + PART_BYTES));
  return parts.length ? parts : [compressed];
};

/** An order's body as stored: inline, or the number of its parts, and the parts' bytes. */
export interface BodyStorage {
  order: { body: Uint8Array } | { parts: number };
  parts: Buffer[];
}

/**
 * Where an order's body is stored: the one rule of every writer (a new order's jobs, an unrouted
 * order's record, a redaction). Inline while the record that carries it stays within `budget`
 * (`inlineBytes`: that record's size with the body inline; by default the body's own bytes), else in
 * parts of PART_BYTES beside the first job. A job's item is rewritten by each of its moves, billed by
 * the KB: its budget is INLINE_ITEM_BUDGET. A record written once (an unrouted order's, a redacted
 * body's) has a part's: PART_BYTES.
 */
export const bodyStorage = (
  compressed: Buffer,
  budget = PART_BYTES,
  inlineBytes: (inline: { body: Uint8Array }) => number = () => compressed.length,
): BodyStorage => {
  if (inlineBytes({ body: compressed }) <= budget) return { order: { body: compressed }, parts: [] };
  const parts = splitParts(compressed);
  return { order: { parts: parts.length }, parts };
};

/**
 * A part's item. `expiresAt` (the table's TTL, epoch seconds): an unrouted order's parts are written with the
 * record's (order-sync-job.ts); a routed order's get theirs from the retention sweep once its jobs ended
 * (order-redaction.ts `expireOrderItems`).
 */
export const orderBodyPartItem = (firstJobId: string, n: number, bytes: Buffer, expiresAt?: number): Item => ({
  ...keys.orderBodyPart(firstJobId, n),
  ...entityTagOf('bodyPart'),
  body: bytes,
  ...(expiresAt === undefined ? {} : { expiresAt }),
});

/** The items of a body's parts (`bodyStorage`), each with `expiresAt` when given. */
export const bodyPartItems = (firstJobId: string, parts: Buffer[], expiresAt?: number) =>
  parts.map((bytes, n) => orderBodyPartItem(firstJobId, n, bytes, expiresAt));

/**
 * The compressed body from its parts, all in one consistent Query of the order's partition (the
 * worker may run right after the write).
 */
export const readBodyParts = async (firstJobId: string, parts: number): Promise<Buffer> => {
  const { PK, SKPrefix } = keys.orderBodyParts(firstJobId);
  const found = new Map((await queryPartition(PK, SKPrefix)).map((item) => [String(item.SK), item.body]));
  return Buffer.concat(
    Array.from({ length: parts }, (_, n) => {
      const body = found.get(keys.orderBodyPart(firstJobId, n).SK);
      if (!(body instanceof Uint8Array)) throw new Error(`order body part ${n} of ${firstJobId} is missing`);
      return body;
    }),
  );
};

/**
 * An item's size as DynamoDB bills it, closely enough to choose between inline and parts: each
 * attribute's name and value in bytes (a number counts its digits, a map or list its contents
 * plus a few bytes of overhead).
 */
export const itemSize = (item: Item): number =>
  Object.entries(item).reduce((sum, [name, value]) => sum + Buffer.byteLength(name) + valueSize(value), 0);

const valueSize = (value: unknown): number => {
  if (value === null || value === undefined || typeof value === 'boolean') return 1;
  if (typeof value === 'string') return Buffer.byteLength(value);
  if (typeof value === 'number') return Math.ceil(String(value).replace(/[-.e+]/g, '').length / 2) + 1;
  if (value instanceof Uint8Array) return value.length;
  if (Array.isArray(value)) return 3 + value.reduce((sum: number, v) => sum + 1 + valueSize(v), 0);
  if (typeof value === 'object') return 3 + itemSize(value as Record<string, unknown>) + Object.keys(value).length;
  return 0;
};

/**
 * An order no retry can place: its currency has no exponent in the ISO 4217 table, or what is
 * stored cannot be read. The worker makes the job `dead` at once with this message as the reason.
 */
export class UnplaceableOrderError extends Error {
  override readonly name = 'UnplaceableOrderError';
}

/** The reseller order's raw JSON, however the job keeps it. */
export const orderText = (job: SyncJob): Promise<string> =>
  storedOrderText(job.order, firstJobIdOf(job), job.externalOrderId);

const firstJobIdOf = (job: Pick<SyncJob, 'resellerStoreId' | 'externalOrderId'>) =>
  syncJobId(job.resellerStoreId, job.externalOrderId, 0);

/**
 * The reseller order's raw JSON, however its record keeps it: inline, in parts beside its first
 * job, or (a job written by older code) as a map of the job's own items, which the same reading takes.
 */
export const storedOrderText = async (
  order: StoredOrder | null,
  firstJobId: string,
  externalOrderId: string,
): Promise<string> => {
  if (!order) throw new UnplaceableOrderError('the job holds no order to place');
  if ('body' in order) return decompressBody(order.body);
  if ('parts' in order) return decompressBody(await readBodyParts(firstJobId, order.parts));
  return JSON.stringify({ id: externalOrderId, ...order.legacy });
};

// ---------- the stored order, parsed once

/** Readings kept: an invocation reads one order (a poll, a batch of messages: a few). */
const KEPT_READINGS = 16;
const readings = new Map<string, Promise<OrderReading | undefined>>();

/**
 * The stored order, read (decompressed, its parts fetched) and parsed once per invocation for every
 * leg that needs it (its lines, the supplier order, an edit's comparison, the unrouted items). A
 * stored order is written once with its record and changed only by its redaction, which may write
 * the redacted body over the same number of parts: a reading is kept under the record's `redactedAt`
 * too, so once a record says it was redacted no environment answers the reading from before.
 * Undefined when nothing readable is stored (`UnplaceableOrderError`: no order).
 */
export const storedOrderReading = (
  order: StoredOrder | null,
  firstJobId: string,
  externalOrderId: string,
  /** The body's parts when the caller read them with the order's record (order-repository.ts `loadOrderPartition`). */
  parts?: Buffer,
  /** When the record says its order was redacted (`redactedAt`); absent: never. */
  redactedAt?: string | null,
): Promise<OrderReading | undefined> => {
  if (!order) return Promise.resolve(undefined);
  // An inline body (or an older map) is its own key; parts are the order's, written once.
  const form =
    'body' in order
      ? Buffer.from(order.body).toString('base64')
      : 'parts' in order
        ? `parts ${order.parts}`
        : JSON.stringify(order.legacy);
  const key = `${firstJobId}|${redactedAt ?? 'as received'}|${form}`;
  const kept = readings.get(key);
  if (kept) return kept;
  const text =
    parts && 'parts' in order
      ? Promise.resolve(decompressBody(parts))
      : storedOrderText(order, firstJobId, externalOrderId);
  const reading = text.then(readResellerOrder);
  readings.set(key, reading);
  // A failed read is not kept: the next leg tries again.
  reading.catch(() => readings.delete(key));
  const oldest = readings.keys().next();
  if (readings.size > KEPT_READINGS && !oldest.done) readings.delete(oldest.value);
  return reading;
};

/** The job's order, parsed once (`storedOrderReading`). */
export const jobOrderReading = (job: SyncJob) =>
  storedOrderReading(job.order, firstJobIdOf(job), job.externalOrderId, undefined, job.redactedAt);

/** One reseller line item a job carries, as the stored order and the placed order tell it (CONTRACT.md §10.1). */
export interface JobLine {
  resellerLineItemId: string | null;
  sourceLineItemId: string | null;
  sku: string | null;
  title: string | null;
  variantTitle: string | null;
  quantity: number;
  /** The reseller's unit price; `sourcePrice`: the supplier's, once placed (the markup removed). */
  price: string;
  sourcePrice: string | null;
}

/** A text field as sent: its string, or null for anything else (a number, an object, null). */
export const textOf = (value: JsonText | null): string | null => {
  if (value === null) return null;
  try {
    const parsed: unknown = JSON.parse(value.text);
    return typeof parsed === 'string' ? parsed : null;
  } catch {
    return null;
  }
};

/**
 * The stored order's line items the job carries (those whose vendor is its vendor tag), read exactly as the
 * webhook read them; undefined when the stored order cannot be read. What every view of a job's
 * lines starts from: its lines as shown, as a lookup compares them, as a parcel ships them.
 */
export const jobItems = async (job: SyncJob): Promise<ResellerLineItem[] | undefined> => {
  const reading = await jobOrderReading(job);
  return reading?.ok ? itemsOfVendorTag(reading.order.lineItems, job.vendorTag) : undefined;
};

/**
 * The reseller line items a job carries, in order, derived from the stored order (its lines whose
 * vendor is the job's tag) and the job's `sourceLines`; undefined when the stored order cannot be
 * read. Nothing of this is stored per line but the supplier's id and price: the job item stays small.
 */
export const jobLines = async (job: SyncJob): Promise<JobLine[] | undefined> =>
  (await jobItems(job))?.map((line, i) => ({
    resellerLineItemId: line.id,
    sourceLineItemId: job.sourceLines?.[i]?.id ?? null,
    sku: textOf(line.sku),
    title: textOf(line.title),
    variantTitle: textOf(line.variantTitle),
    quantity: line.quantity,
    price: line.price,
    sourcePrice: job.sourceLines?.[i]?.price ?? null,
  }));

/**
 * The order aggregate's reads and writes: every DynamoDB call on an order's partition (its first job's key)
 * and on its jobs' items goes through here, each write conditional on what its caller read. A write
 * whose condition failed answers the item it met (`ConditionFailed`), which the caller's next try
 * takes (`Met`) instead of reading it again; `withRereads` (core/concurrency.ts) reads only when the
 * answer carried none.
 */

// ---------- reads

/** A job by id, whoever owns it (workers, dead letters, propagation: their messages name it). */
export const loadJob = (id: string, consistent = false) => getItem(syncJobKey(id), syncJobOrNothing, consistent);

/** Jobs of a source store that placed a supplier order (GSI2, written on completion), under each spelling of its id. */
export const jobIdsUnderSupplierOrder = async (sourceStoreId: string, spellings: string[]) => {
  const pages = await Promise.all(
    spellings.map((form) =>
      queryIndex({
        index: 'lookups',
        partition: lookups.sourceOrder(sourceStoreId, form),
        prefix: lookups.sourceOrderJobs,
        forward: true,
      }),
    ),
  );
  return [...new Set(pages.flatMap((entries) => (entries ?? []).map(syncJobIdOf)))];
};

/** The jobs as they are now, in the order of `ids`; missing ones are skipped. */
export const loadJobs = (ids: string[]) => batchGet(ids.map(syncJobKey), syncJobFrom);

/** What holds an order's first job key: the order's record, or a cancellation kept for it. */
export const loadRecord = (firstJobId: string, consistent = false) =>
  getItem(syncJobKey(firstJobId), orderRecordFrom, consistent);

/** An order's partition, read whole: its record (or a cancellation kept), its body's parts, its mark. */
export interface OrderPartition {
  record: OrderRecord | undefined;
  /** The compressed body from its parts, in order; undefined when it has none (inline on the record). */
  parts: Buffer | undefined;
  /** How many body parts the partition holds (0 when the body is inline). */
  partCount: number;
  /** Whether the order has a mark of unrouted items. */
  marked: boolean;
}

/** An order's whole partition in one consistent Query (a large order's body parts with its record). */
export const loadOrderPartition = async (firstJobId: string): Promise<OrderPartition> => {
  const items = (await queryPartition(syncJobKey(firstJobId).PK)).map(orderItemFrom);
  const parts = items
    .filter((item): item is Extract<OrderItem, { kind: 'bodyPart' }> => item.kind === 'bodyPart')
    .sort((a, b) => a.n - b.n);
  return {
    record: items.find((item): item is OrderRecord => item.kind !== 'bodyPart' && item.kind !== 'unroutedMark'),
    parts: parts.length ? Buffer.concat(parts.map((part) => part.body)) : undefined,
    partCount: parts.length,
    marked: items.some((item) => item.kind === 'unroutedMark'),
  };
};

// ---------- an order's first write

const NEW_ITEM = 'attribute_not_exists(PK)';

const put = (Item: Item, ConditionExpression: string) => ({ Put: { TableName: TABLE(), Item, ConditionExpression } });

/** The record a failed first write met: from its answer, or (the fallback) one consistent read. */
const recordMet = async (met: Item | undefined, firstJobId: string) =>
  met ? orderRecordFrom(met) : loadRecord(firstJobId, true);

/**
 * Writes an order's record (its first job, or its unrouted-order record) with the items that go
 * with it (body parts, its mark, other jobs), all or nothing, on condition that its key is free
 * (`over: 'cancellation'`: that it holds the cancellation that came first; `'kept'`: the refunds or
 * returns that did, order-items.ts) and the others new.
 * True, or what holds the key (undefined: nothing does, a conflict the caller lets surface).
 */
export const writeOrderRecord = async (
  record: Item,
  others: Item[],
  over: 'nothing' | 'cancellation' | 'kept' = 'nothing',
): Promise<true | { met: OrderRecord | undefined }> => {
  const condition = { nothing: NEW_ITEM, cancellation: REPLACES_ORDER_CANCELLATION, kept: REPLACES_KEPT_AFTER_SALE }[
    over
  ];
  // A job item's key is its id's; an unrouted order's, its order's first job id.
  const firstJobId = jobIdOfPartition(keyOf(record));
  const written = others.length
    ? await transactIf([put(record, condition), ...others.map((item) => put(item, NEW_ITEM))])
    : await putIf(record, condition);
  if (written === true) return true;
  const met = written instanceof ConditionFailed ? written.met : written.met[0];
  return { met: await recordMet(met, firstJobId) };
};

/** A conditional put of a job an earlier write may have made already; whether this one made it. */
export const putJobIfNew = async (job: SyncJob) => (await putIf(syncJobItem(job))) === true;

/**
 * Keeps a cancellation that came before its order at the order's first job key. True, or the record
 * that holds the key (the order arrived meanwhile; undefined: a cancellation kept already).
 */
export const keepOrderCancellation = async (
  kept: OrderCancellation,
): Promise<true | { met: OrderRecord | undefined }> => {
  // Refunds or returns kept for the order give way: nothing is placed, nothing is left to refund.
  const written = await putIf(orderCancellationItem(kept), `${NEW_ITEM} OR ${REPLACES_KEPT_AFTER_SALE}`);
  if (written === true) return true;
  return { met: await recordMet(written.met, kept.firstJobId) };
};

/**
 * Keeps a refund or return that came before its order at the order's first job key (once by its
 * id). True (kept, or kept already), or the record that holds the key (the order arrived meanwhile,
 * or its cancellation did).
 */
export const keepEarlyAfterSale = async (
  firstJobId: string,
  entry: EarlyAfterSale,
): Promise<true | { met: OrderRecord | undefined }> => {
  const expiresAt = Math.floor(Date.now() / 1000) + EARLY_KEEP_SECONDS;
  const written = await updateIf(keepEarlyAfterSaleUpdate(firstJobId, entry, expiresAt));
  if (!(written instanceof ConditionFailed)) return true;
  const met = await recordMet(written.met, firstJobId);
  return met?.kind === 'earlyAfterSale' ? true : { met };
};

/** Records the cancellation of an order none of whose items routed, once: a redelivery keeps the first time. */
export const cancelUnroutedOrder = async (firstJobId: string, at: string) => {
  const written = await updateIf({ Key: syncJobKey(firstJobId), ...unroutedOrderCancellation(at) });
  return !(written instanceof ConditionFailed);
};

// ---------- the job item's updates

/** A lost race, as `withRereads` takes it: the job the write met, or `'again'` when none came back. */
export type Lost = Met<SyncJob | undefined> | 'again';

export const lostRace = (failed: ConditionFailed): Lost =>
  failed.met ? new Met(syncJobOrNothing(failed.met)) : 'again';

/** Runs one update of a job's item (an entry's move, its edits): true, or the race lost. */
export const updateJob = async (jobId: string, update: JobUpdate): Promise<true | Lost> => {
  const out = await updateIf(update.of(jobId));
  return out instanceof ConditionFailed ? lostRace(out) : true;
};

/** Runs one move of the state machine (order-repository.ts): the job after it (or undefined), or the race lost. */
export const moveJob = async (request: MoveRequest): Promise<SyncJob | undefined | Lost> => {
  const { generation: _next, ...update } = moveUpdate(request);
  const out = await updateIf(update, true);
  return out instanceof ConditionFailed ? lostRace(out) : out && syncJobFrom(out);
};

/** A move as one item of a transaction. */
export const moveItem = (request: MoveRequest) => {
  const { generation: _next, ...update } = moveUpdate(request);
  return { Update: { TableName: TABLE(), ...update } };
};

type Written = Parameters<typeof transactIf>[0][number];

/**
 * A move (or an update of the job alone) with other writes in one transaction (its audit entry):
 * true, or the job the move met (undefined when none came back: the caller reads it if it must).
 */
export const updateJobWith = async (
  job: { Update: Written['Update'] },
  others: Written[],
): Promise<true | { met: SyncJob | undefined }> => {
  const written = await transactIf([job, ...others]);
  if (written === true) return true;
  const met = written.met[0];
  return { met: met && syncJobOrNothing(met) };
};

/**
 * The condition of a message's claim on a supplier call, at `claim` (`by`: the claimant's message id,
 * `at`: when it claimed): none yet, this message's own (its redelivery after a crash after the call),
 * or one older than `leaseSeconds` (its message gone: a fresh one may take the call over). The cancel
 * call's claim and a Shopify reseller's fulfillment create (order-entries.ts `claimCreate`) share it.
 */
export const whenClaimable = (
  update: JobUpdate,
  paths: { claim: string; by: string; at: string },
  messageId: string,
  leaseSeconds: number,
) => {
  const lapsed = new Date(Date.now() - leaseSeconds * 1000).toISOString();
  const mine = `${paths.by} = ${update.value('me', messageId)}`;
  const old = `${paths.at} < ${update.value('lapsed', lapsed)}`;
  return update.when(`(attribute_not_exists(${paths.claim}) OR ${mine} OR ${old})`);
};

/**
 * The call that cancels a completed job's supplier order, claimed by the message `messageId`:
 * conditional on the job still `completed` with its cancellation `requested`, and claimable
 * (`whenClaimable`). Another message of the same cancellation loses, and leaves the call to the claimant.
 */
export const claimCancelCall = (job: SyncJob, messageId: string, leaseSeconds: number) => {
  const update = new JobUpdate().setAttributes({ [CANCEL_CALL]: { by: messageId, at: now() } });
  const [claim, status] = [update.name(CANCEL_CALL), update.name('status')];
  update.when(`${status} = ${update.value('completed', 'completed')}`);
  update.when(`${update.name('cancellation')}.${status} = ${update.value('requested', 'requested')}`);
  const [by, at] = [`${claim}.${update.name('by')}`, `${claim}.${update.name('at')}`];
  whenClaimable(update, { claim, by, at }, messageId, leaseSeconds);
  return updateJob(job.id, update);
};

/** Whether a job update lost its race: a `Met` or `'again'`. */
export const isLost = (result: unknown): result is Lost => result === 'again' || result instanceof Met;

/**
 * Writes the job's edits, conditional on the version it had when read (a concurrent update wins once).
 * `watch`: an update message goes to the placed supplier order; the job joins GSI3's propagating set,
 * where the reconciler finds it if that message is lost (it leaves once the update is through).
 */
export const keepEdits = async (job: SyncJob, edits: OrderEdits, watch = false) => {
  const update = new JobUpdate().setAttributes({
    orderEdits: edits,
    ...(watch ? propagationIndex(job, true).set : {}),
  });
  const read = job.orderEdits?.updatedAt;
  if (read === undefined) update.when(`attribute_not_exists(${update.name('orderEdits')})`);
  else update.when(`${update.name('orderEdits')}.${update.name('updatedAt')} = ${update.value('read', read)}`);
  // The same version written again (a re-send, the update through): only over what was read.
  if (edits.updatedAt === read) {
    for (const field of ['keptAt', 'sentAt'] as const) {
      const was = job.orderEdits?.[field];
      const path = `${update.name('orderEdits')}.${update.name(field)}`;
      update.when(was === undefined ? `attribute_not_exists(${path})` : `${path} = ${update.value(field, was)}`);
    }
  }
  // One item: a plain conditional UpdateItem (a transaction would bill it twice).
  return (await updateJob(job.id, update)) === true;
};

/**
 * Writes what happened to the job after the sale (CONTRACT.md §15), conditional on the version read
 * (and, with `status`, on the job's state read: a claim meanwhile makes the caller read it again).
 * A job owed credit (`next.creditDue`) is in its owner's and store's list of such jobs, and leaves
 * it once it is not (a job in a state list of its own, `cancelled` say, keeps that one). One plain
 * conditional UpdateItem.
 */
export const keepAfterSale = async (job: SyncJob, next: AfterSale, status = false): Promise<true | Lost> => {
  const update = new JobUpdate().setAttributes({
    [AFTER_SALE]: afterSaleAttribute({ ...next, v: (job.afterSale?.v ?? 0) + 1 }),
  });
  const read = job.afterSale?.v;
  update.when(
    read === undefined
      ? `attribute_not_exists(${update.name(AFTER_SALE)})`
      : `${update.name(AFTER_SALE)}.${update.name('v')} = ${update.value('v', read)}`,
  );
  if (status) update.when(`${update.name('status')} = ${update.value('status', job.status)}`);
  const due = next.creditDue === true;
  if (due !== (job.afterSale?.creditDue === true) && !isListedState(job.status) && job.hold === null) {
    update.index(due ? { set: creditDueEntries(job), remove: [] } : { set: {}, remove: STATE_LISTS });
  }
  return updateJob(job.id, update);
};
