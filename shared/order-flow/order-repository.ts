import { Met } from '../core/concurrency.js';
import { jobIdOfPartition, lookups } from '../dynamo/keys.js';
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
  updateIf,
} from '../dynamo/table.js';
import { AFTER_SALE, type AfterSale, afterSaleAttribute } from './order-after-sale.js';
import { type OrderCancellation, orderCancellationItem, REPLACES_ORDER_CANCELLATION } from './order-cancellation.js';
import {
  EARLY_KEEP_SECONDS,
  type EarlyAfterSale,
  keepEarlyAfterSaleUpdate,
  REPLACES_KEPT_AFTER_SALE,
} from './order-early-after-sale.js';
import { type OrderItem, type OrderRecord, orderItemFrom, orderRecordFrom, syncJobOrNothing } from './order-items.js';
import {
  creditDueEntries,
  isListedState,
  type OrderEdits,
  propagationIndex,
  STATE_LISTS,
  type SyncJob,
  syncJobFrom,
  syncJobIdOf,
  syncJobItem,
  syncJobKey,
} from './order-sync-job.js';
import { JobUpdate, type MoveRequest, moveUpdate } from './order-transitions.js';
import { unroutedOrderCancellation } from './order-unrouted.js';

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
 * returns that did, order-early-after-sale.ts) and the others new.
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

/** Runs one move of the state machine (order-transitions.ts): the job after it (or undefined), or the race lost. */
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
