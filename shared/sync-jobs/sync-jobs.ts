import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { auditPut, SYSTEM, type Actor } from '../audit-log/audit-log.js';
import { ResourceMissingError, SyncJobNotRetryableError } from '../core/errors.js';
import { isId, now } from '../core/ids.js';
import type { SyncJobStatus } from '../domain/sync-job-status.js';
import { dynamo } from '../dynamo/client.js';
import { inFlight, keys, lists, lookups } from '../dynamo/keys.js';
import { listPage, type ListSource } from '../dynamo/pagination.js';
import { batchGet, getItem, isConditionFailure, TABLE, transactWrite } from '../dynamo/table.js';
import { isListedState } from './indexes.js';
import type { JobMessage } from './message.js';
import { syncJobFrom, type SyncJob } from './record.js';
import { moveUpdate, type MoveRequest } from './state-machine.js';

/**
 * Sync jobs (SPEC 3.1, CONTRACT.md §6): creation, reads, and the moves of state-machine.ts, each
 * one conditional write on the job's `status` and `generation`.
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

export interface SyncJobFilters {
  status?: SyncJobStatus;
  resellerStoreId?: string;
}

/**
 * Where a filtered list of jobs is read (docs/design.md, "Lists"). A failed or dead job is in a
 * list of its state (per owner, per store), so those filters read only matches. The other states
 * have no list of their own (it would cost every order index writes): `pending` and `processing`
 * read the owner's open jobs (GSI3, the reconciler's), which are few, and keep those in the state
 * (and store) asked for; `completed` reads its owner's or store's list, most of which it is.
 */
export const syncJobListSource = (ownerId: string, filters: SyncJobFilters): ListSource => {
  const { status, resellerStoreId: store } = filters;
  if (status !== undefined && isListedState(status)) {
    return store === undefined
      ? { index: 'stateLists', partition: lists.syncJobsIn(ownerId, status), exact: true }
      : { index: 'storeStateLists', partition: lists.storeSyncJobsIn(store, status), exact: true };
  }
  if (status === 'pending' || status === 'processing') {
    const partition = inFlight.open.partition(ownerId);
    return { index: 'inFlight', partition, prefix: inFlight.ownerPrefix(ownerId), exact: false, small: true };
  }
  const exact = status === undefined;
  return store === undefined
    ? { index: 'lists', partition: lists.syncJobs(ownerId), exact }
    : { index: 'storeLists', partition: lists.storeSyncJobs(store), exact };
};

/**
 * A page of the owner's jobs, filtered. A cursor must be a job of the list's owner and reseller
 * store (which never change); its status need not match: jobs change state while someone pages,
 * and a job that left the filtered state still marks its place.
 */
export const listSyncJobs = (
  ownerId: string,
  limit: number,
  startingAfter: string | undefined,
  filters: SyncJobFilters,
) => {
  const { status, resellerStoreId } = filters;
  const inStore = (job: SyncJob) => resellerStoreId === undefined || job.resellerStoreId === resellerStoreId;
  return listPage({
    source: syncJobListSource(ownerId, filters),
    ownerId,
    from: syncJobFrom,
    limit,
    startingAfter,
    cursorItem: async (id) => {
      const job = await ownedSyncJob(ownerId, id);
      return job && inStore(job) ? job : undefined;
    },
    matches: (job) => (status === undefined || job.status === status) && inStore(job),
  });
};

// ---------- moves

/**
 * Runs one move of state-machine.ts as a conditional UpdateItem; the job as it is after the move,
 * or undefined when its condition failed (another writer moved the job first, or the message is
 * stale: an older generation, or a job that has ended).
 */
const move = async (request: MoveRequest): Promise<SyncJob | undefined> => {
  const { generation: _next, ...update } = moveUpdate(request);
  try {
    const out = await dynamo.send(new UpdateCommand({ TableName: TABLE(), ...update, ReturnValues: 'ALL_NEW' }));
    return out.Attributes && syncJobFrom(out.Attributes);
  } catch (error) {
    if (isConditionFailure(error)) return undefined;
    throw error;
  }
};

/** A move as one item of a transaction (with its audit entry). */
const moveItem = (request: MoveRequest) => {
  const { generation: _next, ...update } = moveUpdate(request);
  return { Update: { TableName: TABLE(), ...update } };
};

/**
 * pending/processing/failed → processing, attempts + 1. Returns undefined when the message is
 * stale. Two workers holding the same job is harmless: the platform call carries the job id as
 * idempotency key.
 */
export const claimJob = (message: JobMessage) =>
  move({ move: 'claim', job: { id: message.jobId, generation: message.generation }, at: now(), add: { attempts: 1 } });

/** processing → completed, and the job becomes findable by its source order (GSI2) for fulfillments. */
export const completeJob = (job: SyncJob, sourceOrderId: string) => {
  const at = now();
  return move({
    move: 'complete',
    job,
    at,
    set: {
      sourceOrderId,
      completedAt: at,
      GSI2PK: lookups.sourceOrder(job.sourceStoreId, sourceOrderId),
      GSI2SK: lookups.sourceOrderJob(job.id),
    },
    remove: [...SETTLED, ...ERROR_FIELDS],
  });
};

/** What a job that has ended no longer needs. */
const SETTLED = ['resends', 'waitUntil'];
/**
 * A failure's fields, cleared by removing them rather than writing null (the reader takes both as
 * null): the completion rewrites the whole item, billed per started KB, and it is close to one.
 */
const ERROR_FIELDS = ['errorMessage', 'failedAt'];

/** processing → failed; SQS brings the message back after `waitSeconds`. */
export const failJob = (job: SyncJob, errorMessage: string, waitSeconds: number) => {
  const at = now();
  return move({
    move: 'fail',
    job,
    at,
    set: { errorMessage, failedAt: at, waitUntil: secondsFrom(at, waitSeconds) },
    remove: ['resends'],
  });
};

/**
 * processing → pending without counting as a failure: the platform asked us to wait (429). The
 * job takes a new generation, so the message that brought it here (and any other) is stale; the
 * caller sends the one fresh message, delayed by `delaySeconds`. Answers the job after the move.
 */
export const deferJob = (job: SyncJob, delaySeconds: number) => {
  const at = now();
  return move({ move: 'defer', job, at, set: { waitUntil: secondsFrom(at, delaySeconds) }, remove: ['resends'] });
};

/**
 * → pending under a new generation, because the job stayed past its lease with no move: the
 * reconciler sends the fresh message. Conditional on the state the reconciler read, so a job that
 * moved meanwhile is left alone.
 */
export const resendJob = (job: SyncJob) =>
  move({ move: 'resend', job, at: now(), add: { resends: 1 }, remove: ['waitUntil'] });

const secondsFrom = (at: string, seconds: number) => new Date(Date.parse(at) + seconds * 1000).toISOString();

/**
 * → dead, with the reason, and a `sync_job.dead` audit entry in the same transaction. From the
 * state the caller read (the worker's `processing`, or what the DLQ handler or the reconciler
 * found); false when the job moved meanwhile.
 */
export const killJob = async (job: SyncJob, reason: string) => {
  const at = now();
  try {
    await transactWrite([
      moveItem({ move: 'kill', job, at, set: { deadAt: at, errorMessage: reason }, remove: SETTLED }),
      auditPut({
        action: 'sync_job.dead',
        job,
        actor: SYSTEM,
        metadata: { previousStatus: job.status, reason, attempts: job.attempts },
      }),
    ]);
    return true;
  } catch (error) {
    if (error instanceof TransactionCanceledException) return false;
    throw error;
  }
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
    remove: [...SETTLED, ...ERROR_FIELDS, 'deadAt'],
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
  };
  return updated;
};
