import { withRereads } from '../core/concurrency.js';
import { now } from '../core/ids.js';
import { personalFieldsOf, personalStringsOf, redactOrderText } from '../domain/personal-data.js';
import {
  PERSONAL_EDIT_FIELDS,
  personalEditTexts,
  redactedStorage,
  redactJob,
  redactUnroutedOrder,
  writeRedactedParts,
} from '../order-flow/order-redaction.js';
import {
  decompressBody,
  loadJob,
  loadJobs,
  loadOrderPartition,
  storedOrderText,
} from '../order-flow/order-repository.js';
import { type StoredOrder, type SyncJob, unroutedOrderExpiresAt } from '../order-flow/order-sync-job.js';

/**
 * Erasing one order's personal data (CONTRACT.md §13; docs/design.md, "Customer data"), wherever the
 * service keeps a copy of it: the stored order on each of its jobs (inline) or in parts beside its
 * first job, its unrouted-order record, the personal members of the reseller's edits kept on each
 * job, and any platform reason a job keeps that quoted one of its strings. What stays: ids, lines,
 * prices, statuses, tracking, the history. Safe to run again at any point (a crash half-way, a
 * redelivery): a job or record already marked `redactedAt` is left as it is.
 */

/** A supplier order placed with a copy of the order: the merchant passes the request on to it. */
export interface SupplierOrderCopy {
  sourceStoreId: string;
  sourceOrderId: string;
}

export interface OrderRedaction {
  /** Whether the service holds the order (a record of it: a job, or an order none of whose items routed). */
  held: boolean;
  /** Whether this run erased something (false: nothing held, or erased already). */
  erased: boolean;
  /** The order's jobs. */
  jobs: number;
  supplierOrders: SupplierOrderCopy[];
}

const NOT_HELD: OrderRedaction = { held: false, erased: false, jobs: 0, supplierOrders: [] };

/** The order's text as a kept copy holds it (parts: from the partition read), undefined when unreadable. */
const textOf = async (order: StoredOrder, firstJobId: string, externalOrderId: string, parts?: Buffer) => {
  try {
    return 'parts' in order && parts
      ? decompressBody(parts)
      : await storedOrderText(order, firstJobId, externalOrderId);
  } catch {
    // Unreadable bytes hold nothing anyone can read back; they are replaced by nothing readable either.
    return undefined;
  }
};

/** What the redaction of one copy writes: the redacted order's storage, and the strings to scrub from messages. */
interface Plan {
  /** Null: the copy is left as it is (nothing readable was kept, or it could not be read). */
  order: StoredOrder | null;
  parts: Buffer[];
  strings: string[];
}

const planFor = (text: string | undefined, edits: string[]): Plan => {
  if (text === undefined) return { order: null, parts: [], strings: personalStringsOf('{}', edits) };
  const { order, parts } = redactedStorage(redactOrderText(text));
  return { order, parts, strings: personalStringsOf(text, edits) };
};

/** One job's copy erased, the job re-read after each lost race. */
const eraseJob = (job: SyncJob, plan: Plan, at: string) =>
  withRereads(
    () => loadJob(job.id, true),
    async (current) =>
      !current || current.redactedAt ? false : await redactJob(current, plan.order, plan.strings, at),
    `redaction of job ${job.id}`,
    job,
  );

/**
 * Erases the personal data of the order whose record is at `firstJobId` (its first job's id).
 */
export const redactOrder = async (firstJobId: string, at = now()): Promise<OrderRedaction> => {
  const partition = await loadOrderPartition(firstJobId);
  const record = partition.record;
  if (!record || record.kind === 'orderCancellation' || record.kind === 'earlyAfterSale') return NOT_HELD;
  if (record.kind === 'unroutedOrder') {
    const order = record.order;
    if (order.redactedAt) {
      const named = 'parts' in order.order ? order.order.parts : 0;
      await writeRedactedParts(firstJobId, [], partition.partCount, named);
      return { held: true, erased: false, jobs: 0, supplierOrders: [] };
    }
    const plan = planFor(await textOf(order.order, firstJobId, order.externalOrderId, partition.parts), []);
    // Parts written over keep the record's end (the table's TTL).
    await writeRedactedParts(firstJobId, plan.parts, 0, plan.parts.length, unroutedOrderExpiresAt(order.receivedAt));
    await redactUnroutedOrder(firstJobId, plan.order ?? order.order, at);
    await writeRedactedParts(firstJobId, [], plan.order ? partition.partCount : 0, plan.parts.length);
    return { held: true, erased: true, jobs: 0, supplierOrders: [] };
  }
  const first = record.job;
  if (!first.orderJobIds) return NOT_HELD;
  const jobs = await loadJobs(first.orderJobIds);
  let erased = false;
  // A large body is one set of parts beside the first job, which every job names: read and planned once.
  let shared: Plan | undefined;
  for (const job of jobs) {
    if (job.redactedAt) continue;
    const edits = personalEditTexts(job.orderEdits);
    let plan: Plan;
    if (job.order && 'parts' in job.order) {
      if (!shared) {
        shared = planFor(await textOf(job.order, firstJobId, job.externalOrderId, partition.parts), edits);
        if (shared.parts.length) await writeRedactedParts(firstJobId, shared.parts, 0);
      }
      plan = shared;
    } else plan = planFor(job.order ? await textOf(job.order, firstJobId, job.externalOrderId) : undefined, edits);
    if (await eraseJob(job, plan, at)) erased = true;
  }
  // Parts no job names any more (the redacted body went inline, or in fewer parts) are deleted once
  // every job is erased.
  const named = Math.max(
    0,
    ...(await loadJobs(first.orderJobIds)).map((job) => (job.order && 'parts' in job.order ? job.order.parts : 0)),
  );
  await writeRedactedParts(firstJobId, [], partition.partCount, named);
  return {
    held: true,
    erased,
    jobs: jobs.length,
    supplierOrders: jobs.flatMap((job) =>
      job.sourceOrderId === null ? [] : [{ sourceStoreId: job.sourceStoreId, sourceOrderId: job.sourceOrderId }],
    ),
  };
};

/**
 * The names of the personal members the service keeps of the order at `firstJobId` (never their
 * values), for a data request: those of its stored order, and `orderEdits.<field>` for the edits a
 * job keeps. Undefined when the service holds no such order.
 */
export const personalFieldsHeld = async (
  firstJobId: string,
): Promise<{ syncJobIds: string[]; fields: string[]; redactedAt: string | null } | undefined> => {
  const partition = await loadOrderPartition(firstJobId);
  const record = partition.record;
  if (!record || record.kind === 'orderCancellation' || record.kind === 'earlyAfterSale') return undefined;
  if (record.kind === 'unroutedOrder') {
    const { order } = record;
    const text = await textOf(order.order, firstJobId, order.externalOrderId, partition.parts);
    return { syncJobIds: [], fields: text ? personalFieldsOf(text) : [], redactedAt: order.redactedAt ?? null };
  }
  const first = record.job;
  if (!first.orderJobIds) return undefined;
  const jobs = await loadJobs(first.orderJobIds);
  const fields = new Set<string>();
  for (const job of jobs) {
    if (job.order) {
      const text = await textOf(job.order, firstJobId, job.externalOrderId, partition.parts);
      for (const field of text ? personalFieldsOf(text) : []) fields.add(field);
    }
    for (const field of PERSONAL_EDIT_FIELDS)
      if (job.orderEdits?.[field] !== undefined) fields.add(`orderEdits.${field}`);
  }
  return { syncJobIds: first.orderJobIds, fields: [...fields], redactedAt: first.redactedAt ?? null };
};
