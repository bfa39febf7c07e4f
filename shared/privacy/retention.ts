import { listKeys } from '../api-keys/api-keys.js';
import { config } from '../core/config.js';
import { now } from '../core/ids.js';
import { logger } from '../core/telemetry.js';
import { isOpen } from '../domain/orders.js';
import { keepRetentionMark, loadRetentionMarks, type RetentionMark } from '../entities/retention-mark.js';
import { findResellerStoreIdsOf } from '../entities/store.js';
import {
  findListedJobsPage,
  findListedOrdersPage,
  jobListShards,
  type ListStart,
  unroutedOrderListShards,
} from '../order-flow/order.js';
import { expireOrderItems } from '../order-flow/order-redaction.js';
import { loadJobs, loadRecord } from '../order-flow/order-repository.js';
import { isPropagating, jobExpiresAt, type SyncJob, supplierOrderChangePending } from '../order-flow/order-sync-job.js';
import { redactOrder } from './redact.js';

/**
 * The retention sweep (CONTRACT.md §13; docs/design.md, "Customer data"): an order's personal data is
 * erased PERSONAL_DATA_RETENTION_DAYS after every job of it ended. Daily on AWS (its heartbeat alarm
 * is every schedule's), on a short clock locally. Each owner's jobs are read oldest first (GSI1) from
 * where the last sweep stopped (its retention mark) up to the retention's cutoff: no order created
 * after it can have ended before it. The mark moves over the jobs that are erased, and stops at the
 * first that is not (an order still at work, or ended too recently), so the next run reads on from
 * there; a run that is out of time stops where it is. An order none of whose items routed has no job:
 * it is found in its store's list of orders with unrouted items, and erased the retention after its
 * receipt.
 */

/** When the order's last job ended, or undefined while one has not (open, or a change still on its way). */
export const orderEndedAt = (jobs: SyncJob[]): string | undefined => {
  let last = '';
  for (const job of jobs) {
    if (isOpen(job.status)) return undefined;
    const entries = Object.values(job.fulfillments);
    if (entries.some(isPropagating) || supplierOrderChangePending(job)) return undefined;
    const times = [job.completedAt, job.deadAt, job.cancelledAt, ...entries.map((entry) => entry.updatedAt)];
    for (const time of times) if (time && time > last) last = time;
  }
  return last || undefined;
};

/** Jobs read per page of an owner's list. */
const PAGE = 100;
/** The time a run keeps for writing its marks before its invocation ends. */
const MARGIN_MS = 10_000;

export interface SweepOutcome {
  owners: number;
  ordersErased: number;
}

/** Whether a job's order is erased, or is erased now because it is due (its first job decides for all). */
const sweepJob = async (job: SyncJob, cutoff: string, at: string): Promise<'erased' | 'kept'> => {
  if (job.redactedAt) return 'erased';
  if (!job.orderJobIds) return 'kept';
  const ended = orderEndedAt(await loadJobs(job.orderJobIds));
  if (ended === undefined || ended > cutoff) return 'kept';
  await redactOrder(job.id, at);
  // What the order keeps beside its first job (its mark, large parts) ends with its jobs (issue 44).
  await expireOrderItems(job.id, jobExpiresAt(ended));
  return 'erased';
};

/**
 * The pages of one list shard (`find`), oldest first, from the sweep's mark (`after`) up to the
 * cutoff; no further page once the run is out of time.
 */
async function* pagesFromMark<P extends { lastKey: ListStart | undefined }>(
  find: (request: Parameters<typeof findListedJobsPage>[0]) => Promise<P>,
  shard: string,
  after: string | undefined,
  cutoff: string,
  deadline: () => boolean,
) {
  let start: ListStart | undefined;
  do {
    const page = await find({ shard, after, until: cutoff, limit: PAGE, start });
    yield page;
    start = page.lastKey;
  } while (start && !deadline());
}

/** The part of a run one list sweeps: from its mark (read beforehand, with the owner's others) up to the cutoff. */
interface ListSweep {
  partition: string;
  mark: RetentionMark | undefined;
  cutoff: string;
  at: string;
  deadline: () => boolean;
}

/** One shard of an owner's list of jobs, from its mark up to the cutoff. */
const sweepList = async ({ partition, mark, cutoff, at, deadline }: ListSweep) => {
  let after = mark?.after;
  let advancing = true;
  let erased = 0;
  for await (const page of pagesFromMark(findListedJobsPage, partition, mark?.after, cutoff, deadline)) {
    for (const { job, sortKey } of page.listed.sort((a, b) => a.sortKey.localeCompare(b.sortKey))) {
      if (sortKey === mark?.after) continue;
      const was = job.redactedAt;
      const outcome = await sweepJob(job, cutoff, at);
      if (outcome === 'erased' && !was && job.orderJobIds) erased++;
      if (outcome === 'kept') advancing = false;
      else if (advancing) after = sortKey;
    }
  }
  if (after && after !== mark?.after) await keepRetentionMark({ list: partition, after, updatedAt: at });
  return erased;
};

/**
 * One shard of a reseller store's orders with unrouted items (GSI7), from its mark up to the cutoff:
 * those none of whose items routed have no job to end, so their end is their receipt, and each
 * received before the cutoff is erased (its unrouted record). An order with jobs is left to its jobs'
 * sweep. Nothing here waits on anything, so the mark moves over every entry read.
 */
const sweepUnroutedList = async ({ partition, mark, cutoff, at, deadline }: ListSweep) => {
  let after = mark?.after;
  let erased = 0;
  for await (const page of pagesFromMark(findListedOrdersPage, partition, mark?.after, cutoff, deadline)) {
    for (const { firstJobId, sortKey } of page.orders) {
      if (sortKey === mark?.after) continue;
      const record = await loadRecord(firstJobId);
      if (record?.kind === 'unroutedOrder' && !record.order.redactedAt && (await redactOrder(firstJobId, at)).erased)
        erased++;
      after = sortKey;
    }
  }
  if (after && after !== mark?.after) await keepRetentionMark({ list: partition, after, updatedAt: at });
  return erased;
};

/**
 * Lists swept at once: an owner's 16 job-list shards side by side, so a run waits for a few round trips
 * per owner, not two per shard one after another (issue 41: 1.2 s for one owner with nothing due). Each
 * list has its own mark and its own jobs' orders (an order is erased from its first job's shard), so
 * lists swept together touch nothing in common.
 */
const LISTS_AT_ONCE = 16;

/** Runs `tasks`, at most `size` at a time, and adds up what they answer; after a failure, starts no more. */
const sumInPool = async (tasks: (() => Promise<number>)[], size: number) => {
  let next = 0;
  let sum = 0;
  let failed = false;
  const worker = async () => {
    while (next < tasks.length && !failed) {
      const task = tasks[next++];
      try {
        const n = await task();
        sum += n;
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(size, tasks.length) }, worker));
  return sum;
};

/**
 * An owner's lists of jobs and of its reseller stores' orders with unrouted items, `LISTS_AT_ONCE` at a
 * time, their marks read together first (BatchGetItem). A store created after the cutoff received no
 * order before it: its lists are not read.
 */
const sweepOwner = async (ownerId: string, cutoff: string, at: string, deadline: () => boolean) => {
  const storeIds = await findResellerStoreIdsOf(ownerId, cutoff);
  const jobLists = jobListShards(ownerId);
  const unroutedLists = storeIds.flatMap(unroutedOrderListShards);
  const marks = await loadRetentionMarks([...jobLists, ...unroutedLists]);
  const sweeps = (sweep: (list: ListSweep) => Promise<number>, partitions: string[]) =>
    partitions.map(
      (partition) => () =>
        deadline() ? Promise.resolve(0) : sweep({ partition, mark: marks.get(partition), cutoff, at, deadline }),
    );
  return sumInPool([...sweeps(sweepList, jobLists), ...sweeps(sweepUnroutedList, unroutedLists)], LISTS_AT_ONCE);
};

/** One run of the sweep over every owner (those of the API keys, revoked ones too). */
export const sweepPersonalData = async (remainingMs: () => number, at = now()): Promise<SweepOutcome> => {
  const cutoff = new Date(Date.parse(at) - config.personalDataRetentionMs()).toISOString();
  const owners = [...new Set((await listKeys()).map((key) => key.ownerId))];
  const deadline = () => remainingMs() < MARGIN_MS;
  const outcome: SweepOutcome = { owners: 0, ordersErased: 0 };
  for (const ownerId of owners) {
    if (deadline()) break;
    outcome.ordersErased += await sweepOwner(ownerId, cutoff, at, deadline);
    outcome.owners++;
  }
  logger.info('personal data sweep', { ...outcome, cutoff });
  return outcome;
};
