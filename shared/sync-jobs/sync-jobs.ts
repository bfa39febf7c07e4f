import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { auditPut, type Actor } from '../audit-log/audit-log.js';
import { InvalidCursorError, ResourceMissingError, SyncJobNotRetryableError } from '../core/errors.js';
import { isId, now } from '../core/ids.js';
import type { SyncJobStatus } from '../domain/sync-job-status.js';
import { keys, lists } from '../dynamo/keys.js';
import { listPage, type Page } from '../dynamo/pagination.js';
import { batchGet, getItem, transactWrite } from '../dynamo/table.js';
import { attemptNumberOf, type Attempt } from './attempts.js';
import type { JobMessage } from './message.js';
import { moveItem, SETTLED } from './moves.js';
import { syncJobFrom, type SyncJob } from './record.js';
import { moveUpdate, type MoveRequest } from './state-machine.js';

/**
 * Sync jobs (SPEC 3.1, CONTRACT.md §6): reads and the manual retry (creation: shared/orders). The
 * moves of the machinery (worker, DLQ handler, reconciler) are in moves.ts; all of them come from
 * state-machine.ts.
 */

export type { JobMessage, SyncJob };

/** The jobs as they are now, in the order of `ids`; missing ones are skipped. */
export const loadJobs = (ids: string[]) => batchGet(ids.map(keys.syncJob), syncJobFrom);

/** A job by id, whoever owns it (workers, dead letters, reverse sync: their messages name it). */
export const loadJob = (id: string, consistent = false) => getItem(keys.syncJob(id), syncJobFrom, consistent);

// ---------- reads

/** The caller's job, or undefined: another owner's is as missing as an unknown id. */
const ownedSyncJob = async (ownerId: string, id: string) => {
  const job = isId('sj', id) ? await loadJob(id) : undefined;
  return job?.ownerId === ownerId ? job : undefined;
};

export const findSyncJob = async (ownerId: string, id: string) => {
  const job = await ownedSyncJob(ownerId, id);
  if (!job) throw new ResourceMissingError('sync_job', id);
  return job;
};

export const listSyncJobs = (
  ownerId: string,
  limit: number,
  startingAfter: string | undefined,
  filters: { status?: SyncJobStatus; resellerStoreId?: string },
) => {
  const { status, resellerStoreId } = filters;
  const filtered = status !== undefined || resellerStoreId !== undefined;
  return listPage({
    partition: lists.syncJobs(ownerId),
    from: syncJobFrom,
    limit,
    startingAfter,
    cursorItem: (id) => ownedSyncJob(ownerId, id),
    filter: filtered
      ? (job) =>
          (status === undefined || job.status === status) &&
          (resellerStoreId === undefined || job.resellerStoreId === resellerStoreId)
      : undefined,
  });
};

/**
 * A page of the job's attempt history, newest first (SPEC 8.1 rules, CONTRACT.md §6). The history
 * is on the job item, so every page is one GetItem. The cursor is an attempt id of this job; one
 * that has since dropped out of the kept 100 still marks its place (the page after it is empty).
 */
export const listAttempts = async (
  ownerId: string,
  id: string,
  limit: number,
  startingAfter: string | undefined,
): Promise<{ job: SyncJob; page: Page<Attempt> }> => {
  const job = await findSyncJob(ownerId, id);
  let newestFirst = [...job.attemptLog].reverse();
  if (startingAfter !== undefined) {
    const after = attemptNumberOf(job.id, startingAfter);
    // Numbers run 1, 2, … without gaps, so one above the last was never issued.
    if (after === undefined || after > (job.attemptLog.at(-1)?.number ?? 0)) throw new InvalidCursorError();
    newestFirst = newestFirst.filter((attempt) => attempt.number < after);
  }
  return { job, page: { data: newestFirst.slice(0, limit), hasMore: newestFirst.length > limit } };
};

// ---------- manual retry

/**
 * failed/dead → pending (SPEC 4.4): clears the error fields, keeps `attempts`, bumps the
 * generation and writes the `sync_job.retried` audit entry in the same transaction, conditional
 * on the status read, so of two concurrent retries exactly one succeeds.
 */
export const retryJob = async (ownerId: string, id: string, actor: Actor) => {
  const job = await findSyncJob(ownerId, id);
  if (job.status !== 'failed' && job.status !== 'dead') throw new SyncJobNotRetryableError(job.status);
  const at = now();
  const request: MoveRequest = {
    move: 'retry',
    job,
    at,
    remove: [...SETTLED, 'errorMessage', 'failedAt', 'deadAt'],
  };
  try {
    await transactWrite([
      moveItem(request),
      auditPut({ action: 'sync_job.retried', job, actor, metadata: { previousStatus: job.status } }),
    ]);
  } catch (error) {
    if (error instanceof TransactionCanceledException) {
      // Someone else moved it first (a concurrent retry): answer with what it is now.
      const current = await loadJob(job.id, true);
      throw new SyncJobNotRetryableError(current?.status ?? 'unknown');
    }
    throw error;
  }
  const updated: SyncJob = {
    ...job,
    status: 'pending',
    generation: moveUpdate(request).generation,
    errorMessage: null,
    failedAt: null,
    deadAt: null,
    updatedAt: at,
    resends: 0,
    waitUntil: null,
    throttledSince: null,
  };
  return updated;
};
