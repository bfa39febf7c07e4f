import { InvalidCursorError, ResourceMissingError } from '../core/errors.js';
import { isId } from '../core/ids.js';
import type { Owner } from '../domain/owner.js';
import type { SyncJobStatus } from '../domain/sync-job-status.js';
import { inFlight, lists } from '../dynamo/keys.js';
import { type ListSource, listPage, type Page } from '../dynamo/pagination.js';
import { type Attempt, attemptNumberOf } from './order-attempt.js';
import { type JobLine, jobLines } from './order-body.js';
import { loadJob } from './order-repository.js';
import { isLateNow, LATE_LIST } from './order-service-level.js';
import { CREDIT_DUE_LIST, HELD_LIST, isListedState, type SyncJob, syncJobFrom } from './order-sync-job.js';

/**
 * Sync jobs (SPEC 3.1, CONTRACT.md §6): reads (creation: routing-jobs.ts; the manual retry: placing-retry.ts). The
 * moves of the machinery (worker, DLQ handler, reconciler) are in placing-moves.ts; all of them come from
 * the order aggregate's transition table (shared/order-flow/order-transitions.ts).
 */

// ---------- reads

/** The caller's job, or undefined: another owner's is as missing as an unknown id. */
const ownedSyncJob = async ({ ownerId }: Owner, id: string) => {
  const job = isId('sj', id) ? await loadJob(id) : undefined;
  return job?.ownerId === ownerId ? job : undefined;
};

export const findSyncJob = async (owner: Owner, id: string) => {
  const job = await ownedSyncJob(owner, id);
  if (!job) throw new ResourceMissingError('sync_job', id);
  return job;
};

export interface SyncJobFilters {
  status?: SyncJobStatus;
  resellerStoreId?: string;
  /** true: only held jobs (CONTRACT.md §11), read from their own lists; false: only jobs not held. */
  held?: boolean;
  /** true: only jobs owed credit (CONTRACT.md §15.3), read from their own lists; false: only jobs not owed any. */
  creditDue?: boolean;
  /** true: only late jobs (CONTRACT.md §16.2), read from their own lists (order-service-level.ts). */
  late?: true;
}

/**
 * Where a filtered list of jobs is read (docs/design.md, "Lists"). A failed or dead job is in a
 * list of its state (per owner, per store), so those filters read only matches. The other states
 * have no list of their own (it would cost every order index writes): `pending` and `processing`
 * read the owner's open jobs (GSI3, the reconciler's), which are few, and keep those in the state
 * (and store) asked for; `completed` reads its owner's or store's list, most of which it is.
 */
export const syncJobListSource = ({ ownerId }: Owner, filters: SyncJobFilters): ListSource => {
  const { status, resellerStoreId: store } = filters;
  // Jobs owed credit are in lists of their own (order-sync-job.ts creditDueEntries): a page reads only matches.
  if (filters.creditDue === true) {
    return store === undefined
      ? { index: 'stateLists', partitions: lists.syncJobsIn(ownerId, CREDIT_DUE_LIST).all(), exact: false }
      : { index: 'storeStateLists', partitions: lists.storeSyncJobsIn(store, CREDIT_DUE_LIST).all(), exact: false };
  }
  // Late jobs too (the late sweep's lists).
  if (filters.late) {
    return store === undefined
      ? { index: 'stateLists', partitions: lists.syncJobsIn(ownerId, LATE_LIST).all(), exact: false }
      : { index: 'storeStateLists', partitions: lists.storeSyncJobsIn(store, LATE_LIST).all(), exact: false };
  }
  // Held jobs are in lists of their own (order-sync-job.ts heldEntries): a page reads only matches.
  if (filters.held === true) {
    return store === undefined
      ? { index: 'stateLists', partitions: lists.syncJobsIn(ownerId, HELD_LIST).all(), exact: status === undefined }
      : {
          index: 'storeStateLists',
          partitions: lists.storeSyncJobsIn(store, HELD_LIST).all(),
          exact: status === undefined,
        };
  }
  if (status !== undefined && isListedState(status)) {
    return store === undefined
      ? { index: 'stateLists', partitions: lists.syncJobsIn(ownerId, status).all(), exact: true }
      : { index: 'storeStateLists', partitions: lists.storeSyncJobsIn(store, status).all(), exact: true };
  }
  if (status === 'pending' || status === 'processing') {
    const partitions = inFlight.open.allPartitions();
    return { index: 'inFlight', partitions, prefix: inFlight.ownerPrefix(ownerId), exact: false, small: true };
  }
  const exact = status === undefined;
  return store === undefined
    ? { index: 'lists', partitions: lists.syncJobs(ownerId).all(), exact }
    : { index: 'storeLists', partitions: lists.storeSyncJobs(store).all(), exact };
};

/**
 * A page of the owner's jobs, filtered. A cursor must be a job of the list's owner and reseller
 * store (which never change); its status need not match: jobs change state while someone pages,
 * and a job that left the filtered state still marks its place.
 */
export const listSyncJobs = (
  owner: Owner,
  limit: number,
  startingAfter: string | undefined,
  filters: SyncJobFilters,
) => {
  const { status, resellerStoreId, held, creditDue } = filters;
  const inStore = (job: SyncJob) => resellerStoreId === undefined || job.resellerStoreId === resellerStoreId;
  return listPage({
    source: syncJobListSource(owner, filters),
    ownerId: owner.ownerId,
    from: syncJobFrom,
    limit,
    startingAfter,
    cursorItem: async (id) => {
      const job = await ownedSyncJob(owner, id);
      return job && inStore(job) ? job : undefined;
    },
    matches: (job) =>
      (status === undefined || job.status === status) &&
      inStore(job) &&
      (held === undefined || (job.hold !== null) === held) &&
      (creditDue === undefined || (job.afterSale?.creditDue === true) === creditDue) &&
      (!filters.late || isLateNow(job)),
  });
};

/**
 * A page of the job's attempt history, newest first (SPEC 8.1 rules, CONTRACT.md §6). The history
 * is on the job item, so every page is one GetItem. The cursor is an attempt id of this job; one
 * that has since dropped out of the kept 100 still marks its place (the page after it is empty).
 */
export const listAttempts = async (
  owner: Owner,
  id: string,
  limit: number,
  startingAfter: string | undefined,
): Promise<{ job: SyncJob; page: Page<Attempt> }> => {
  const job = await findSyncJob(owner, id);
  let newestFirst = [...job.attemptLog].reverse();
  if (startingAfter !== undefined) {
    const after = attemptNumberOf(job.id, startingAfter);
    // Numbers run 1, 2, … without gaps, so one above the last was never issued.
    if (after === undefined || after > (job.attemptLog.at(-1)?.number ?? 0)) throw new InvalidCursorError();
    newestFirst = newestFirst.filter((attempt) => attempt.number < after);
  }
  return { job, page: { data: newestFirst.slice(0, limit), hasMore: newestFirst.length > limit } };
};

/**
 * The reseller line items a job carries, as a response shows them (CONTRACT.md §10.1): derived
 * from its stored order (inline on the job item, so no read; an order kept in parts is read), none
 * when that order cannot be read.
 */
export const linesOf = async (job: SyncJob): Promise<JobLine[]> => (await jobLines(job)) ?? [];
