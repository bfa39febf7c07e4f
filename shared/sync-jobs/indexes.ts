import { isOpen, type SyncJobStatus } from '../domain/sync-job-status.js';
import { inFlight } from '../dynamo/keys.js';
import type { SyncJob } from './record.js';

/**
 * The index attributes of a sync job item, and how each state move changes them: the one answer
 * to "which index entries does this write touch?". Job creation (sync-jobs.ts) and every move
 * (state-machine.ts) take their index attributes from `indexChanges`, so no write can forget one.
 *
 * GSI3, open jobs (docs/design.md, "Reconciler"): a job that has not ended is in
 * `OPEN#<shard of owner>`, `<owner>#<createdAt>#<id>`. Its keys are set by the creating put, kept
 * through pending, processing and failed (no key changes, so claims, failures and deferrals write
 * nothing to the index), removed by the move to completed or dead, and set again by a manual retry.
 * DynamoDB writes an index entry only when its keys change, so setting them again costs nothing.
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
}

const GSI3 = ['GSI3PK', 'GSI3SK'];

const openEntry = (job: IndexedJob) => ({
  GSI3PK: inFlight.open.partition(job.ownerId),
  GSI3SK: inFlight.sortKey(job.ownerId, job.createdAt, job.id),
});

/** The index attributes to set and remove when `job` (in its current status) moves to `to`. */
export const indexChanges = (job: IndexedJob, to: SyncJobStatus): IndexChanges => {
  const changes: IndexChanges = { set: {}, remove: [] };
  const wasOpen = job.status !== null && isOpen(job.status);
  if (isOpen(to) && !wasOpen) Object.assign(changes.set, openEntry(job));
  if (!isOpen(to) && wasOpen) changes.remove.push(...GSI3);
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
