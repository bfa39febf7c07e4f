import { isOpen, type SyncJobStatus } from '../domain/sync-job-status.js';
import { INDEX_KEYS, inFlight, lists, lookups } from '../dynamo/keys.js';
import type { SyncJob } from './record.js';

/**
 * The index attributes of a sync job item, and how each state move changes them: the one answer
 * to "which index entries does this write touch?". Job creation (shared/orders/order-jobs.ts) and every move
 * (state-machine.ts) take their index attributes from `indexChanges`, so no write can forget one.
 * The write budget of a completing order is in docs/performance.md.
 *
 * - For life, from creation: its owner's list (GSI1, whose keys record.ts writes) and its reseller
 *   store's list (GSI4, docs/design.md "Lists"). These keys never change, so no move rewrites those
 *   index entries.
 * - GSI3, open jobs (docs/design.md, "Reconciler"): a job that has not ended is in
 *   `OPEN#<shard of owner>`, `<owner>#<createdAt>#<id>`. Its keys are set by the creating put, kept
 *   through pending and processing (claims and deferrals write nothing to the index), removed by
 *   the move to completed or dead, and set again by a manual retry. A failed job waits apart, in
 *   `FAILED#<shard of owner>` (same sort key), so that an owner's pending and processing jobs are
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
  set: Record<string, string>;
  /** Index attributes to remove. */
  remove: string[];
  /** Index attributes to set to the value another attribute of the item has: target → source. */
  copy?: Record<string, string>;
}

/** An open job's own GSI3 partition, kept so a move that has not read the job can go back to it. */
export const OPEN_PK = 'openPK';
const GSI3 = ['GSI3PK', 'GSI3SK'];

const openEntry = (job: IndexedJob) => ({
  GSI3PK: inFlight.open.partition(job.ownerId),
  GSI3SK: inFlight.sortKey(job.ownerId, job.createdAt, job.id),
  [OPEN_PK]: inFlight.open.partition(job.ownerId),
});

/** The states with a list of their own. */
export const LISTED_STATES = ['failed', 'dead'] as const satisfies readonly SyncJobStatus[];
type ListedState = (typeof LISTED_STATES)[number];

export const isListedState = (status: SyncJobStatus): status is ListedState =>
  (LISTED_STATES as readonly SyncJobStatus[]).includes(status);

const STATE_LISTS = [INDEX_KEYS.stateLists.pk, INDEX_KEYS.storeStateLists.pk];

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
  if (!isOpen(to) && wasOpen) changes.remove.push(...GSI3, OPEN_PK);
  if (to === 'failed') changes.set.GSI3PK = inFlight.failed.partition(job.ownerId);
  else if (isOpen(to) && wasOpen) changes.copy = { GSI3PK: OPEN_PK };
  if (job.status === null) changes.set[INDEX_KEYS.storeLists.pk] = lists.storeSyncJobs(job.resellerStoreId);
  if (isListedState(to)) {
    changes.set[INDEX_KEYS.stateLists.pk] = lists.syncJobsIn(job.ownerId, to);
    changes.set[INDEX_KEYS.storeStateLists.pk] = lists.storeSyncJobsIn(job.resellerStoreId, to);
  } else if (job.status !== null) changes.remove.push(...STATE_LISTS);
  return changes;
};

/**
 * GSI3, completed jobs propagating a fulfillment: a completed job is in `PROPAGATING#<shard of
 * owner>` while one of its fulfillment entries is `pending` or `failed`, so the reconciler finds an
 * entry whose message was lost. Never while the job is open: a job records fulfillments only
 * once it is completed, and completed is final.
 */
export const propagationIndex = (
  job: Pick<SyncJob, 'id' | 'ownerId' | 'createdAt'>,
  propagating: boolean,
): IndexChanges =>
  propagating
    ? {
        set: {
          GSI3PK: inFlight.propagating.partition(job.ownerId),
          GSI3SK: inFlight.sortKey(job.ownerId, job.createdAt, job.id),
        },
        remove: [],
      }
    : { set: {}, remove: [...GSI3] };

/**
 * GSI2, a completed job's lookup by its source order: written by the completion (moves.ts), which
 * is final, so the job keeps it for life.
 */
export const lookupEntry = (job: Pick<SyncJob, 'id' | 'sourceStoreId'>, sourceOrderId: string) => ({
  GSI2PK: lookups.sourceOrder(job.sourceStoreId, sourceOrderId),
  GSI2SK: lookups.sourceOrderJob(job.id),
});
