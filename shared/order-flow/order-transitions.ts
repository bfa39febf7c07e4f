import { isEnded, type SyncJobStatus } from '../domain/orders.js';
import { TABLE, UpdateBuilder } from '../dynamo/table.js';
import type { storedAttempts } from './order-attempt.js';
import type { FulfillmentEntry, FulfillmentStatus } from './order-fulfillment-entry.js';
import {
  COMPLETED_AT,
  EXPIRES_AT,
  expiryOf,
  type IndexChanges,
  type IndexedJob,
  indexChanges,
  type JobAttribute,
  type JobEntryAttribute,
  STATE_LISTS,
  type SyncJob,
  type sourceLinesAttribute,
  syncJobKey,
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
 * What the flow does once a move is written (placing-follow-ups.ts runs them, from there alone):
 * `releaseKeptFulfillments`, the fulfillments that arrived before the job's supplier order was known
 * sent on (propagating.ts); `requestTag`, the reseller order's routed tag asked for (tagging-queue.ts).
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
  /** Attributes the entity modules compose (index entries, the due time): never named by hand. */
  entries?: { [A in JobEntryAttribute]?: string | number };
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

  /** `#<attribute> = :<attribute>` for each, typed against the job item (a renamed field fails to compile). */
  override setAttributes(attributes: { [A in JobAttribute]?: unknown }) {
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
