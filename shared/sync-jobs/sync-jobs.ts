import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { auditPut, SYSTEM, type Actor } from '../audit-log/audit-log.js';
import { ResourceMissingError, SyncJobNotRetryableError } from '../core/errors.js';
import { now, syncJobId } from '../core/ids.js';
import type { RoutedGroup } from '../domain/routing.js';
import type { SyncJobStatus } from '../domain/sync-job-status.js';
import type { ResellerLineItem, ResellerOrder } from '../domain/supplier-order.js';
import { dynamo } from '../dynamo/client.js';
import { keys, listSortKey, lists, lookups, pending } from '../dynamo/keys.js';
import { listPage } from '../dynamo/pagination.js';
import { getItem, isConditionFailure, TABLE, transactWrite, type Item } from '../dynamo/table.js';
import type { JobMessage } from './message.js';
import { syncJobFrom, syncJobItem, type SyncJob } from './record.js';

/**
 * Sync jobs and their state machine (SPEC 3.1, CONTRACT.md §6). Every move is one conditional
 * write on the job's `status` and `generation`; a manual retry bumps the generation, so a queue
 * message from an earlier enqueue (it carries its generation) can never move the job again.
 */

export type { JobMessage, SyncJob };

/**
 * A pending job whose message may be missing sits in the sparse GSI3, which is all the sweep
 * reads: after a failed enqueue, a manual retry and a deferral. A new job is not put there: its
 * message is sent right after the write, and only if that send fails is the job marked (two index
 * writes saved on every order; docs/design.md).
 */
const pendingIndex = (id: string, since: string) => ({ GSI3PK: pending.shardOf(id), GSI3SK: listSortKey(since, id) });
const prefixed = (index: { GSI3PK: string; GSI3SK: string }) => ({ ':shard': index.GSI3PK, ':since': index.GSI3SK });

// ---------- creation

export interface NewOrder {
  ownerId: string;
  resellerStoreId: string;
  resellerShopDomain: string;
  externalOrderId: string;
  /** The whole order; each job keeps the line items of its own group. */
  order: ResellerOrder;
  groups: RoutedGroup<ResellerLineItem>[];
}

/**
 * Writes one pending job per routed group, all or none. Job ids follow from (reseller store,
 * order id, position), so the first job doubles as the order's dedup record: a redelivery's put
 * fails its condition and the ids recorded on that job are answered instead, even if the
 * routing has changed since. Returns the jobs written, or the existing ids for a redelivery.
 */
export const createJobsForOrder = async (
  input: NewOrder,
): Promise<{ created: boolean; jobIds: string[]; jobs: SyncJob[] }> => {
  const createdAt = now();
  const jobIds = input.groups.map((_, position) => syncJobId(input.resellerStoreId, input.externalOrderId, position));
  const jobs: SyncJob[] = input.groups.map((group, position) => ({
    id: jobIds[position],
    ownerId: input.ownerId,
    resellerStoreId: input.resellerStoreId,
    sourceStoreId: group.sourceStoreId,
    status: 'pending',
    attempts: 0,
    generation: 1,
    externalOrderId: input.externalOrderId,
    resellerShopDomain: input.resellerShopDomain,
    order: { ...input.order, line_items: group.lineItems },
    orderJobIds: position === 0 ? jobIds : null,
    sourceOrderId: null,
    errorMessage: null,
    completedAt: null,
    failedAt: null,
    deadAt: null,
    createdAt,
    updatedAt: createdAt,
    fulfillments: {},
  }));

  const condition = 'attribute_not_exists(PK)';
  try {
    if (jobs.length === 1) {
      await dynamo.send(
        new PutCommand({ TableName: TABLE(), Item: syncJobItem(jobs[0]), ConditionExpression: condition }),
      );
    } else {
      await transactWrite(
        jobs.map((job) => ({ Put: { TableName: TABLE(), Item: syncJobItem(job), ConditionExpression: condition } })),
      );
    }
    return { created: true, jobIds, jobs };
  } catch (error) {
    if (!isConditionFailure(error) && !(error instanceof TransactionCanceledException)) throw error;
    const first = await loadJob(jobIds[0], true);
    // A cancelled transaction with no first job is a conflict, not a redelivery: let it surface.
    if (!first?.orderJobIds) throw error;
    return { created: false, jobIds: first.orderJobIds, jobs: [] };
  }
};

/** The order's jobs as they are now (for a redelivery, to re-enqueue what is still pending). */
export const loadJobs = async (ids: string[]) =>
  (await Promise.all(ids.map((id) => loadJob(id, true)))).filter((job) => job !== undefined);

/** A job by id, whoever owns it (workers, dead letters, reverse sync: their messages name it). */
export const loadJob = (id: string, consistent = false) => getItem(keys.syncJob(id), syncJobFrom, consistent);

/**
 * Puts pending jobs where the sweep finds them, with "pending since" now: after a failed enqueue,
 * and by the sweep itself when it enqueues them again (so a long backlog is not flooded with
 * duplicates). Answers, per job, whether it was still pending in that generation.
 */
export const markForSweep = (jobs: Pick<SyncJob, 'id' | 'generation'>[]) => {
  const at = now();
  return Promise.all(
    jobs.map(async (job) => {
      try {
        await dynamo.send(
          new UpdateCommand({
            TableName: TABLE(),
            Key: keys.syncJob(job.id),
            UpdateExpression: 'SET GSI3PK = :shard, GSI3SK = :since',
            ConditionExpression: '#status = :pending AND generation = :generation',
            ExpressionAttributeNames: { '#status': 'status' },
            ExpressionAttributeValues: {
              ':pending': 'pending',
              ':generation': job.generation,
              ...prefixed(pendingIndex(job.id, at)),
            },
          }),
        );
        return true;
      } catch (error) {
        // Claimed meanwhile: its message did get through.
        if (isConditionFailure(error)) return false;
        throw error;
      }
    }),
  );
};

// ---------- reads

/** The caller's job, or undefined: another owner's is as missing as an unknown id. */
const ownedSyncJob = async (ownerId: string, id: string) => {
  const job = id.startsWith('sj_') ? await loadJob(id) : undefined;
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

// ---------- the worker's moves

/**
 * pending/failed → processing, attempts + 1. `processing` is claimable too: it is what a worker
 * that died mid-job leaves behind, and its message comes back after the visibility timeout.
 * Two workers holding the same job is harmless because the platform call carries the job id as
 * idempotency key. Returns undefined when the message is stale (wrong generation, or the job
 * has already completed or died).
 */
export const claimJob = async (message: JobMessage): Promise<SyncJob | undefined> => {
  try {
    const out = await dynamo.send(
      new UpdateCommand({
        TableName: TABLE(),
        Key: keys.syncJob(message.jobId),
        UpdateExpression:
          'SET #status = :processing, attempts = attempts + :one, updatedAt = :now REMOVE GSI3PK, GSI3SK',
        ConditionExpression: 'generation = :generation AND #status IN (:pending, :processing, :failed)',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ':processing': 'processing',
          ':pending': 'pending',
          ':failed': 'failed',
          ':one': 1,
          ':now': now(),
          ':generation': message.generation,
        },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return out.Attributes && syncJobFrom(out.Attributes);
  } catch (error) {
    if (isConditionFailure(error)) return undefined;
    throw error;
  }
};

/**
 * A move out of `processing` by the worker holding the job. Undefined when another writer moved
 * it first (a second worker on the same job, whose platform call got the same order back).
 */
const moveFromProcessing = async (jobId: string, generation: number, update: string, values: Item) => {
  try {
    const out = await dynamo.send(
      new UpdateCommand({
        TableName: TABLE(),
        Key: keys.syncJob(jobId),
        UpdateExpression: update,
        ConditionExpression: 'generation = :generation AND #status = :processing',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ...values, ':processing': 'processing', ':generation': generation },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return out.Attributes && syncJobFrom(out.Attributes);
  } catch (error) {
    if (isConditionFailure(error)) return undefined;
    throw error;
  }
};

/** processing → completed, and the job becomes findable by its source order (GSI2) for fulfillments. */
export const completeJob = (job: SyncJob, generation: number, sourceOrderId: string) => {
  const at = now();
  return moveFromProcessing(
    job.id,
    generation,
    'SET #status = :completed, sourceOrderId = :orderId, completedAt = :at, updatedAt = :at, ' +
      'errorMessage = :null, failedAt = :null, GSI2PK = :lookup, GSI2SK = :self',
    {
      ':completed': 'completed',
      ':orderId': sourceOrderId,
      ':at': at,
      ':null': null,
      ':lookup': lookups.sourceOrder(job.sourceStoreId, sourceOrderId),
      ':self': lookups.sourceOrderJob(job.id),
    },
  );
};

/** processing → failed; SQS brings the message back after the visibility timeout. */
export const failJob = (job: SyncJob, generation: number, errorMessage: string) => {
  const at = now();
  return moveFromProcessing(
    job.id,
    generation,
    'SET #status = :failed, errorMessage = :message, failedAt = :at, updatedAt = :at',
    {
      ':failed': 'failed',
      ':message': errorMessage,
      ':at': at,
    },
  );
};

/** processing → pending again without counting as a failure: the platform asked us to wait (429). */
export const deferJob = (job: SyncJob, generation: number) => {
  const at = now();
  return moveFromProcessing(
    job.id,
    generation,
    'SET #status = :pending, updatedAt = :at, GSI3PK = :shard, GSI3SK = :since',
    {
      ':pending': 'pending',
      ':at': at,
      ...prefixed(pendingIndex(job.id, at)),
    },
  );
};

/**
 * → dead, with the reason, and a `sync_job.dead` audit entry in the same transaction. Used by the
 * DLQ handler (retries exhausted) and by the worker for failures no retry can heal.
 */
export const killJob = async (
  message: JobMessage,
  why: string | ((job: SyncJob) => string),
  from: SyncJobStatus[] = ['pending', 'processing', 'failed'],
) => {
  const job = await loadJob(message.jobId, true);
  if (!job || job.generation !== message.generation || !from.includes(job.status)) return false;
  const reason = typeof why === 'string' ? why : why(job);
  const at = now();
  try {
    await transactWrite([
      {
        Update: {
          TableName: TABLE(),
          Key: keys.syncJob(job.id),
          UpdateExpression:
            'SET #status = :dead, deadAt = :at, updatedAt = :at, errorMessage = :reason REMOVE GSI3PK, GSI3SK',
          ConditionExpression: 'generation = :generation AND #status = :current',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: {
            ':dead': 'dead',
            ':at': at,
            ':reason': reason,
            ':generation': job.generation,
            ':current': job.status,
          },
        },
      },
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
  const generation = job.generation + 1;
  try {
    await transactWrite([
      {
        Update: {
          TableName: TABLE(),
          Key: keys.syncJob(job.id),
          UpdateExpression:
            'SET #status = :pending, generation = :next, errorMessage = :null, failedAt = :null, deadAt = :null, ' +
            'updatedAt = :at, GSI3PK = :shard, GSI3SK = :since',
          ConditionExpression: 'generation = :generation AND #status = :current',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: {
            ':pending': 'pending',
            ':next': generation,
            ':null': null,
            ':at': at,
            ':generation': job.generation,
            ':current': job.status,
            ...prefixed(pendingIndex(job.id, at)),
          },
        },
      },
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
    generation,
    errorMessage: null,
    failedAt: null,
    deadAt: null,
    updatedAt: at,
  };
  return updated;
};
