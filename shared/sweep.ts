import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from './aws/dynamodb.js';
import { now } from './ids.js';
import { logger } from './logger.js';
import { INDEX, keys, listSortKey, PENDING_SHARDS } from './store/keys.js';
import { batchGet, isConditionFailure, queryKeys, TABLE } from './store/table.js';
import type { SyncJob } from './sync-jobs.js';
import { enqueueJobs } from './sync-queue.js';

/**
 * The safety net under "no accepted order is left un-enqueued": jobs still `pending` well after
 * they were enqueued (the enqueue failed, or the function died between the write and the
 * enqueue) are enqueued again. Only the sparse pending index is read. Each swept job's
 * pending-since mark is moved to now, so a long queue backlog is not flooded with duplicates.
 */
export const sweepPendingJobs = async (olderThanSeconds: number) => {
  const cutoff = new Date(Date.now() - olderThanSeconds * 1000).toISOString();
  const shards = Array.from({ length: PENDING_SHARDS }, (_, shard) => sweepShard(`PENDING#${shard}`, cutoff));
  const requeued = (await Promise.all(shards)).reduce((sum, n) => sum + n, 0);
  if (requeued) logger.warn('sweep re-enqueued pending jobs', { count: requeued });
  return requeued;
};

const sweepShard = async (shard: string, cutoff: string) => {
  let requeued = 0;
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await queryKeys({
      index: INDEX.pending,
      pkName: 'GSI3PK',
      skName: 'GSI3SK',
      pk: shard,
      before: cutoff,
      limit: 100,
      forward: true,
      exclusiveStartKey: startKey,
    });
    const jobs = (await batchGet<SyncJob>(page.keys)).filter((job) => job.status === 'pending');
    const marked = await Promise.all(jobs.map((job) => markSwept(job)));
    const due = jobs.filter((_, i) => marked[i]);
    if (due.length) await enqueueJobs(due.map((job) => ({ jobId: job.id, generation: job.generation })));
    requeued += due.length;
    startKey = page.lastKey;
  } while (startKey);
  return requeued;
};

const markSwept = async (job: SyncJob) => {
  try {
    await dynamo.send(
      new UpdateCommand({
        TableName: TABLE(),
        Key: keys.syncJob(job.id),
        UpdateExpression: 'SET GSI3SK = :since',
        ConditionExpression: '#status = :pending AND generation = :generation',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':since': listSortKey(now(), job.id), ':pending': 'pending', ':generation': job.generation },
      }),
    );
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
};
